"""The loaded catalog: accelerators, cloud instance families with prices, edge devices.

A :class:`Catalog` is immutable once built. Its :attr:`~Catalog.offers` table (one row per
instance x region x pricing model, as numpy columns) is built on first use and cached.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from recommender.catalog.fractions import fractional_sheets
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

__all__ = ["Catalog", "DoubtKey"]

# (cloud, instance type, accelerator, GPUs, region): one price row of the offers table.
DoubtKey = tuple[str, str, str, int, str]
_PRICE_FIELD = re.compile(r"^families\[(\d+)\]\.instances\[(\d+)\]\.prices(?:\[(\d+)\])?")


@dataclass(frozen=True, eq=False)
class Catalog:
    """Everything the scoring engine knows about hardware and prices."""

    accelerator_doc: Document[AcceleratorFile]
    cloud_docs: Mapping[str, Document[CloudCatalog]]
    edge_doc: Document[EdgeFile] | None = None
    directory: Path | None = None
    warnings: tuple[Problem, ...] = field(default=())

    @cached_property
    def accelerators(self) -> list[Accelerator]:
        """The spec sheets of ``accelerators.yaml``, then one derived sheet per fraction of a
        device the clouds sell (``L4-0.125``, see :mod:`.fractions`)."""
        base = self.accelerator_doc.model.accelerators
        return [*base, *fractional_sheets(base, self.clouds.values())]

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
    def retrieved(self) -> dt.date | None:
        """When the oldest cloud price file's data was read (its ``source.retrieved``)."""
        days = [c.source.retrieved for c in self.clouds.values() if c.source.retrieved]
        return min(days) if days else None

    @cached_property
    def price_doubts(self) -> dict[DoubtKey, str]:
        """Price rows a ``catalog validate`` price-outlier warning names, with its message.

        A split into two price groups names every region of the instance (which group is
        wrong is unknown); a lone outlier names its region.
        """
        out: dict[DoubtKey, str] = {}
        for problem in self.warnings:
            cloud = Path(problem.file).stem
            m = _PRICE_FIELD.match(problem.field)
            if problem.check != "price-outlier" or cloud not in self.cloud_docs or m is None:
                continue
            inst = self.clouds[cloud].families[int(m[1])].instances[int(m[2])]
            rows = inst.prices if m[3] is None else [inst.prices[int(m[3])]]
            for price in rows:
                key = (cloud, inst.name, inst.accelerator, inst.gpus, price.region)
                out.setdefault(key, problem.message)
        return out

    @cached_property
    def offers(self) -> OffersTable:
        return build_offers(self.clouds.values(), self.accelerators)
