"""The catalog manifest: the committed one is current, and a directory that does not match
its manifest (a file missing, truncated, unlisted, or changing during the read) is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recommender.catalog import CatalogError
from recommender.catalog import manifest as manifest_module
from recommender.catalog.loader import load_versioned
from recommender.catalog.manifest import (
    MANIFEST_NAME,
    build_manifest,
    read_manifest,
    write_manifest,
)
from recommender.catalog.skypilot.publish import publish

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "catalogs"


def test_the_committed_manifest_matches_the_committed_catalog() -> None:
    assert read_manifest(SHIPPED) == build_manifest(SHIPPED), (
        "catalogs/manifest.json is stale: rerun the import/refresh that changed the catalog, "
        "or `python -m recommender.catalog.manifest catalogs`"
    )
    assert set(read_manifest(SHIPPED).files) >= {"accelerators.yaml", "aws.yaml", "gcp.yaml"}


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    d = tmp_path / "catalog"
    shutil.copytree(SHIPPED, d, ignore=shutil.ignore_patterns("sources"))
    return d


def _refusal(directory: Path) -> str:
    with pytest.raises(CatalogError) as caught:
        load_versioned(directory)
    return "\n".join(str(p) for p in caught.value.problems)


def test_a_complete_directory_loads_with_its_version(catalog: Path) -> None:
    loaded, version = load_versioned(catalog)
    assert len(loaded.offers) > 0
    assert version == read_manifest(catalog).version == read_manifest(SHIPPED).version


def test_a_missing_file_is_refused(catalog: Path) -> None:
    (catalog / "aws.yaml").unlink()
    assert "aws.yaml" in _refusal(catalog) and "missing" in _refusal(catalog)


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_a_file_cut_at_a_line_boundary_is_refused(catalog: Path, keep: float) -> None:
    path = catalog / "gcp.yaml"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: int(len(lines) * keep)]))
    assert "gcp.yaml" in _refusal(catalog) and "does not match" in _refusal(catalog)


def test_a_missing_or_broken_manifest_is_refused(catalog: Path) -> None:
    (catalog / MANIFEST_NAME).write_text("{not json")
    assert "unreadable manifest" in _refusal(catalog)
    (catalog / MANIFEST_NAME).unlink()
    assert "manifest" in _refusal(catalog)
    loaded, version = load_versioned(catalog, require_manifest=False)
    assert len(loaded.offers) > 0 and version == build_manifest(catalog).version


def test_a_file_the_manifest_does_not_list_is_refused(tmp_path: Path, catalog: Path) -> None:
    edge = catalog / "edge.yaml"
    saved = edge.read_bytes()
    edge.unlink()
    write_manifest(catalog)
    edge.write_bytes(saved)  # added after the manifest was written
    assert "not listed in manifest.json" in _refusal(catalog)


def test_a_manifest_replaced_during_the_read_is_refused(
    catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = manifest_module.read_manifest
    calls = []

    def replaced_meanwhile(directory: Path) -> manifest_module.Manifest:
        calls.append(directory)
        found = real(directory)
        if len(calls) == 1:
            return found
        return manifest_module.Manifest({**found.files, "edge.yaml": ("0" * 64, 1)})

    monkeypatch.setattr(manifest_module, "read_manifest", replaced_meanwhile)
    assert "changed during the read" in _refusal(catalog)


def test_the_importer_writes_the_manifest_last(catalog: Path) -> None:
    aws = catalog / "aws.yaml"
    text = aws.read_text().replace("# ", "#  ", 1)
    publish({"aws": text}, catalog)
    assert read_manifest(catalog) == build_manifest(catalog)
    load_versioned(catalog)  # consistent again
