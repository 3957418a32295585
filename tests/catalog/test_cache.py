"""The per-user cache of validated catalogs: a hit only for the same bytes and code."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from recommender.catalog import Catalog, CatalogError, load_catalog, loader
from recommender.catalog import cache as cache_mod


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(where))
    return where


def _entries(where: Path) -> list[Path]:
    return sorted(where.glob("*.pickle")) if where.is_dir() else []


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(directory: Path) -> Catalog:
        raise AssertionError("parsed the files although the cache holds them")

    monkeypatch.setattr(loader, "_load_checked", refuse)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = loader._load_checked

    def counted(directory: Path) -> Catalog:
        calls.append(directory)
        return real(directory)

    monkeypatch.setattr(loader, "_load_checked", counted)
    return calls


def test_second_load_comes_from_the_cache_and_equals_the_first(
    catalog_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_catalog(catalog_copy)
    assert len(_entries(cache_dir)) == 1
    assert (cache_dir.stat().st_mode & 0o777) == 0o700
    _no_parse(monkeypatch)
    second = load_catalog(catalog_copy)
    assert second is not first
    assert len(second.offers) == len(first.offers)
    assert second.offers.instance_names == first.offers.instance_names
    assert (second.offers.price == first.offers.price).all()
    assert second.warnings == first.warnings
    assert second.directory == first.directory


def test_an_edited_file_misses_and_the_new_bytes_are_served(
    catalog_copy: Path, cache_dir: Path
) -> None:
    before = load_catalog(catalog_copy)
    edge = catalog_copy / "edge.yaml"
    edge.write_text(edge.read_text().replace("devices:", "devices:\n# edited", 1))
    aws = catalog_copy / "aws.yaml"
    aws.unlink()  # a cloud file removed: its offers must go
    after = load_catalog(catalog_copy)
    assert "aws" in before.clouds and "aws" not in after.clouds
    assert len(_entries(cache_dir)) == 2


def test_a_catalog_with_errors_is_refused_and_not_stored(
    catalog_copy: Path, cache_dir: Path
) -> None:
    (catalog_copy / "accelerators.yaml").write_text("accelerators: [")
    with pytest.raises(CatalogError):
        load_catalog(catalog_copy)
    assert _entries(cache_dir) == []


def test_a_corrupt_entry_is_a_miss_and_is_replaced(catalog_copy: Path, cache_dir: Path) -> None:
    load_catalog(catalog_copy)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(b"not a pickle")
    again = load_catalog(catalog_copy)
    assert len(again.offers) > 0
    assert entry.read_bytes() != b"not a pickle"


def test_an_unwritable_cache_still_loads(
    catalog_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(blocker / "cache"))  # under a file: mkdir fails
    assert len(load_catalog(catalog_copy).offers) > 0


@pytest.mark.parametrize("value", ["off", "OFF", "0", ""])
def test_the_cache_can_be_turned_off(
    catalog_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(cache_mod.CACHE_ENV, value)
    assert cache_mod.cache_dir() is None
    load_catalog(catalog_copy)
    assert not list(tmp_path.rglob("*.pickle"))


def test_cache_false_parses_the_files(
    catalog_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_catalog(catalog_copy)
    calls = _count_parses(monkeypatch)
    load_catalog(catalog_copy, cache=False)
    assert calls == [catalog_copy]


def test_a_file_replaced_during_the_load_is_not_stored(
    catalog_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = loader._load_checked

    def load_then_edit(directory: Path) -> Catalog:
        out = real(directory)
        edge = directory / "edge.yaml"
        edge.write_text(edge.read_text() + "\n# replaced while loading\n")
        return out

    monkeypatch.setattr(loader, "_load_checked", load_then_edit)
    load_catalog(catalog_copy)
    assert _entries(cache_dir) == []


def test_the_key_names_the_code_the_directory_and_every_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"accelerators.yaml": b"a", "aws.yaml": b"b"}
    key = cache_mod.cache_key(tmp_path, files)
    assert key == cache_mod.cache_key(tmp_path, dict(files))
    assert key != cache_mod.cache_key(tmp_path, {**files, "aws.yaml": b"c"})
    assert key != cache_mod.cache_key(tmp_path, {"accelerators.yaml": b"a"})
    assert key != cache_mod.cache_key(tmp_path / "other", files)
    code = tmp_path / "code"
    code.mkdir()
    module = code / "schema.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(cache_mod, "_CODE_DIR", code)
    before = cache_mod.cache_key(tmp_path, files)
    module.write_text("x = 22\n")  # the schema changed: a pickle of the old classes is stale
    assert cache_mod.cache_key(tmp_path, files) != before


def test_old_entries_are_pruned(catalog_copy: Path, cache_dir: Path) -> None:
    cache_dir.mkdir(mode=0o700)
    for i in range(cache_mod.KEEP_ENTRIES + 3):
        old = cache_dir / f"{i:040x}.pickle"
        old.write_bytes(b"")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    load_catalog(catalog_copy)
    kept = _entries(cache_dir)
    assert len(kept) == cache_mod.KEEP_ENTRIES
    assert f"{0:040x}.pickle" not in {p.name for p in kept}  # the least recently used went


def test_a_cache_others_can_write_is_not_read(
    catalog_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_catalog(catalog_copy)
    cache_dir.chmod(0o777)  # e.g. RECOMMENDER_CACHE_DIR=/tmp/shared: anyone could plant a pickle
    calls = _count_parses(monkeypatch)
    load_catalog(catalog_copy)
    assert calls == [catalog_copy]


def test_a_catalog_that_cannot_be_pickled_still_loads(
    catalog_copy: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise TypeError("cannot pickle '_thread.lock' object")

    monkeypatch.setattr(pickle, "dump", refuse)
    assert len(load_catalog(catalog_copy).offers) > 0
    assert _entries(cache_dir) == []
    assert not list(cache_dir.glob(".entry-*"))  # the partial file is removed
