"""Finding the SkyPilot CSVs in a directory, per cloud, with where each one came from.

Two layouts are accepted:

- SkyPilot's own: ``<dir>/[<version>/]<cloud>/vms.csv`` (what ``~/.sky/catalogs/`` holds);
  of several versions the newest per cloud is used.
- Flat: ``<dir>/<cloud>_<anything>.csv`` (what ``catalogs/sources/skypilot/`` holds).

An optional ``provenance.yaml`` beside the files says where each came from (source, url,
commit, retrieved date); without it, files in SkyPilot's layout are credited to the
skypilot-catalog repository by version and path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from recommender.catalog.problems import display_path
from recommender.catalog.yamlfile import load_document

__all__ = ["CLOUDS", "PROVENANCE_FILE", "CsvFile", "FileSource", "discover"]

CLOUDS = ("aws", "azure", "gcp")
PROVENANCE_FILE = "provenance.yaml"
SKYPILOT_CATALOG_URL = "https://github.com/skypilot-org/skypilot-catalog"
_FLAT = re.compile(r"^(aws|gcp|azure)(?:[_.\-].*)?\.csv$", re.IGNORECASE)
_VERSION = re.compile(r"^v(\d+)$")


class FileSource(BaseModel):
    """Where one CSV came from (a ``provenance.yaml`` entry)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1, description="Who publishes it, e.g. a repository.")
    path: str | None = Field(default=None, description="The file's path in that source.")
    url: str | None = None
    commit: str | None = None
    retrieved: dt.date | None = None
    note: str | None = None

    def describe(self) -> str:
        where = " ".join(p for p in (self.source, self.path) if p)
        if self.commit:
            where += f" @ {self.commit}"
        if self.url:
            where += f" <{self.url}>"
        if self.retrieved:
            where += f" (retrieved {self.retrieved.isoformat()})"
        return where


class ProvenanceFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    files: dict[str, FileSource]


@dataclass(frozen=True, slots=True)
class CsvFile:
    """One CSV to import: its cloud, path, display name, provenance and content hash."""

    cloud: str
    path: Path
    display: str
    source: FileSource
    sha256: str


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _version_key(version: str) -> tuple[int, str]:
    m = _VERSION.match(version)
    return (int(m.group(1)) if m else -1, version)


def _nested(directory: Path) -> dict[str, Path]:
    """``<cloud>/vms.csv`` below ``directory``, the newest version per cloud."""
    best: dict[str, tuple[tuple[int, str], Path]] = {}
    for path in sorted(directory.rglob("vms.csv")):
        cloud = path.parent.name.lower()
        if cloud not in CLOUDS:
            continue
        key = _version_key(path.parent.parent.name)
        if cloud not in best or key > best[cloud][0]:
            best[cloud] = (key, path)
    return {cloud: path for cloud, (_, path) in best.items()}


def _default_source(directory: Path, path: Path, cloud: str) -> FileSource:
    rel = path.relative_to(directory).as_posix()
    version = path.parent.parent.name
    if _VERSION.match(version):
        return FileSource(
            source="skypilot-org/skypilot-catalog",
            path=f"catalogs/{version}/{cloud}/vms.csv",
            url=f"{SKYPILOT_CATALOG_URL}/blob/master/catalogs/{version}/{cloud}/vms.csv",
        )
    return FileSource(source=f"SkyPilot-format CSV {rel}")


def _provenance(directory: Path) -> dict[str, FileSource]:
    path = directory / PROVENANCE_FILE
    if not path.is_file():
        return {}
    return dict(load_document(path, ProvenanceFile, display=display_path(path)).model.files)


def discover(directory: Path, clouds: Collection[str] | None = None) -> dict[str, list[CsvFile]]:
    """The CSVs of each wanted cloud under ``directory``, sorted by display name.

    Raises :class:`FileNotFoundError` when ``directory`` is missing and
    :class:`~recommender.catalog.problems.CatalogError` on a malformed ``provenance.yaml``.
    """
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: not a directory")
    wanted = set(clouds or CLOUDS)
    sources = _provenance(directory)
    found: dict[str, list[Path]] = {}
    for path in sorted(directory.iterdir()):
        m = _FLAT.match(path.name)
        if m and path.is_file():
            found.setdefault(m.group(1).lower(), []).append(path)
    for cloud, path in _nested(directory).items():
        found.setdefault(cloud, []).append(path)
    out: dict[str, list[CsvFile]] = {}
    for cloud in sorted(wanted & found.keys()):
        files = []
        for path in found[cloud]:
            display = path.relative_to(directory).as_posix()
            source = sources.get(display) or _default_source(directory, path, cloud)
            files.append(CsvFile(cloud, path, display, source, _sha256(path)))
        out[cloud] = sorted(files, key=lambda f: f.display)
    return out
