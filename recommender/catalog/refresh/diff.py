"""What a refresh changes: rows added, rows removed, prices that moved beyond a threshold.

A *row* is one price of one instance type in one region under one pricing model (on-demand
or spot), the unit of the offers table. The share of previous rows dropped is what
:mod:`recommender.catalog.refresh.apply` compares with ``--max-drop``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from recommender.catalog.schema import CloudCatalog

__all__ = ["CatalogDiff", "PriceChange", "Row", "diff_catalogs"]

Pricing = Literal["on_demand", "spot"]


@dataclass(frozen=True, order=True, slots=True)
class Row:
    """One priced offer: instance type (with its GPUs), region and pricing model."""

    instance_type: str
    accelerator: str
    gpus: int
    region: str
    pricing: Pricing

    def label(self) -> str:
        what = f"{self.instance_type} ({self.gpus} x {self.accelerator})"
        return f"{what} {self.region} {self.pricing}"

    def as_dict(self) -> dict[str, object]:
        return {
            "instance_type": self.instance_type,
            "accelerator": self.accelerator,
            "gpus": self.gpus,
            "region": self.region,
            "pricing": self.pricing,
        }


@dataclass(frozen=True, slots=True)
class PriceChange:
    row: Row
    old: float
    new: float

    @property
    def share(self) -> float:
        """Relative change, ``+0.10`` for 10 % dearer."""
        return (self.new - self.old) / self.old

    def as_dict(self) -> dict[str, object]:
        return {**self.row.as_dict(), "old": self.old, "new": self.new, "change": self.share}


@dataclass
class CatalogDiff:
    """Rows added and removed, and prices that changed by more than ``threshold``."""

    before: int
    after: int
    threshold: float
    added: list[Row] = field(default_factory=list)
    removed: list[Row] = field(default_factory=list)
    changed: list[PriceChange] = field(default_factory=list)
    unchanged: int = 0

    @property
    def drop_share(self) -> float:
        """Share of the previous rows the new catalog no longer has (0 without previous)."""
        return len(self.removed) / self.before if self.before else 0.0

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        return (
            f"{self.before} rows before, {self.after} after: +{len(self.added)} added, "
            f"-{len(self.removed)} removed ({self.drop_share:.1%} of previous), "
            f"{len(self.changed)} price change(s) beyond {self.threshold:.0%}"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "rows_before": self.before,
            "rows_after": self.after,
            "price_threshold": self.threshold,
            "drop_share": self.drop_share,
            "added": [r.as_dict() for r in self.added],
            "removed": [r.as_dict() for r in self.removed],
            "price_changes": [c.as_dict() for c in self.changed],
            "unchanged_or_small_change": self.unchanged,
        }


def _rows(catalog: CloudCatalog | None) -> dict[Row, float]:
    out: dict[Row, float] = {}
    if catalog is None:
        return out
    for fam in catalog.families:
        for inst in fam.instances:
            for p in inst.prices:
                for pricing, value in _priced(p.on_demand, p.spot):
                    row = Row(inst.name, inst.accelerator, inst.gpus, p.region, pricing)
                    out[row] = value
    return out


def _priced(on_demand: float | None, spot: float | None) -> Iterator[tuple[Pricing, float]]:
    if on_demand is not None:
        yield "on_demand", on_demand
    if spot is not None:
        yield "spot", spot


def diff_catalogs(
    previous: CloudCatalog | None, candidate: CloudCatalog, *, threshold: float = 0.05
) -> CatalogDiff:
    """Compare row by row; a price counts as changed when it moved more than ``threshold``."""
    old, new = _rows(previous), _rows(candidate)
    result = CatalogDiff(before=len(old), after=len(new), threshold=threshold)
    result.added = sorted(set(new) - set(old))
    result.removed = sorted(set(old) - set(new))
    for row in sorted(set(old) & set(new)):
        change = PriceChange(row, old[row], new[row])
        if abs(change.share) > threshold:
            result.changed.append(change)
        else:
            result.unchanged += 1
    result.changed.sort(key=lambda c: -abs(c.share))
    return result
