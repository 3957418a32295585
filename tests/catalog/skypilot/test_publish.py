"""Writing an import: whole-catalog check first; a refused result leaves every file as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog import CatalogError, load_catalog
from recommender.catalog.skypilot import ImportResult, publish


def _texts(imported: ImportResult) -> dict[str, str]:
    return {c: imported.text(c) for c in imported.catalogs}


def test_publish_writes_files_that_load(imported: ImportResult, out_dir: Path) -> None:
    published = publish(_texts(imported), out_dir)
    assert [w.path.name for w in published.written] == ["aws.yaml", "azure.yaml", "gcp.yaml"]
    assert all(w.changed for w in published.written)
    catalog = load_catalog(out_dir)
    assert set(catalog.clouds) == {"aws", "azure", "gcp"}
    # The H100 split (4.20 vs 9.80 per GPU) survives the import as a warning naming both groups.
    (split,) = [w for w in published.warnings if w.check == "price-outlier"]
    assert "a3-highgpu-1g on-demand prices fall into two groups" in split.message
    assert "(asia-northeast1, us-central1) vs" in split.message
    assert "(europe-west4, us-east4)" in split.message
    assert split.field == "families[2].instances[0].prices" and split.line
    assert {Path(w.file).resolve().parent for w in published.warnings} == {out_dir.resolve()}
    again = publish(_texts(imported), out_dir)
    assert not any(w.changed for w in again.written)


def test_dry_run_writes_nothing(imported: ImportResult, out_dir: Path) -> None:
    published = publish(_texts(imported), out_dir, dry_run=True)
    assert all(w.changed for w in published.written)
    assert sorted(p.name for p in out_dir.iterdir()) == ["accelerators.yaml"]


def test_result_with_integrity_errors_is_refused(imported: ImportResult, out_dir: Path) -> None:
    publish(_texts(imported), out_dir)
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    # An accelerators.yaml without L4: the new gcp.yaml's g2 instances reference an unknown id.
    acc = out_dir / "accelerators.yaml"
    text = acc.read_text()
    start = text.index("  - id: L4\n")
    end = text.index("  - id: ", start + 1)
    acc.write_text(text[:start] + text[end:])
    before["accelerators.yaml"] = acc.read_bytes()
    changed = {c: t.replace("0.70683", "0.70684") for c, t in _texts(imported).items()}
    with pytest.raises(CatalogError) as info:
        publish(changed, out_dir)
    problems = info.value.problems
    assert any(p.check == "unknown-accelerator" for p in problems)
    # Problems name the files as they would have been written, not the staging copies.
    assert {Path(p.file).resolve().parent for p in problems} == {out_dir.resolve()}
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before
