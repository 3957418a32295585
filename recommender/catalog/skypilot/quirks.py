"""Row-level fixes for known SkyPilot data quirks, each one recorded in the import report.

- An empty price cell stays absent (``None``); a 0.0 price is treated as empty, except on a
  GCP host row, where it means the accelerator row carries the whole price.
- A spot price equal to on-demand is a placeholder and is dropped; one above on-demand is
  wrong on its face and is dropped too. Equality allows for the 4-decimal rounding of
  SkyPilot's spot column (on-demand 27.43298, spot 27.433000).
- AWS local and wavelength zones (``use1-atl2-az1``) are listed under their parent region
  but are separate locations with their own prices: their rows are not merged.
- An instance type found in several files of one cloud is taken from the file that covers
  the most regions for it (Azure: the all-regions file over SkyPilot's US-only v8 file).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import fields, replace

from recommender.catalog.skypilot.parse import Origin, VmRow
from recommender.catalog.skypilot.report import ImportReport

__all__ = ["PRICE_PLACEHOLDERS", "RowCleaner", "choose_files", "drop_duplicates", "is_local_zone"]

# AWS zone ids (use1-az1) and zone names (us-east-1a); anything else is a local/wavelength zone.
_AWS_ZONE_ID = re.compile(r"^[a-z]+\d+-az\d+$")
_AWS_ZONE_NAME = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+[a-z]$")
SPOT_ROUNDING = 5e-5  # half a unit of SkyPilot's 4th spot decimal
# Prices a source writes where it has none (catalogs/sources/skypilot/README.md: the anycloud
# GCP TPU file uses 700.0 in 40 rows, for on-demand and spot alike).
PRICE_PLACEHOLDERS: dict[str, frozenset[float]] = {"gcp": frozenset({700.0})}


def is_local_zone(cloud: str, zone: str | None) -> bool:
    """An AWS local or wavelength zone (``use1-atl2-az1``, ``us-west-2-lax-1a``)."""
    if cloud != "aws" or not zone:
        return False
    return not (_AWS_ZONE_ID.match(zone) or _AWS_ZONE_NAME.match(zone))


def _where(row: VmRow) -> str:
    return f"{row.key} @ {row.zone or row.region}"


class RowCleaner:
    """Applies the row-level fixes to each row once (memoised by origin) and reports them."""

    def __init__(self, cloud: str, report: ImportReport) -> None:
        self.cloud = cloud
        self.report = report
        self._done: dict[Origin, VmRow | None] = {}

    def __call__(self, row: VmRow) -> VmRow | None:
        if row.origin not in self._done:
            self._done[row.origin] = self._clean(row)
        return self._done[row.origin]

    def _add(self, kind: str, row: VmRow, detail: str) -> None:
        self.report.add(self.cloud, kind, _where(row), f"{detail} ({row.origin})")
        for origin in row.origins:
            self.report.rows.fix(origin, kind)

    def _placeholder(self, row: VmRow, price: float | None) -> float | None:
        if price is not None and price in PRICE_PLACEHOLDERS.get(self.cloud, ()):
            self._add("price-placeholder", row, f"price {price} is a placeholder")
            return None
        return price

    def _clean(self, row: VmRow) -> VmRow | None:
        if is_local_zone(self.cloud, row.zone):
            self._add("local-zone", row, f"zone {row.zone} is not part of {row.region}")
            for origin in row.origins:
                self.report.rows.skip(origin, "local-zone")
            return None
        price, spot = self._placeholder(row, row.price), self._placeholder(row, row.spot)
        host_zero = self.cloud == "gcp" and bool(row.instance_type) and price == 0.0
        if price == 0.0 and not host_zero:
            price = None
        if spot == 0.0 and not host_zero:
            spot = None
        if price is None:
            self._add("empty-on-demand", row, "no on-demand price")
        if spot is None and not host_zero:
            self._add("empty-spot", row, "no spot price")
        if price is not None and spot is not None and not host_zero:
            if abs(spot - price) <= SPOT_ROUNDING:
                self._add("spot-placeholder", row, f"spot {spot} = on-demand {price}")
                spot = None
            elif spot > price:
                self._add("spot-above-on-demand", row, f"spot {spot} > on-demand {price}")
                spot = None
        if (price, spot) == (row.price, row.spot):
            return row
        return replace(row, price=price, spot=spot)


def _identity(row: VmRow) -> tuple[object, ...]:
    return (row.origin.file, *(getattr(row, f.name) for f in fields(row) if f.name != "origin"))


def drop_duplicates(cloud: str, rows: Sequence[VmRow], report: ImportReport) -> list[VmRow]:
    """Rows equal in every cell to an earlier row of the same file are skipped, reported."""
    first: dict[tuple[object, ...], VmRow] = {}
    out = []
    for row in rows:
        key = _identity(row)
        if key in first:
            report.add(cloud, "duplicate-row", _where(row), f"{row.origin} = {first[key].origin}")
            report.rows.skip(row.origin, "duplicate-row")
            continue
        first[key] = row
        out.append(row)
    return out


def choose_files(cloud: str, rows: Sequence[VmRow], report: ImportReport) -> list[VmRow]:
    """Keep each offering (:attr:`VmRow.key`) from one file: the one with the most regions.

    Ties go to the file whose name sorts first. Every choice between files is reported.
    """
    regions: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for row in rows:
        regions[row.key][row.origin.file].add(row.region)
    chosen: dict[str, str] = {}
    for key, per_file in regions.items():
        ranked = sorted(per_file.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        chosen[key] = ranked[0][0]
        if len(ranked) > 1:
            others = ", ".join(f"{f} ({len(r)})" for f, r in ranked[1:])
            report.add(
                cloud,
                "file-choice",
                key,
                f"taken from {ranked[0][0]} ({len(ranked[0][1])} regions) over {others}",
            )
    kept = []
    for row in rows:
        if chosen[row.key] == row.origin.file:
            kept.append(row)
        else:
            report.rows.skip(row.origin, "file-choice")
    return kept
