"""Each known SkyPilot data quirk: fixed by the import and reported, with its source row."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog import AcceleratorNames
from recommender.catalog.skypilot import ImportResult, import_skypilot
from recommender.catalog.skypilot.quirks import is_local_zone

from .conftest import instance, kinds, price


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_spot_equal_to_on_demand_is_dropped(imported: ImportResult) -> None:
    p3 = instance(imported, "aws", "p3.2xlarge")
    # apne1-az1 has spot 4.194 = on-demand 4.194; the other zone's real spot price is kept.
    assert price(p3, "ap-northeast-1").spot == 1.2547
    fixes = [f for f in imported.report.for_cloud("aws") if f.kind == "spot-placeholder"]
    assert any(f.subject == "p3.2xlarge @ apne1-az1" for f in fixes)
    assert all("aws_gpu_vms.csv:" in f.detail for f in fixes)


def test_placeholder_allows_for_spot_column_rounding(imported: ImportResult) -> None:
    # p4d.24xlarge euc1-az2: on-demand 27.43298, spot 27.433000 (4 decimals): a placeholder.
    assert "p4d.24xlarge @ euc1-az2" in kinds(imported, "aws")["spot-placeholder"]
    assert price(instance(imported, "aws", "p4d.24xlarge"), "eu-central-1").spot == 18.8753


def test_spot_above_on_demand_on_a_gcp_gpu_row_drops_the_composite_spot(
    imported: ImportResult,
) -> None:
    ultra = instance(imported, "gcp", "a2-ultragpu-1g")
    assert price(ultra, "us-central1").spot is None  # A100-80GB spot 2.1604 > on-demand 1.8462
    assert price(ultra, "us-central1").on_demand is not None
    assert price(ultra, "us-east4").spot == pytest.approx(0.70912 + 1.5971)
    assert "A100-80GB x 1 @ us-central1-a" in kinds(imported, "gcp")["spot-above-on-demand"]


def test_spot_is_never_above_on_demand_after_import(imported: ImportResult) -> None:
    for cat in imported.catalogs.values():
        for fam in cat.families:
            for inst in fam.instances:
                for p in inst.prices:
                    if p.spot is not None and p.on_demand is not None:
                        assert p.spot < p.on_demand, (inst.name, p.region)


def test_empty_prices_stay_absent(imported: ImportResult) -> None:
    p5e = instance(imported, "aws", "p5e.48xlarge")
    us = price(p5e, "us-east-2")
    assert us.on_demand is None and us.spot == 14.0291  # every on-demand cell is empty
    assert "p5e.48xlarge @ use2-az1" in kinds(imported, "aws")["empty-on-demand"]
    # A region with no price at all is dropped, not listed empty.
    trn1 = instance(imported, "aws", "trn1.32xlarge")
    assert [p.region for p in trn1.prices] == ["us-east-1"]
    assert "trn1.32xlarge @ ap-south-1" in kinds(imported, "aws")["no-price"]


def test_local_zones_are_not_merged_into_their_region(imported: ImportResult) -> None:
    assert is_local_zone("aws", "use1-atl2-az1") and is_local_zone("aws", "usw2-lax1-az1")
    assert not is_local_zone("aws", "use1-az1") and not is_local_zone("aws", "us-east-1a")
    assert not is_local_zone("gcp", "us-central1-a")
    g4 = instance(imported, "aws", "g4dn.12xlarge")
    us = price(g4, "us-west-2")
    assert us.zones == ["usw2-az1", "usw2-az2", "usw2-az3"]
    assert us.spot == 1.3978  # not the local zones' 0.6474 (lax1-az1)
    assert kinds(imported, "aws")["local-zone"] == [
        "g4dn.12xlarge @ usw2-lax1-az1",
        "g4dn.12xlarge @ usw2-lax1-az2",
    ]


def test_nd96isr_h100_v5_has_eight_gpus_not_twelve(imported: ImportResult) -> None:
    nd = instance(imported, "azure", "Standard_ND96isr_H100_v5")
    assert (nd.gpus, nd.accelerator) == (8, "H100-SXM5-80GB")
    assert all(p.spot is None for p in nd.prices)  # spot = on-demand placeholders dropped
    (fix,) = [f for f in imported.report.for_cloud("azure") if f.kind == "gpu-count-fixed"]
    assert "source says 12" in fix.detail and "kept 8" in fix.detail


def test_fractional_gpus_are_offers_of_one_device_share(imported: ImportResult) -> None:
    nv6 = instance(imported, "azure", "Standard_NV6ads_A10_v5")
    assert (nv6.accelerator, nv6.gpus, nv6.gpu_fraction) == ("A10", 1, 0.167)
    assert kinds(imported, "azure")["fractional-gpu"] == ["Standard_NV6ads_A10_v5"]


def test_gpu_instances_of_no_family_are_skipped_and_named(imported: ImportResult) -> None:
    assert kinds(imported, "azure")["unknown-family"] == [
        "Standard_NC12",
        "Standard_NV16as_v4",
    ]


def test_instance_in_two_files_comes_from_the_one_with_more_regions(
    imported: ImportResult,
) -> None:
    t4 = instance(imported, "azure", "Standard_NC4as_T4_v3")
    # The all-regions file has eastus, japaneast, westeurope; SkyPilot v8 eastus, westus.
    assert [p.region for p in t4.prices] == ["eastus", "japaneast", "westeurope"]
    assert price(t4, "eastus").spot == 0.204246
    (fix,) = [f for f in imported.report.for_cloud("azure") if f.kind == "file-choice"]
    assert "azure_gpu_vms_allregions_thirdparty_anycloud.csv (3 regions)" in fix.detail


def test_row_without_an_accelerator_name_is_inferred(
    flat_copy: Path, names: AcceleratorNames
) -> None:
    # SkyPilot's v8 NC*ads_A10_v4 rows carry no AcceleratorName; our copy filtered them out,
    # so one real row is blanked here.
    _edit(
        flat_copy / "azure_gpu_vms_allregions_thirdparty_anycloud.csv",
        "Standard_NC8ads_A10_v4,A10,1,",
        "Standard_NC8ads_A10_v4,,1,",
    )
    result = import_skypilot(flat_copy, ["azure"], names=names)
    assert instance(result, "azure", "Standard_NC8ads_A10_v4").accelerator == "A10"
    assert kinds(result, "azure")["accelerator-inferred"] == ["Standard_NC8ads_A10_v4"]


def test_row_naming_another_accelerator_keeps_the_family_one(
    flat_copy: Path, names: AcceleratorNames
) -> None:
    _edit(flat_copy / "aws_gpu_vms.csv", "g4dn.xlarge,T4,", "g4dn.xlarge,V100,")
    result = import_skypilot(flat_copy, ["aws"], names=names)
    assert instance(result, "aws", "g4dn.xlarge").accelerator == "T4"
    assert kinds(result, "aws")["accelerator-mismatch"] == ["g4dn.xlarge"]


def test_zones_disagreeing_on_on_demand_are_reported(
    flat_copy: Path, names: AcceleratorNames
) -> None:
    # Real zones agree; one zone of us-east-1 is edited to disagree.
    _edit(flat_copy / "aws_gpu_vms_more.csv", "0.8048,0.347", "0.9048,0.347")
    result = import_skypilot(flat_copy, ["aws"], names=names)
    g6 = instance(result, "aws", "g6.xlarge")
    assert price(g6, "us-east-1").on_demand == 0.8048  # the other four zones' price
    assert kinds(result, "aws")["on-demand-disagrees"] == ["g6.xlarge @ us-east-1"]
