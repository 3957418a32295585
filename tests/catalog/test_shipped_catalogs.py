"""Integrity suite over the catalogs we ship (gpuhunt style): they load, hold what the product
promises, agree with their source CSVs, and are exactly what the importer makes of them."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from recommender.catalog import Catalog, InstanceType, Problem, validate_catalog
from recommender.catalog.fractions import fraction_id, whole_device_id
from recommender.catalog.skypilot import ImportResult, import_skypilot

from ..conftest import CATALOG_DIR

SOURCES = CATALOG_DIR / "sources" / "skypilot"

MUST_HAVE: dict[str, dict[str, list[str]]] = {
    "gcp": {
        "a2-ultragpu": [f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)],
        "g2-standard": [f"g2-standard-{n}" for n in (4, 8, 12, 16, 24, 32, 48, 96)],
        "a2-highgpu": [f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)],
        "a3-highgpu": [f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)],
        "n1-t4": ["n1-standard-4", "n1-standard-8", "n1-highmem-8"],
        "n1-v100": ["n1-standard-8", "n1-highmem-8"],
    },
    "azure": {
        "NDm_A100_v4": ["Standard_ND96amsr_A100_v4"],
        "NCasT4_v3": [f"Standard_NC{n}as_T4_v3" for n in (4, 8, 16, 64)],
        "NC_A100_v4": ["Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"],
        "ND_H100_v5": ["Standard_ND96isr_H100_v5"],
    },
    "aws": {
        "g4dn": ["g4dn.xlarge", "g4dn.12xlarge"],
        "g5": ["g5.xlarge", "g5.48xlarge"],
        "g6": ["g6.xlarge", "g6.48xlarge"],
        "g6e": ["g6e.xlarge", "g6e.48xlarge"],
        "p3": ["p3.2xlarge", "p3.16xlarge"],
        "p4d": ["p4d.24xlarge"],
        "p4de": ["p4de.24xlarge"],
        "p5": ["p5.48xlarge"],
        "p5en": ["p5en.48xlarge"],
        "inf2": ["inf2.xlarge", "inf2.8xlarge", "inf2.24xlarge", "inf2.48xlarge"],
        "trn1": ["trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge"],
        "trn2": ["trn2.48xlarge"],
        "p6-b200": ["p6-b200.48xlarge"],
        "p6-b300": ["p6-b300.48xlarge"],
        "g7e": [f"g7e.{s}" for s in ("2xlarge", "4xlarge", "8xlarge", "12xlarge", "48xlarge")],
        "gr6": ["gr6.4xlarge", "gr6.8xlarge"],
        "dl1": ["dl1.24xlarge"],
        "g4ad": ["g4ad.xlarge", "g4ad.16xlarge"],
    },
}
MUST_HAVE["aws"]["g4dn"] += [f"g4dn.{s}" for s in ("2xlarge", "4xlarge", "8xlarge", "16xlarge")]
MUST_HAVE["aws"]["g5"] += [f"g5.{s}" for s in ("2xlarge", "4xlarge", "8xlarge", "24xlarge")]
MUST_HAVE["aws"]["g6"] += [f"g6.{s}" for s in ("4xlarge", "8xlarge", "16xlarge", "24xlarge")]
MUST_HAVE["aws"]["g6e"] += [f"g6e.{s}" for s in ("2xlarge", "4xlarge", "8xlarge", "24xlarge")]
MUST_HAVE["azure"].update(
    {
        "NC_H100_v5": ["Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"],
        "NVadsA10_v5": ["Standard_NV36ads_A10_v5", "Standard_NV36adms_A10_v5"],
        "ND_GB200_v6": ["Standard_ND128isr_NDR_GB200_v6"],
        "ND_MI300X_v5": ["Standard_ND96is_MI300X_v5"],
    }
)
MUST_HAVE["gcp"].update(
    {
        "tpu-v5e": ["tpu-v5litepod-1", "tpu-v5litepod-8", "tpu-v5litepod-256"],
        "tpu-v5p": ["tpu-v5p-8", "tpu-v5p-128"],
        "tpu-v6e": ["tpu-v6e-1", "tpu-v6e-8", "tpu-v6e-256"],
    }
)
# Accelerators with a spec sheet but no instance in the shipped data (kept for name
# resolution of what users run elsewhere: on-prem cards, other clouds' PCIe variants).
DELIBERATELY_UNUSED = {"V100-PCIe-32GB", "A100-PCIe-40GB", "H100-PCIe-80GB"}
# The source leaves on-demand empty here (catalogs/sources/skypilot/README.md); spot only.
NO_ON_DEMAND_IN_SOURCE = {("g6e", "ap-northeast-3")}
NO_ON_DEMAND_ANYWHERE = {"trn2"}  # "empty on-demand for every trn2 row" (README there)


def _instances(catalog: Catalog, cloud: str) -> Iterator[tuple[str, InstanceType]]:
    for fam in catalog.clouds[cloud].families:
        for inst in fam.instances:
            yield fam.name, inst


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return validate_catalog(CATALOG_DIR)


def test_shipped_catalogs_load_without_errors(catalog: Catalog, problems: list[Problem]) -> None:
    assert set(catalog.clouds) == {"aws", "azure", "gcp"}
    assert [p for p in problems if p.severity == "error"] == []


@pytest.mark.parametrize("cloud", sorted(MUST_HAVE))
def test_must_have_instances_are_priced_in_their_regions(catalog: Catalog, cloud: str) -> None:
    have: dict[tuple[str, str], list[InstanceType]] = {}
    for fam, inst in _instances(catalog, cloud):
        have.setdefault((fam, inst.name), []).append(inst)
    for fam, names in MUST_HAVE[cloud].items():
        for name in names:
            assert (fam, name) in have, f"{cloud} {fam} {name} missing"
            for inst in have[(fam, name)]:
                assert inst.prices, name
                for p in inst.prices:
                    if (
                        fam,
                        p.region,
                    ) not in NO_ON_DEMAND_IN_SOURCE and fam not in NO_ON_DEMAND_ANYWHERE:
                        assert p.on_demand, f"{name} has no on-demand price in {p.region}"


def _source_regions(files: list[str], instance_type: str) -> set[str]:
    """Regions where ``instance_type`` has any price in the raw CSVs (AWS local zones out)."""
    regions = set()
    for name in files:
        with (SOURCES / name).open(newline="") as fh:
            for row in csv.DictReader(fh):
                zone = row.get("AvailabilityZone") or ""
                if re.fullmatch(r"\w+-\w+\d-az\d+", zone):
                    continue  # an AWS local zone (use1-atl2-az1)
                if row["InstanceType"] == instance_type and (row["Price"] or row["SpotPrice"]):
                    regions.add(row["Region"])
    return regions


@pytest.mark.parametrize(
    ("cloud", "files", "instance_type"),
    [
        ("aws", ["aws_gpu_vms.csv", "aws_gpu_vms_more.csv"], "p4d.24xlarge"),
        ("aws", ["aws_gpu_vms.csv", "aws_gpu_vms_more.csv"], "g4dn.12xlarge"),
        ("aws", ["aws_gpu_vms.csv", "aws_gpu_vms_more.csv"], "p5en.48xlarge"),
        ("azure", ["azure_gpu_vms_allregions_thirdparty_anycloud.csv"], "Standard_NC4as_T4_v3"),
        (
            "azure",
            ["azure_gpu_vms_allregions_thirdparty_anycloud.csv"],
            "Standard_ND96amsr_A100_v4",
        ),
        ("azure", ["azure_gpu_vms_allregions_thirdparty_anycloud.csv"], "Standard_NC40ads_H100_v5"),
        ("azure", ["azure_gpu_vms_allregions_thirdparty_anycloud.csv"], "Standard_NV36adms_A10_v5"),
        (
            "azure",
            ["azure_gpu_vms_2026_thirdparty_anycloud.csv"],
            "Standard_ND128isr_NDR_GB200_v6",
        ),
        ("aws", ["aws_gpu_vms_2026.csv"], "g7e.48xlarge"),
        ("aws", ["aws_gpu_vms_2026.csv"], "g6f.large"),
        ("gcp", ["gcp_gpu_vms.csv"], "a2-ultragpu-8g"),
        ("gcp", ["gcp_gpu_vms.csv"], "g2-standard-4"),
    ],
)
def test_every_region_of_the_source_is_in_the_catalog(
    catalog: Catalog, cloud: str, files: list[str], instance_type: str
) -> None:
    (inst,) = [i for _, i in _instances(catalog, cloud) if i.name == instance_type]
    assert {p.region for p in inst.prices} == _source_regions(files, instance_type)


def test_every_accelerator_is_used_or_deliberately_unused(catalog: Catalog) -> None:
    used = {
        fraction_id(i.accelerator, i.gpu_fraction) if i.gpu_fraction else i.accelerator
        for c in catalog.clouds
        for _, i in _instances(catalog, c)
    }
    unused = {a.id for a in catalog.accelerators} - used
    assert unused == DELIBERATELY_UNUSED
    assert used <= {a.id for a in catalog.accelerators}


def test_g2_standard_4_in_us_central1(catalog: Catalog) -> None:
    table = catalog.offers
    index = table.mask(clouds=["gcp"], regions=["us-central1"], spot=False).nonzero()[0]
    (offer,) = [o for o in table.offers(index) if o.instance_type == "g2-standard-4"]
    assert (offer.accelerator, offer.gpus) == ("L4", 1)
    assert offer.price_per_hour == pytest.approx(0.70683)


def test_spot_is_below_on_demand_everywhere(catalog: Catalog) -> None:
    for cloud in catalog.clouds:
        for _, inst in _instances(catalog, cloud):
            for p in inst.prices:
                if p.spot is not None and p.on_demand is not None:
                    assert p.spot < p.on_demand, (cloud, inst.name, p.region)


def test_validate_reports_the_surviving_quirks_as_warnings(problems: list[Problem]) -> None:
    assert problems and all(p.severity == "warning" for p in problems)
    split = [p for p in problems if p.check == "price-outlier" and "a3-highgpu-8g" in p.message]
    assert len(split) == 1 and split[0].file.endswith("gcp.yaml") and split[0].line
    assert "us-central1" in split[0].message and "us-east4" in split[0].message
    inversions = [p.message for p in problems if p.check == "price-inversion"]
    assert any(
        "A100-SXM4-80GB is cheaper per GPU than the lesser A100-SXM4-40GB" in m for m in inversions
    )


def test_every_file_says_where_its_data_came_from(catalog: Catalog) -> None:
    for cloud, cat in catalog.clouds.items():
        assert cat.source.url and cat.source.retrieved, cloud
        assert cat.source.note and "sha256" in cat.source.note
        head = (CATALOG_DIR / f"{cloud}.yaml").read_text().split("schema_version")[0]
        assert "import-skypilot" in head
    for dev in catalog.edge_devices:
        assert dev.source.name and (dev.source.url or dev.source.note), dev.id


def test_edge_devices(catalog: Catalog) -> None:
    ids = {d.id for d in catalog.edge_devices}
    assert {
        "jetson-agx-orin-64gb",
        "jetson-orin-nano-8gb",
        "hailo-8-m2",
        "coral-usb-accelerator",
    } <= ids
    for dev in catalog.edge_devices:
        assert "int8" in dev.precisions and dev.power_w_min <= dev.power_w_max


@pytest.fixture(scope="module")
def shipped_import(catalog: Catalog) -> ImportResult:
    return import_skypilot(SOURCES, names=catalog.names)


def test_every_source_row_is_imported_or_skipped_with_a_reason(
    shipped_import: ImportResult,
) -> None:
    accounts = {a.file: a for a in shipped_import.accounting()}
    csvs = sorted(p.name for p in SOURCES.glob("*.csv") if not p.name.startswith("common_"))
    assert sorted(accounts) == csvs
    for a in accounts.values():
        assert a.silent == [], f"{a.file}: rows dropped silently: {a.silent[:5]}"
        assert a.imported + a.skipped_total == a.read > 0
    assert accounts["gcp_gpu_vms_2026.csv"].skipped == {"not-imported": 183}
    assert accounts["gcp_tpu_2026_thirdparty_anycloud.csv"].skipped["duplicate-row"] == 102
    assert accounts["aws_gpu_vms_2026.csv"].fixes["fractional-gpu"] > 0


def test_azure_single_h100_is_offered_in_every_region_of_the_source(catalog: Catalog) -> None:
    table = catalog.offers
    rows = table.mask(clouds=["azure"], accelerators=["H100-NVL-94GB"], max_gpus=1)
    regions = {o.region for o in table.offers(np.flatnonzero(rows))}
    source = _source_regions(
        ["azure_gpu_vms_allregions_thirdparty_anycloud.csv"], "Standard_NC40ads_H100_v5"
    )
    assert len(source) == 27 and regions == source


def test_fractional_gpus_carry_their_share_of_the_device(catalog: Catalog) -> None:
    shares = {
        i.name: i.gpu_fraction
        for c in ("aws", "azure")
        for _, i in _instances(catalog, c)
        if i.gpu_fraction
    }
    assert shares["g6f.large"] == 0.125 and shares["g6f.4xlarge"] == 0.5
    assert shares["Standard_NV6ads_A10_v5"] == 0.167
    l4, eighth = catalog.accelerator("L4"), catalog.accelerator("L4-0.125")
    assert eighth.memory_gb == l4.memory_gb * 0.125
    assert eighth.peak_tflops.bf16 == (l4.peak_tflops.bf16 or 0) * 0.125
    t = catalog.offers
    (row,) = [o for o in t.offers(range(len(t))) if o.instance_type == "g6f.large"][:1]
    assert (row.accelerator, row.gpus, row.gpu_memory_gb) == ("L4-0.125", 1, 3.0)


def test_a_shares_id_names_its_whole_device(catalog: Catalog) -> None:
    """``whole_device_id`` inverts ``fraction_id`` for every share the catalogs sell, and
    leaves every other id (hyphens and digits included) as it is."""
    shares = [a for a in catalog.accelerators if a.source.name.startswith("derived:")]
    assert shares, "the catalogs sell no fractional GPU"
    for share in shares:
        whole = whole_device_id(share.id)
        assert whole != share.id and catalog.accelerator(whole).chip == share.chip
    for a in catalog.accelerators:
        if a not in shares:
            assert whole_device_id(a.id) == a.id
    assert whole_device_id("X-1.5") == "X-1.5"


def test_shipped_catalogs_are_exactly_what_the_importer_makes(
    shipped_import: ImportResult,
) -> None:
    """No hand edits, no stale files: re-running the documented import changes nothing."""
    result = shipped_import
    for cloud in ("aws", "azure", "gcp"):
        shipped = Path(CATALOG_DIR / f"{cloud}.yaml").read_text(encoding="utf-8")
        assert result.text(cloud) == shipped, f"{cloud}.yaml differs from a fresh import"
