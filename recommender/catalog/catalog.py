"""The loaded catalog: accelerators, cloud instance families with prices, edge devices.

A :class:`Catalog` is immutable once built. Its :attr:`~Catalog.offers` table (one row per
instance x region x pricing model, as numpy columns) is built on first use and cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.offers import OffersTable, build_offers
from recommender.catalog.problems import Problem
from recommender.catalog.schema import (
    Accelerator,
    AcceleratorFile,
    CloudCatalog,
    EdgeDevice,
    EdgeFile,
)
from recommender.catalog.yamlfile import Document

__all__ = ["Catalog"]


@dataclass(frozen=True, eq=False)
class Catalog:
    """Everything the scoring engine knows about hardware and prices."""

    accelerator_doc: Document[AcceleratorFile]
    cloud_docs: Mapping[str, Document[CloudCatalog]]
    edge_doc: Document[EdgeFile] | None = None
    directory: Path | None = None
    warnings: tuple[Problem, ...] = field(default=())

    @property
    def accelerators(self) -> list[Accelerator]:
        return self.accelerator_doc.model.accelerators

    @property
    def clouds(self) -> dict[str, CloudCatalog]:
        return {name: doc.model for name, doc in self.cloud_docs.items()}

    @property
    def edge_devices(self) -> list[EdgeDevice]:
        return self.edge_doc.model.devices if self.edge_doc else []

    @cached_property
    def names(self) -> AcceleratorNames:
        return AcceleratorNames(self.accelerators)

    def accelerator(self, name: str) -> Accelerator:
        """Resolve any spelling of an accelerator name (see :mod:`.names`)."""
        return self.names.resolve(name)

    def edge_device(self, name: str) -> EdgeDevice:
        key = name.lower()
        for dev in self.edge_devices:
            if key in (dev.id.lower(), dev.name.lower()):
                return dev
        known = ", ".join(d.id for d in self.edge_devices)
        raise LookupError(f"unknown edge device {name!r}; known: {known}")

    @cached_property
    def offers(self) -> OffersTable:
        return build_offers(self.clouds.values(), self.accelerators)
