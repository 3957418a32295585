"""Finding and loading the catalog files, with every problem reported at once.

``load_catalog()`` reads ``accelerators.yaml``, the cloud files (``aws.yaml``, ``gcp.yaml``,
``azure.yaml``) and ``edge.yaml`` from a directory, validates each against its schema, runs
the integrity checks, and refuses (with :class:`CatalogError`) a catalog with errors.
Warnings ride along on :attr:`Catalog.warnings`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from recommender.catalog.catalog import Catalog
from recommender.catalog.integrity import check_catalog
from recommender.catalog.problems import CatalogError, Problem, display_path
from recommender.catalog.schema import AcceleratorFile, CloudCatalog, EdgeFile
from recommender.catalog.yamlfile import Document, load_document

__all__ = ["CLOUD_FILES", "CatalogLoad", "default_catalog_dir", "load_catalog", "validate_catalog"]

CLOUD_FILES = ("aws", "gcp", "azure")
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

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.problems: list[Problem] = []
        self.accelerators: Document[AcceleratorFile] | None = None
        self.clouds: dict[str, Document[CloudCatalog]] = {}
        self.edge: Document[EdgeFile] | None = None
        self._read()

    def _doc(self, name: str, model: type[M], *, required: bool) -> Document[M] | None:
        path = self.directory / name
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


def load_catalog(directory: str | Path | None = None) -> Catalog:
    """Load and check the catalog; raise :class:`CatalogError` listing every error."""
    load = CatalogLoad(Path(directory) if directory else default_catalog_dir())
    if load.errors or load.accelerators is None:
        raise CatalogError(load.errors)
    warnings = tuple(p for p in load.problems if p.severity == "warning")
    return load.catalog(warnings)
