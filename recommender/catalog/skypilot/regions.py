"""Zones collapse to regions: one on-demand and one spot price per instance and region.

On-demand is a region's price: the zones of a region normally agree, and where they do not
the most common value is kept (ties: the higher, so that a budget is not understated) and
the disagreement is reported. Spot is what the cheapest zone charges; the zones the
instance is offered in are kept in :attr:`RegionPrice.zones`. A region left with no price
at all is dropped and reported.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import TypeVar

from recommender.catalog.schema import RegionPrice
from recommender.catalog.skypilot.parse import VmRow
from recommender.catalog.skypilot.report import ImportReport

__all__ = ["collapse_regions", "most_common"]

T = TypeVar("T", float, str)


def most_common(values: Iterable[T]) -> tuple[T | None, int]:
    """The most frequent value (ties: the largest) and how many distinct values there were."""
    counts = Counter(values)
    if not counts:
        return None, 0
    value = max(counts, key=lambda v: (counts[v], v))
    return value, len(counts)


def _region_price(
    cloud: str, subject: str, region: str, rows: Sequence[VmRow], report: ImportReport
) -> RegionPrice | None:
    zones = sorted({r.zone for r in rows if r.zone})
    on_demand, distinct = most_common(r.price for r in rows if r.price)
    if distinct > 1:
        values = ", ".join(f"{r.zone or region}={r.price:g}" for r in rows if r.price)
        report.add(
            cloud,
            "on-demand-disagrees",
            f"{subject} @ {region}",
            f"zones disagree ({values}); kept {on_demand:g}",
        )
    spots = [r.spot for r in rows if r.spot]
    if on_demand is not None:
        spots = [s for s in spots if s < on_demand]
    spot = min(spots) if spots else None
    if on_demand is None and spot is None:
        where = ", ".join(sorted(str(r.origin) for r in rows)[:3])
        report.add(
            cloud, "no-price", f"{subject} @ {region}", f"no usable price in any zone ({where})"
        )
        return None
    return RegionPrice(region=region, on_demand=on_demand, spot=spot, zones=zones)


def collapse_regions(
    cloud: str, subject: str, rows: Iterable[VmRow], report: ImportReport
) -> list[RegionPrice]:
    """One :class:`RegionPrice` per region of ``rows`` (already cleaned), sorted by region."""
    by_region: dict[str, list[VmRow]] = defaultdict(list)
    for row in rows:
        by_region[row.region].append(row)
    out = []
    for region in sorted(by_region):
        price = _region_price(cloud, subject, region, by_region[region], report)
        if price is not None:
            out.append(price)
    return out
