"""Azure refresher: Mock(spec=ResourceSkusOperations) with real SKU models, and the Retail
Prices API served by httpx.MockTransport."""

from __future__ import annotations

from typing import Any
from unittest.mock import Mock
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from azure.mgmt.compute.models import ResourceSku
from azure.mgmt.compute.operations import ResourceSkusOperations

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh import Backoff, MissingCredentialsError, RefreshOptions
from recommender.catalog.refresh.azure import AzureClients, AzureRefresher
from recommender.catalog.refresh.azure_prices import parse_items
from tests.catalog.refresh.conftest import fixture

HOST = "prices.azure.com"


class RetailPrices:
    """The Retail Prices API as ``httpx.MockTransport`` serves it from the fixture pages.

    eastus answers 429 once (then pages 1 and 2); westeurope answers 429 every time.
    """

    def __init__(self) -> None:
        self.pages = fixture("azure_retail_prices_eastus.json")["pages"]
        self.requests: list[httpx.Request] = []
        self.throttled_once = False

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        assert request.url.host == HOST and request.url.path == "/api/retail/prices"
        query = parse_qs(urlsplit(str(request.url)).query)
        flt = query["$filter"][0]
        assert "serviceName eq 'Virtual Machines'" in flt and "priceType eq 'Consumption'" in flt
        if "armRegionName eq 'westeurope'" in flt:
            return httpx.Response(429, headers={"Retry-After": "2"}, json={"error": "throttled"})
        if not self.throttled_once:
            self.throttled_once = True
            return httpx.Response(429, json={"error": "throttled"})
        if "$skip" in query:
            return httpx.Response(200, json=self.pages[1])
        page = dict(self.pages[0])
        page["NextPageLink"] = str(request.url.copy_merge_params({"$skip": "100"}))
        return httpx.Response(200, json=page)


def _skus(flt: str | None = None) -> list[ResourceSku]:
    items = fixture("azure_resource_skus.json")["value"]
    if flt:
        region = flt.split("'")[1]
        items = [i for i in items if i["locations"] == [region]]
    return [ResourceSku(i) for i in items]


def _clients(api: RetailPrices) -> AzureClients:
    skus = Mock(spec=ResourceSkusOperations)
    skus.list.side_effect = lambda filter=None: iter(_skus(filter))
    return AzureClients(skus, httpx.Client(transport=httpx.MockTransport(api)))


def test_refresh_maps_sizes_and_prices(
    names: AcceleratorNames, backoff: Backoff, sleeps: list[float]
) -> None:
    api = RetailPrices()
    fetched = AzureRefresher(_clients(api)).fetch(names, RefreshOptions(backoff=backoff))

    assert fetched.regions == {"eastus"}
    assert "still throttled" in fetched.failed["westeurope"]
    assert sleeps == [1.0, 2.0, 2.0]  # eastus once; westeurope twice, honouring Retry-After
    by_name = {m.name: m for m in fetched.machines.values()}
    t4 = by_name["Standard_NC4as_T4_v3"]
    assert (t4.accelerator, t4.gpus, t4.vcpus, t4.memory_gib) == ("T4", 1, 4.0, 28.0)
    assert t4.local_disk_gb == 176.0 and t4.family == "NCasT4_v3"
    quote = fetched.quotes[t4.key]["eastus"]
    assert (quote.on_demand, quote.spot) == (0.526, 0.0789)  # latest Linux price, spot meter
    a100 = by_name["Standard_ND96amsr_A100_v4"]
    assert (a100.accelerator, a100.gpus) == ("A100-SXM4-80GB", 8)
    assert fetched.quotes[a100.key]["eastus"].on_demand == 32.77
    assert by_name["Standard_NC64as_T4_v3"].gpus == 4  # from page 2 of the prices
    assert "Standard_D4s_v5" not in by_name
    assert any("NotAvailableForSubscription" in n and "eastus (1)" in n for n in fetched.notes)


def test_unknown_and_fractional_gpus_are_reported(
    names: AcceleratorNames, backoff: Backoff
) -> None:
    fetched = AzureRefresher(_clients(RetailPrices())).fetch(names, RefreshOptions(backoff=backoff))
    skipped = {s.instance_type: s for s in fetched.skipped}
    assert skipped["Standard_NG32ads_V620_v1"].reason == "unknown-accelerator"
    assert skipped["Standard_NG32ads_V620_v1"].regions == ("eastus",)
    assert skipped["Standard_NV6ads_A10_v5"].reason == "fractional-gpu"
    assert fetched.unknown_accelerators == ["Standard_NG32ads_V620_v1"]


def test_retail_requests_are_paginated_and_filtered(
    names: AcceleratorNames, backoff: Backoff
) -> None:
    api = RetailPrices()
    AzureRefresher(_clients(api)).fetch(names, RefreshOptions(regions=("eastus",), backoff=backoff))
    east = [r for r in api.requests if "eastus" in str(r.url)]
    assert len(east) == 3  # throttled, page 1, NextPageLink page 2
    flt = parse_qs(urlsplit(str(east[1].url)).query)["$filter"][0]
    assert "armRegionName eq 'eastus'" in flt
    assert "armSkuName eq 'Standard_NC4as_T4_v3' or" in flt
    assert not any("westeurope" in str(r.url) for r in api.requests)


def test_parse_items_skips_windows_low_priority_and_devtest() -> None:
    items: list[dict[str, Any]] = fixture("azure_retail_prices_eastus.json")["pages"][0]["Items"]
    assert parse_items(items) == {
        ("Standard_NC4as_T4_v3", False): 0.526,
        ("Standard_NC4as_T4_v3", True): 0.0789,
    }


def test_missing_subscription_fails_fast(
    names: AcceleratorNames, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    with pytest.raises(MissingCredentialsError, match="AZURE_SUBSCRIPTION_ID"):
        AzureRefresher().fetch(names, RefreshOptions(instance_metadata=False))


def test_missing_credentials_never_ask_managed_identity(
    names: AcceleratorNames, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_TENANT_ID", "AZURE_USERNAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", "00000000-0000-0000-0000-000000000000")
    import azure.identity._credentials.default as default_module

    managed = Mock(side_effect=AssertionError("managed identity was tried"))
    monkeypatch.setattr(default_module, "ManagedIdentityCredential", managed)
    with pytest.raises(MissingCredentialsError, match="AZURE_CLIENT_ID") as info:
        AzureRefresher().fetch(names, RefreshOptions(instance_metadata=False))
    assert "az login" in str(info.value)
    managed.assert_not_called()
