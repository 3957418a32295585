"""Accelerator name resolution for every alias family, case-insensitively."""

from __future__ import annotations

import pytest

from recommender.catalog import Catalog, UnknownAcceleratorError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # canonical ids
        ("H100-SXM5-80GB", "H100-SXM5-80GB"),
        ("a100-pcie-80gb", "A100-PCIe-80GB"),
        # SkyPilot names (the first listed variant)
        ("A100-80GB", "A100-SXM4-80GB"),
        ("A100", "A100-SXM4-40GB"),
        ("V100", "V100-SXM2-16GB"),
        ("H100-MEGA", "H100-SXM5-80GB"),
        ("Trainium", "Trainium1"),
        ("inferentia2", "Inferentia2"),
        # marketing names
        ("NVIDIA H100 SXM5 80GB", "H100-SXM5-80GB"),
        ("AMD Instinct MI300X", "MI300X"),
        # nvidia-smi names, with and without the vendor prefix
        ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
        ("Tesla T4", "T4"),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"),
        ("A100-SXM4-80GB", "A100-SXM4-80GB"),
        ("NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"),
        ("nvidia l4", "L4"),
        ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB"),
        ("NVIDIA H100 NVL", "H100-NVL-94GB"),
        # aliases
        ("T4g", "T4"),
    ],
)
def test_resolves(catalog: Catalog, name: str, expected: str) -> None:
    assert catalog.accelerator(name).id == expected


def test_skypilot_name_stands_for_every_variant(catalog: Catalog) -> None:
    ids = [a.id for a in catalog.names.resolve_all("A100-80GB")]
    assert ids == ["A100-SXM4-80GB", "A100-PCIe-80GB"]
    assert {a.id for a in catalog.names.resolve_all("H100")} == {
        "H100-SXM5-80GB",
        "H100-PCIe-80GB",
        "H100-NVL-94GB",
    }


def test_unknown_name_suggests_close_ones(catalog: Catalog) -> None:
    with pytest.raises(UnknownAcceleratorError) as info:
        catalog.accelerator("A100-80G")
    assert "A100" in str(info.value) and "did you mean" in str(info.value)
    assert "A10" not in catalog.names.suggest("xyz-nothing")


def test_every_accelerator_resolves_from_each_of_its_names(catalog: Catalog) -> None:
    for acc in catalog.accelerators:
        for name in [acc.id, acc.marketing_name, *acc.nvidia_smi_names, *acc.aliases]:
            assert catalog.accelerator(name.upper()).id == acc.id, name
        if acc.skypilot_name:
            assert acc in catalog.names.resolve_all(acc.skypilot_name.lower())
