"""benchmarks/data/bench_accelerators.yaml: a spec sheet for every usable accuracy row.

The accuracy benchmark looks a row's peaks up in the product catalog first, then in this file,
then through the aliases the file's header names (ids that leave a detail open).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from recommender.catalog import Accelerator, AcceleratorNames, Catalog, load_catalog
from recommender.catalog.schema import AcceleratorFile
from recommender.catalog.yamlfile import load_document
from recommender.scoring.calibration import DATASHEET_TRIAD_SHARE, GDDR_TRIAD_SHARE

from ..triad_shares import median_triad_share

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
DATA = BENCHMARKS / "data"
published = pytest.importorskip("published")
BENCH_FILE = DATA / "bench_accelerators.yaml"
ROWS_FILE = DATA / "accuracy_rows.csv"


@pytest.fixture(scope="module")
def bench() -> AcceleratorFile:
    return load_document(BENCH_FILE, AcceleratorFile).model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def aliases() -> dict[str, str]:
    aliases: dict[str, str] = published.accelerator_aliases(BENCH_FILE)
    return aliases


def _usable_accelerators() -> set[str]:
    with ROWS_FILE.open(newline="", encoding="utf-8") as fh:
        return {row["accelerator"] for row in csv.DictReader(fh) if row["usable"] == "yes"}


def test_every_usable_row_resolves(
    bench: AcceleratorFile, catalog: Catalog, aliases: dict[str, str]
) -> None:
    names = _usable_accelerators()
    assert len(names) > 20, "accuracy_rows.csv has no usable rows to check"
    bench_names = AcceleratorNames(bench.accelerators)
    unresolved = sorted(
        name
        for name in names
        if name not in catalog.names and name not in bench_names and name not in aliases
    )
    assert unresolved == []
    # The file is needed: some rows resolve only through it.
    assert any(name not in catalog.names and name in bench_names for name in names)


def test_rows_on_an_alias_are_loaded_on_its_part(catalog: Catalog) -> None:
    """The harness applies the aliases: KempnerForge's H200 rows are scored on the SXM part."""
    rows, _ = published.load_rows(catalog)
    kempner = [r for r in rows if r.source == "kempnerforge"]
    assert kempner
    assert {r.observation.accelerator for r in kempner} == {"H200-SXM-141GB"}


def test_entries_are_named_exactly_as_the_rows_spell_them(bench: AcceleratorFile) -> None:
    used = _usable_accelerators()
    assert [a.id for a in bench.accelerators if a.id not in used] == []


def test_aliases_point_at_product_parts(catalog: Catalog, aliases: dict[str, str]) -> None:
    assert aliases == {"H200-141GB": "H200-SXM-141GB", "V100-SXM2": "V100-SXM2-16GB"}
    for alias, target in aliases.items():
        assert alias not in catalog.names, f"{alias} resolves already: drop the alias"
        assert catalog.names.by_id(target) is not None, f"{alias} -> unknown id {target}"


def test_every_entry_has_a_source(bench: AcceleratorFile) -> None:
    assert bench.accelerators
    for acc in bench.accelerators:
        assert acc.source.name.strip(), acc.id
        assert acc.source.url is not None and acc.source.url.startswith(("http://", "https://"))


def test_every_part_states_its_memory_type(bench: AcceleratorFile, catalog: Catalog) -> None:
    """The scoring engine gives GDDR boards a larger share of their datasheet bandwidth than
    HBM parts (calibration.GDDR_TRIAD_SHARE), so no shipped part may leave it open."""
    parts = [*bench.accelerators, *catalog.accelerators]
    assert [a.id for a in parts if a.memory_type is None] == []
    gddr = {a.id for a in parts if a.memory_type == "gddr"}
    assert {"T4", "L4", "A10G", "L40S", "A40", "RTX-4090"} <= gddr
    assert not gddr & {"A100-SXM4-80GB", "H100-PCIe-80GB", "V100-SXM2-16GB", "MI300X"}


# The L40 is in neither catalog: its datasheet bandwidth (48 GB GDDR6, 864 GB/s) from the
# NVIDIA L40 / L40S datasheet table as listed at https://www.mullet.se/product.html?product_id=355414.
L40_DATASHEET_GBS = 864.0


def test_gddr_share_is_the_median_measured_gddr_triad_share(
    bench: AcceleratorFile, catalog: Catalog
) -> None:
    """GDDR_TRIAD_SHARE is what the GDDR boards' triads say (board GDDR reaches more of its
    datasheet than HBM does), not a fitted factor: every GDDR board of either catalog with a
    triad in achievable.yaml, and the L40."""
    datasheet = {
        a.id: a.memory_bandwidth_gbs
        for a in [*bench.accelerators, *catalog.accelerators]
        if a.memory_type == "gddr"
    }
    datasheet["L40"] = L40_DATASHEET_GBS
    share, boards = median_triad_share(datasheet)
    assert boards >= 2
    assert share == pytest.approx(GDDR_TRIAD_SHARE, abs=5e-4)
    assert GDDR_TRIAD_SHARE > DATASHEET_TRIAD_SHARE


def test_each_name_resolves_to_its_own_entry(bench: AcceleratorFile) -> None:
    names = AcceleratorNames(bench.accelerators)
    for acc in bench.accelerators:
        for name in acc.names():
            assert names.resolve_all(name) == (acc,), f"{name!r} is ambiguous in the bench file"


def _same_part(a: Accelerator, b: Accelerator) -> bool:
    return (a.vendor, a.memory_gb) == (b.vendor, b.memory_gb)


def test_no_entry_contradicts_the_product_catalog(bench: AcceleratorFile, catalog: Catalog) -> None:
    """Where both files name a part the product wins; the two must describe the same part."""
    assert bench.accelerators
    for acc in bench.accelerators:
        for name in acc.names():
            for product in catalog.names.resolve_all(name, strict=False):
                assert _same_part(acc, product), f"{acc.id} ({name!r}) is {product.id} there"


def test_every_boost_clock_is_a_known_nvidia_part(bench: AcceleratorFile, catalog: Catalog) -> None:
    """achievable.yaml's boost clocks (kernel_costs.replayed_kernel_s) name parts of the
    product catalog or of this file, NVIDIA's, and each lies between the slowest and the fastest
    boost clocks their generations ship (a P4's 1,114 MHz, an RTX 4070 Ti's 2,610)."""
    from recommender.scoring.achievable import boost_clocks

    parts = {a.id: a for a in [*catalog.accelerators, *bench.accelerators]}
    clocks = boost_clocks()
    assert set(clocks) <= set(parts)
    assert {parts[name].vendor for name in clocks} == {"nvidia"}
    assert all(1000 <= c.mhz <= 2700 for c in clocks.values())
    # one die's boards share a clock where their FP32 peaks agree (the A100s, the V100 SXM2s)
    for a, b in (("A100-SXM4-40GB", "A100-PCIe-80GB"), ("V100-SXM2-16GB", "V100-SXM2-32GB")):
        assert clocks[a].mhz == clocks[b].mhz
    # the NVIDIA parts with no clock are the ones achievable.yaml says no source gave, and the
    # shares of a device, which take their whole device's (kernel_costs.replayed_kernel_s)
    from recommender.catalog.fractions import whole_device_id

    missing = {
        name
        for name, part in parts.items()
        if part.vendor == "nvidia" and name not in clocks and whole_device_id(name) not in clocks
    }
    assert missing == {
        "B300",
        "GB300",
        "H100-HBM2e-96GB-500W",
        "H100-NVL-94GB",
        "H200-NVL-141GB",
        "RTX-2000E-Ada",
        "RTX-PRO-6000-Server",
    }


def test_every_measured_capability_names_a_known_part(
    bench: AcceleratorFile, catalog: Catalog
) -> None:
    """achievable.yaml's measured figures are keyed by accelerator id: each names a part of the
    product catalog or of this file (a misspelt id would silently leave its part on the
    datasheet), and a measured triad stays below that part's datasheet bandwidth."""
    from recommender.scoring.achievable import measured

    datasheet = {a.id: a.memory_bandwidth_gbs for a in [*catalog.accelerators, *bench.accelerators]}
    # the L40, in neither catalog, carries the triad the GDDR share is the median of
    datasheet["L40"] = L40_DATASHEET_GBS
    figures = measured()
    assert set(figures) <= set(datasheet)
    for acc_id, m in figures.items():
        if m.memory_bandwidth_gbs is not None:
            assert m.memory_bandwidth_gbs < datasheet[acc_id], acc_id
