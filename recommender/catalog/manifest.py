"""The catalog manifest: which files make up one catalog version, and each file's digest.

``manifest.json`` lists every catalog file the loader reads (``accelerators.yaml``, the
cloud files, ``edge.yaml``) with its SHA-256 and size, and names the version they make
together. Writers (the SkyPilot importer, ``catalog refresh``) replace the YAML files first
and the manifest last, so a directory is consistent exactly when every file matches it.
:func:`read_verified` reads the files once, checks them against the manifest, and hands the
verified text to the loader: a file missing, truncated, changed during the read, or not yet
listed makes the whole catalog refused, never half-served.

Regenerate after editing a catalog file by hand::

    python -m recommender.catalog.manifest catalogs/
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recommender.catalog.problems import CatalogError, Problem, display_path
from recommender.catalog.writer import write_atomic

__all__ = [
    "MANIFEST_NAME",
    "Manifest",
    "build_manifest",
    "catalog_files",
    "read_manifest",
    "read_verified",
    "write_manifest",
]

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1
# Hex digits of the combined digest that name a version (64 bits: no collisions in practice).
VERSION_CHARS = 16
# The files the loader reads, in the order it reads them (recommender.catalog.loader).
CATALOG_FILES = ("accelerators.yaml", "aws.yaml", "gcp.yaml", "azure.yaml", "edge.yaml")
REGENERATE = "python -m recommender.catalog.manifest DIR (or rerun the import or refresh)"


@dataclass(frozen=True, slots=True)
class Manifest:
    """File name -> (sha256 hex, size in bytes), and the version they make together."""

    files: dict[str, tuple[str, int]]

    @property
    def version(self) -> str:
        listing = "".join(f"{name}:{digest}\n" for name, (digest, _) in sorted(self.files.items()))
        return hashlib.sha256(listing.encode()).hexdigest()[:VERSION_CHARS]

    def to_json(self) -> str:
        doc = {
            "format": MANIFEST_FORMAT,
            "version": self.version,
            "files": {
                name: {"sha256": digest, "bytes": size}
                for name, (digest, size) in sorted(self.files.items())
            },
        }
        return json.dumps(doc, indent=2) + "\n"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def catalog_files(directory: Path) -> list[Path]:
    """The catalog files present in ``directory`` (those the loader reads)."""
    return [directory / name for name in CATALOG_FILES if (directory / name).is_file()]


def build_manifest(directory: Path) -> Manifest:
    """The manifest of the files as they are now."""
    files = {}
    for path in catalog_files(directory):
        data = path.read_bytes()
        files[path.name] = (_digest(data), len(data))
    return Manifest(files)


def write_manifest(directory: Path) -> Manifest:
    """Write ``directory``'s manifest (atomically): call it after the last YAML file."""
    manifest = build_manifest(directory)
    write_atomic(directory / MANIFEST_NAME, manifest.to_json())
    return manifest


def _parse(raw: bytes, where: str) -> Manifest:
    try:
        doc: Any = json.loads(raw)
        files = {
            str(name): (str(entry["sha256"]), int(entry["bytes"]))
            for name, entry in doc["files"].items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CatalogError(
            [Problem(where, None, "", f"unreadable manifest ({exc}); regenerate it: {REGENERATE}")]
        ) from None
    return Manifest(files)


def read_manifest(directory: Path) -> Manifest:
    """The manifest on disk; :class:`CatalogError` when it is missing or unreadable."""
    path = directory / MANIFEST_NAME
    try:
        raw = path.read_bytes()
    except OSError:
        raise CatalogError(
            [
                Problem(
                    display_path(path),
                    None,
                    "",
                    "missing: a catalog directory is complete only with its manifest "
                    f"(written last by the importer and the refresh); {REGENERATE}",
                )
            ]
        ) from None
    return _parse(raw, display_path(path))


def _check_file(path: Path, expected: tuple[str, int]) -> tuple[str | None, Problem | None]:
    where = display_path(path)
    try:
        data = path.read_bytes()
    except OSError:
        return None, Problem(where, None, "", "listed in manifest.json but missing")
    digest, size = expected
    if _digest(data) != digest:
        return None, Problem(
            where,
            None,
            "",
            f"does not match manifest.json ({len(data)} bytes, the manifest says {size}): "
            "truncated, changed after the manifest was written, or being replaced now",
        )
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, Problem(where, None, "", f"not UTF-8 text: {exc}")


def read_verified(directory: Path) -> tuple[Manifest, dict[str, str]]:
    """Every file the manifest lists, read once and checked against it: (manifest, texts by
    file name). Raises :class:`CatalogError` listing every mismatch."""
    manifest = read_manifest(directory)
    texts: dict[str, str] = {}
    problems: list[Problem] = []
    for name, expected in sorted(manifest.files.items()):
        text, problem = _check_file(directory / name, expected)
        if problem is not None:
            problems.append(problem)
        elif text is not None:
            texts[name] = text
    for path in catalog_files(directory):
        if path.name not in manifest.files:
            problems.append(
                Problem(display_path(path), None, "", f"not listed in manifest.json; {REGENERATE}")
            )
    if not problems and read_manifest(directory) != manifest:
        problems.append(
            Problem(display_path(directory / MANIFEST_NAME), None, "", "changed during the read")
        )
    if problems:
        raise CatalogError(problems)
    return manifest, texts


def main(argv: list[str]) -> int:
    """``python -m recommender.catalog.manifest DIR...``: write each directory's manifest."""
    if not argv:
        print("usage: python -m recommender.catalog.manifest DIR [DIR...]", file=sys.stderr)
        return 2
    for arg in argv:
        manifest = write_manifest(Path(arg))
        print(
            f"{Path(arg) / MANIFEST_NAME}: version {manifest.version}, {len(manifest.files)} files"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
