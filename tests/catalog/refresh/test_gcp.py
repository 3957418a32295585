"""GCP refresher with the real client classes as specs and the SDK's own pagers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest
from google.api_core import exceptions as gexc
from google.cloud.billing_v1 import CloudCatalogClient, ListSkusRequest, ListSkusResponse
from google.cloud.billing_v1.services.cloud_catalog import pagers as sku_pagers
from google.cloud.compute_v1 import (
    AcceleratorTypeAggregatedList,
    AcceleratorTypesClient,
    AggregatedListAcceleratorTypesRequest,
    AggregatedListMachineTypesRequest,
    MachineTypeAggregatedList,
    MachineTypesClient,
)
from google.cloud.compute_v1.services.accelerator_types import pagers as acc_pagers
from google.cloud.compute_v1.services.machine_types import pagers as mt_pagers

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh import (
    Backoff,
    MissingCredentialsError,
    RefreshError,
    RefreshOptions,
)
from recommender.catalog.refresh.gcp import MACHINE_FILTER, GcpClients, GcpRefresher
from tests.catalog.refresh.conftest import fixture

REGION = "us-central1"


def _pager(pager_cls: Any, request_cls: Any, response_cls: Any, name: str) -> Mock:
    """A ``side_effect`` returning the SDK's own pager over the fixture's pages."""
    pages = [response_cls.from_json(json.dumps(p)) for p in fixture(name)["pages"]]
    rest = iter(pages[1:])
    next_page = Mock(side_effect=lambda request, **kwargs: next(rest))

    def call(request: dict[str, Any], retry: Any = None, timeout: Any = None) -> Any:
        assert timeout is not None and retry is not None  # bounded, with GCP's own retry
        return pager_cls(next_page, request_cls(request), pages[0], retry=retry, timeout=timeout)

    return Mock(side_effect=call)


def _clients(*, throttle_skus: int = 0) -> GcpClients:
    machine_types = Mock(spec=MachineTypesClient)
    machine_types.aggregated_list = _pager(
        mt_pagers.AggregatedListPager,
        AggregatedListMachineTypesRequest,
        MachineTypeAggregatedList,
        "gcp_machine_types.json",
    )
    accelerator_types = Mock(spec=AcceleratorTypesClient)
    accelerator_types.aggregated_list = _pager(
        acc_pagers.AggregatedListPager,
        AggregatedListAcceleratorTypesRequest,
        AcceleratorTypeAggregatedList,
        "gcp_accelerator_types.json",
    )
    catalog = Mock(spec=CloudCatalogClient)
    skus = _pager(sku_pagers.ListSkusPager, ListSkusRequest, ListSkusResponse, "gcp_skus.json")
    throttle = gexc.ResourceExhausted("Quota exceeded for quota metric 'Read requests'")
    effects = iter([throttle] * throttle_skus + [skus.side_effect])

    def list_skus(**kwargs: Any) -> Any:
        effect = next(effects)
        if isinstance(effect, Exception):
            raise effect
        return effect(**kwargs)

    catalog.list_skus.side_effect = list_skus
    return GcpClients(machine_types, accelerator_types, catalog, "demo-project")


def _by(fetched: Any) -> dict[tuple[str, str, int], Any]:
    return {key: fetched.quotes[key] for key in fetched.machines}


def test_refresh_prices_host_plus_gpus_per_region(
    names: AcceleratorNames, backoff: Backoff, sleeps: list[float]
) -> None:
    clients = _clients(throttle_skus=1)
    fetched = GcpRefresher(clients).fetch(names, RefreshOptions(backoff=backoff))

    request = clients.machine_types.aggregated_list.call_args.kwargs["request"]
    assert request == {"project": "demo-project", "filter": MACHINE_FILTER}
    assert len(sleeps) == 1  # the billing catalog was throttled once, then answered
    assert fetched.regions == {REGION, "asia-east1"}  # asia-east1 answered, with no GPUs
    assert "UNREACHABLE" in fetched.failed["europe-west4"]

    quotes = _by(fetched)
    g2 = quotes[("g2-standard-4", "L4", 1)][REGION]
    # 4 vCPUs x 0.0248583 + 16 GiB x 0.0029144 + 1 x L4 0.56004 (USD/h).
    assert g2.on_demand == pytest.approx(4 * 0.0248583 + 16 * 0.0029144 + 0.56004)
    assert g2.spot == pytest.approx(4 * 0.009943 + 16 * 0.0011657 + 0.224)
    assert g2.zones == ("us-central1-a", "us-central1-b")
    a2 = quotes[("a2-ultragpu-1g", "A100-SXM4-80GB", 1)][REGION]
    assert a2.on_demand == pytest.approx(12 * 0.031611 + 170 * 0.004237 + 3.928)
    assert a2.spot is None  # no spot SKU for A2 in the fixture
    machine = fetched.machines[("a2-ultragpu-1g", "A100-SXM4-80GB", 1)]
    assert machine.family == "a2-ultragpu" and machine.local_disk_gb == 375.0


def test_n1_hosts_take_attached_gpus_within_gcp_limits(
    names: AcceleratorNames, backoff: Backoff
) -> None:
    fetched = GcpRefresher(_clients()).fetch(names, RefreshOptions(backoff=backoff))
    t4 = {(k[0], k[2]) for k in fetched.machines if k[1] == "T4"}
    # 1 or 2 T4s: hosts up to 48 vCPUs; 4 T4s: up to 96 vCPUs / 624 GiB.
    assert t4 == {
        ("n1-standard-4", 1),
        ("n1-standard-8", 1),
        ("n1-standard-4", 2),
        ("n1-standard-8", 2),
        ("n1-standard-4", 4),
        ("n1-standard-8", 4),
        ("n1-highmem-96", 4),
    }
    quote = fetched.quotes[("n1-standard-4", "T4", 1)][REGION]
    assert quote.zones == ("us-central1-a", "us-central1-c")
    assert quote.on_demand == pytest.approx(4 * 0.031611 + 15 * 0.004237 + 0.35)
    v100 = fetched.machines[("n1-standard-4", "V100-SXM2-16GB", 8)]
    assert v100.family == "n1-v100"
    assert fetched.quotes[v100.key][REGION].on_demand == pytest.approx(
        4 * 0.031611 + 15 * 0.004237 + 8 * 2.48
    )
    assert not any(k[1] == "T4" and "vws" in k[0] for k in fetched.machines)


def test_unknown_gpu_is_reported_not_dropped(names: AcceleratorNames, backoff: Backoff) -> None:
    # accelerators.yaml has an RTX PRO 6000 sheet now: leave it out so that G4's GPU is unknown.
    known = [a for a in names.accelerators if a.id != "RTX-PRO-6000-Server"]
    fetched = GcpRefresher(_clients()).fetch(
        AcceleratorNames(known), RefreshOptions(backoff=backoff)
    )
    skipped = {s.instance_type: s for s in fetched.skipped}
    assert skipped["g4-standard-48"].reason == "unknown-accelerator"
    assert skipped["g4-standard-48"].regions == (REGION,)
    assert fetched.unknown_accelerators == ["nvidia-rtx-pro-6000"]


def test_regions_option_limits_the_refresh(names: AcceleratorNames, backoff: Backoff) -> None:
    fetched = GcpRefresher(_clients()).fetch(
        names, RefreshOptions(regions=("asia-east1",), backoff=backoff)
    )
    assert fetched.regions == {"asia-east1"} and not fetched.machines and not fetched.failed


def test_throttled_to_death_is_a_clear_error(names: AcceleratorNames, backoff: Backoff) -> None:
    with pytest.raises(RefreshError, match="still throttled after 3 attempts"):
        GcpRefresher(_clients(throttle_skus=3)).fetch(names, RefreshOptions(backoff=backoff))


@pytest.mark.parametrize("metadata", [False, True])
def test_missing_credentials_fail_fast(
    names: AcceleratorNames, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metadata: bool
) -> None:
    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud ADC file there
    assert os.environ["GCE_METADATA_HOST"].startswith("127.0.0.1")  # set by tests/conftest.py
    # no wall-clock limit (the suite runs on busy machines): the metadata host is a closed
    # loopback port, so a chain that asked it would fail at once or name it in the error
    with pytest.raises(MissingCredentialsError, match="GOOGLE_APPLICATION_CREDENTIALS"):
        GcpRefresher().fetch(names, RefreshOptions(instance_metadata=metadata))
