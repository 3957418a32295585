"""Integrity suite over the catalogs we ship (gpuhunt style): they load, hold what the product
promises, agree with their source CSVs, and are exactly what the importer makes of them."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from recommender.catalog import Catalog, InstanceType, Problem, validate_catalog
from recommender.catalog.skypilot import import_skypilot

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
        "inf2": ["inf2.xlarge", "inf2.48xlarge"],
        "trn1": ["trn1.2xlarge", "trn1.32xlarge"],
    },
}
# Accelerators with a spec sheet but no instance in the shipped data (kept for name
# resolution of what users run elsewhere: on-prem cards, other clouds' PCIe variants).
DELIBERATELY_UNUSED = {"V100-PCIe-32GB", "A100-PCIe-40GB", "H100-PCIe-80GB"}
# The source leaves on-demand empty here (catalogs/sources/skypilot/README.md); spot only.
NO_ON_DEMAND_IN_SOURCE = {("g6e", "ap-northeast-3")}


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
                    if (fam, p.region) not in NO_ON_DEMAND_IN_SOURCE:
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
    used = {i.accelerator for c in catalog.clouds for _, i in _instances(catalog, c)}
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


def test_shipped_catalogs_are_exactly_what_the_importer_makes(catalog: Catalog) -> None:
    """No hand edits, no stale files: re-running the documented import changes nothing."""
    result = import_skypilot(SOURCES, names=catalog.names)
    for cloud in ("aws", "azure", "gcp"):
        shipped = Path(CATALOG_DIR / f"{cloud}.yaml").read_text(encoding="utf-8")
        assert result.text(cloud) == shipped, f"{cloud}.yaml differs from a fresh import"
