"""Finding and loading the catalog files, with every problem reported at once.

``load_catalog()`` reads ``accelerators.yaml``, the cloud files (``aws.yaml``, ``gcp.yaml``,
``azure.yaml``) and ``edge.yaml`` from a directory, validates each against its schema, runs
the integrity checks, and refuses (with :class:`CatalogError`) a catalog with errors.
Warnings ride along on :attr:`Catalog.warnings`. ``load_versioned()`` loads the files
exactly as its manifest lists them (:mod:`recommender.catalog.manifest`) and names the
version: what a service serves.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from recommender.catalog.catalog import Catalog
from recommender.catalog.integrity import check_catalog
from recommender.catalog.manifest import build_manifest, read_verified
from recommender.catalog.problems import CatalogError, Problem, display_path
from recommender.catalog.schema import AcceleratorFile, CloudCatalog, EdgeFile
from recommender.catalog.yamlfile import Document, load_document, parse_yaml, validation_problems

__all__ = [
    "CLOUD_FILES",
    "CatalogLoad",
    "default_catalog_dir",
    "load_catalog",
    "load_versioned",
    "validate_catalog",
]

CLOUD_FILES = ("aws", "gcp", "azure")
CATALOG_FILES = ("accelerators.yaml", *(f"{c}.yaml" for c in CLOUD_FILES), "edge.yaml")
ENV_DIR = "RECOMMENDER_CATALOG_DIR"

M = TypeVar("M", bound=BaseModel)


def default_catalog_dir() -> Path:
    """``$RECOMMENDER_CATALOG_DIR``, else the checkout's ``catalogs/``, else the packaged copy."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent  # recommender/
    checkout = here.parent / "catalogs"
    if (checkout / "accelerators.yaml").is_file():
        return checkout
    return here / "_catalogs"


class CatalogLoad:
    """The outcome of reading a directory: documents that parsed, and every problem."""

    def __init__(self, directory: Path, texts: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.texts = texts  # file name -> text already read (and verified); None: read files
        self.problems: list[Problem] = []
        self.accelerators: Document[AcceleratorFile] | None = None
        self.clouds: dict[str, Document[CloudCatalog]] = {}
        self.edge: Document[EdgeFile] | None = None
        self._read()

    def _doc(self, name: str, model: type[M], *, required: bool) -> Document[M] | None:
        path = self.directory / name
        if self.texts is not None:
            return self._doc_from_text(name, model, required=required)
        if not path.is_file():
            if required:
                self.problems.append(
                    Problem(
                        display_path(path),
                        None,
                        "",
                        "file not found (is this a catalog directory?)",
                    )
                )
            return None
        try:
            return load_document(path, model, display=display_path(path))
        except CatalogError as exc:
            self.problems.extend(exc.problems)
            return None

    def _doc_from_text(self, name: str, model: type[M], *, required: bool) -> Document[M] | None:
        assert self.texts is not None
        where = display_path(self.directory / name)
        text = self.texts.get(name)
        if text is None:
            if required:
                self.problems.append(Problem(where, None, "", "not listed in manifest.json"))
            return None
        try:
            data, lines = parse_yaml(text, where)
            if not isinstance(data, dict):
                raise CatalogError([Problem(where, 1, "", "expected a mapping at the top")])
            try:
                return Document(model.model_validate(data), lines)
            except ValidationError as exc:
                raise CatalogError(validation_problems(exc, lines)) from exc
        except CatalogError as exc:
            self.problems.extend(exc.problems)
            return None

    def _read(self) -> None:
        self.accelerators = self._doc("accelerators.yaml", AcceleratorFile, required=True)
        for cloud in CLOUD_FILES:
            doc = self._doc(f"{cloud}.yaml", CloudCatalog, required=False)
            if doc is None:
                continue
            if doc.model.cloud != cloud:
                self.problems.append(
                    doc.lines.problem(
                        ("cloud",),
                        f"file {cloud}.yaml declares cloud {doc.model.cloud!r}",
                        check="schema",
                    )
                )
                continue
            self.clouds[cloud] = doc
        self.edge = self._doc("edge.yaml", EdgeFile, required=False)
        if self.accelerators is not None:
            self.problems.extend(check_catalog(self.catalog(())))

    def catalog(self, warnings: tuple[Problem, ...]) -> Catalog:
        assert self.accelerators is not None
        return Catalog(self.accelerators, self.clouds, self.edge, self.directory, warnings)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def validate_catalog(directory: str | Path | None = None) -> list[Problem]:
    """Every problem (errors and warnings) in the catalog at ``directory``; never raises."""
    return CatalogLoad(Path(directory) if directory else default_catalog_dir()).problems


def _load_checked(directory: Path) -> Catalog:
    load = CatalogLoad(directory)
    if load.errors or load.accelerators is None:
        raise CatalogError(load.errors)
    warnings = tuple(p for p in load.problems if p.severity == "warning")
    return load.catalog(warnings)


def _file_bytes(directory: Path) -> dict[str, bytes]:
    out = {}
    for name in CATALOG_FILES:
        with contextlib.suppress(OSError):
            out[name] = (directory / name).read_bytes()
    return out


def load_catalog(directory: str | Path | None = None, *, cache: bool = True) -> Catalog:
    """Load and check the catalog; raise :class:`CatalogError` listing every error.

    With ``cache`` a catalog already loaded from the same bytes by the same code comes from
    the per-user cache (:mod:`recommender.catalog.cache`, ~15x faster than parsing).
    """
    where = Path(directory) if directory else default_catalog_dir()
    if not cache:
        return _load_checked(where)
    from recommender.catalog.cache import cached_catalog

    files = _file_bytes(where)
    # Stored only when the files still hold the bytes the key was made from after the load.
    return cached_catalog(where, files, lambda: _load_checked(where), lambda: _file_bytes(where))


def load_versioned(directory: Path, *, require_manifest: bool = True) -> tuple[Catalog, str]:
    """The catalog exactly as its manifest lists it, and its version; raise
    :class:`CatalogError` when a file is missing, differs from the manifest or changes during
    the read. Without ``require_manifest`` a directory with no manifest loads as it is (its
    version then names the bytes read)."""
    if not require_manifest and not (directory / "manifest.json").is_file():
        catalog = load_catalog(directory)
        return catalog, build_manifest(directory).version
    manifest, texts = read_verified(directory)
    load = CatalogLoad(directory, texts)
    if load.errors or load.accelerators is None:
        raise CatalogError(load.errors)
    warnings = tuple(p for p in load.problems if p.severity == "warning")
    return load.catalog(warnings), manifest.version
