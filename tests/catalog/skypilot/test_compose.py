"""GCP: a VM's price is its host row plus the accelerator row of the same zone and count."""

from __future__ import annotations

import pytest

from recommender.catalog.skypilot import ImportResult
from recommender.catalog.skypilot.compose import N1_LIMITS, host_gpus

from .conftest import instance, kinds, price


def test_g2_standard_4_is_host_plus_one_l4(imported: ImportResult) -> None:
    g2 = instance(imported, "gcp", "g2-standard-4")
    assert (g2.accelerator, g2.gpus, g2.vcpus, g2.memory_gib) == ("L4", 1, 4, 16)
    us = price(g2, "us-central1")
    assert us.on_demand == 0.70683  # 0.14679 host + 0.56004 L4, exactly (rounded to 6 places)
    assert us.spot == pytest.approx(0.07502 + 0.2862)  # cheapest zone
    assert us.zones == ["us-central1-a", "us-central1-b", "us-central1-c"]
    assert g2.gpu_memory_gib == 24.0  # from the L4 row's GpuInfo


def test_g2_counts_come_from_the_machine_type(imported: ImportResult) -> None:
    assert host_gpus("g2-standard-24") == 2 and host_gpus("g2-standard-96") == 8
    assert host_gpus("a2-ultragpu-8g") == 8 and host_gpus("a3-edgegpu-8g-nolssd") == 8
    assert host_gpus("n1-standard-8") is None
    g2 = instance(imported, "gcp", "g2-standard-24")
    assert g2.gpus == 2
    assert price(g2, "us-central1").on_demand == pytest.approx(0.88075 + 1.12008)


def test_a2_and_a3_take_their_own_accelerator_rows(imported: ImportResult) -> None:
    ultra = instance(imported, "gcp", "a2-ultragpu-1g")
    assert ultra.accelerator == "A100-SXM4-80GB"
    assert price(ultra, "us-central1").on_demand == pytest.approx(1.09962 + 1.8462)
    high = instance(imported, "gcp", "a2-highgpu-1g")
    assert high.accelerator == "A100-SXM4-40GB"
    assert price(high, "us-central1").on_demand == pytest.approx(0.73948 + 2.93391)
    a3 = instance(imported, "gcp", "a3-highgpu-1g")
    assert price(a3, "us-east4").on_demand == pytest.approx(1.18251 + 9.79655)


def test_a4_host_rows_at_zero_take_the_b200_row_whole(imported: ImportResult) -> None:
    a4 = instance(imported, "gcp", "a4-highgpu-8g")
    assert (a4.accelerator, a4.gpus) == ("B200", 8)
    assert price(a4, "us-central1").on_demand == 90.216
    assert price(a4, "us-central1").spot == 37.7464
    assert kinds(imported, "gcp")["host-price-zero"] == ["a4-highgpu-8g @ us-central1-b"]


def _n1(imported: ImportResult, acc: str) -> set[tuple[str, int]]:
    return {
        (i.name, i.gpus)
        for f in imported.catalogs["gcp"].families
        for i in f.instances
        if i.name.startswith("n1-") and i.accelerator == acc
    }


def test_n1_hosts_take_t4_within_gcp_limits(imported: ImportResult) -> None:
    # T4: 1-2 GPUs up to 48 vCPUs / 312 GB, 4 GPUs up to 96 / 624; never 8.
    assert _n1(imported, "T4") == {
        ("n1-standard-4", 1),
        ("n1-standard-4", 2),
        ("n1-standard-4", 4),
        ("n1-standard-8", 1),
        ("n1-standard-8", 2),
        ("n1-standard-8", 4),
        ("n1-highmem-16", 1),
        ("n1-highmem-16", 2),
        ("n1-highmem-16", 4),
        ("n1-standard-64", 4),
        ("n1-standard-96", 4),
    }


def test_n1_hosts_take_v100_within_gcp_limits(imported: ImportResult) -> None:
    # V100: 1 GPU up to 12 vCPUs / 78 GB, 2 up to 24 / 156, 4 up to 48 / 312, 8 up to 96 / 624.
    shapes = _n1(imported, "V100-SXM2-16GB")
    assert ("n1-highmem-16", 1) not in shapes  # 16 vCPUs > 12
    assert ("n1-standard-64", 4) not in shapes  # 64 vCPUs > 48
    assert {("n1-standard-4", 1), ("n1-standard-8", 1), ("n1-highmem-16", 2)} <= shapes
    assert {("n1-standard-64", 8), ("n1-standard-96", 8)} <= shapes
    assert len(shapes) == 13


def test_n1_price_is_host_plus_gpus_of_that_count(imported: ImportResult) -> None:
    t4 = instance(imported, "gcp", "n1-standard-8", gpus=2, acc="T4")
    assert price(t4, "us-central1").on_demand == pytest.approx(0.38 + 0.7)
    assert price(t4, "us-central1").spot == pytest.approx(0.13954 + 0.383)
    assert t4.vcpus == 8 and t4.memory_gib == 30


def test_hosts_of_no_gpu_family_are_ignored(imported: ImportResult) -> None:
    names = {i.name for f in imported.catalogs["gcp"].families for i in f.instances}
    assert "n1-ultramem-40" not in names
    assert set(N1_LIMITS) == {"T4", "V100", "P4", "P100"}


def test_accelerator_rows_without_a_host_are_reported(imported: ImportResult) -> None:
    assert kinds(imported, "gcp")["unpaired-gpu-row"] == ["H100-MEGA x 8"]
    families = {f.name for f in imported.catalogs["gcp"].families}
    assert "a3-megagpu" not in families
