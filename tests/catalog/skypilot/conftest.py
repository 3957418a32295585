"""Fixtures: the real-row CSV cuts in ``fixtures/flat`` and one import of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recommender.catalog import AcceleratorNames, InstanceType, RegionPrice
from recommender.catalog.schema import AcceleratorFile
from recommender.catalog.skypilot import ImportResult, import_skypilot
from recommender.catalog.yamlfile import load_document
from tests.conftest import CATALOG_DIR

FLAT = Path(__file__).resolve().parent / "fixtures" / "flat"


@pytest.fixture(scope="session")
def names() -> AcceleratorNames:
    doc = load_document(CATALOG_DIR / "accelerators.yaml", AcceleratorFile)
    return AcceleratorNames(doc.model.accelerators)


@pytest.fixture(scope="session")
def imported(names: AcceleratorNames) -> ImportResult:
    return import_skypilot(FLAT, names=names)


@pytest.fixture
def flat_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture CSVs (for tests that edit a row)."""
    dst = tmp_path / "csv"
    shutil.copytree(FLAT, dst)
    return dst


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    """An empty catalog directory holding only the bundled accelerators.yaml."""
    d = tmp_path / "catalogs"
    d.mkdir()
    shutil.copy(CATALOG_DIR / "accelerators.yaml", d / "accelerators.yaml")
    return d


def instance(
    result: ImportResult, cloud: str, name: str, gpus: int | None = None, acc: str | None = None
) -> InstanceType:
    """The one instance ``name`` (with ``gpus`` x ``acc`` where given) of ``cloud``."""
    found = [
        i
        for f in result.catalogs[cloud].families
        for i in f.instances
        if i.name == name and gpus in (None, i.gpus) and acc in (None, i.accelerator)
    ]
    assert len(found) == 1, f"{name}: {len(found)} matches"
    return found[0]


def price(inst: InstanceType, region: str) -> RegionPrice:
    (p,) = [p for p in inst.prices if p.region == region]
    return p


def kinds(result: ImportResult, cloud: str) -> dict[str, list[str]]:
    """Report subjects per kind for one cloud."""
    out: dict[str, list[str]] = {}
    for fix in result.report.for_cloud(cloud):
        out.setdefault(fix.kind, []).append(fix.subject)
    return out
