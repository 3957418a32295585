"""Merging what a refresher fetched into the previous catalog, region by region.

A region the refresher answered for is replaced wholesale by the new rows (an instance type
gone from it is gone). A region it did not answer for (throttled to death, not requested,
not enabled for this account) keeps the previous rows, and the result says so. New prices
are sanitised first: a spot price not below on-demand (a placeholder or an error) is dropped
and noted, as is a price <= 0.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace

from recommender.catalog.refresh.base import Fetched, Machine, MachineKey, Quote, RefreshError
from recommender.catalog.schema import (
    CloudCatalog,
    Family,
    InstanceType,
    RegionPrice,
    Source,
)

__all__ = ["MergeResult", "merge"]


@dataclass
class MergeResult:
    """The candidate catalog, and which regions kept their previous rows and why."""

    catalog: CloudCatalog
    kept_regions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class _FamilyInfo:
    title: str | None
    price_model: str | None


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _clean(machine: Machine, quote: Quote, notes: list[str]) -> RegionPrice | None:
    """``quote`` as a price row, or ``None`` when it has no usable price left."""
    on_demand = quote.on_demand if quote.on_demand and quote.on_demand > 0 else None
    spot = quote.spot if quote.spot and quote.spot > 0 else None
    if on_demand is not None and spot is not None and spot >= on_demand:
        notes.append(
            f"{machine.name} in {quote.region}: spot {spot:g} not below on-demand "
            f"{on_demand:g} (a placeholder or an error); spot price dropped"
        )
        spot = None
    if on_demand is None and spot is None:
        return None
    return RegionPrice(
        region=quote.region,
        on_demand=None if on_demand is None else round(on_demand, 6),
        spot=None if spot is None else round(spot, 6),
        zones=sorted(quote.zones),
    )


def _instance(machine: Machine, prices: list[RegionPrice]) -> InstanceType:
    return InstanceType(
        name=machine.name,
        accelerator=machine.accelerator,
        gpus=machine.gpus,
        vcpus=machine.vcpus,
        memory_gib=round(machine.memory_gib, 3),
        local_disk_gb=round(machine.local_disk_gb, 1),
        gpu_memory_gib=machine.gpu_memory_gib,
        arch=machine.arch,
        prices=sorted(prices, key=lambda p: p.region),
    )


def _kept_reason(region: str, fetched: Fetched, requested: tuple[str, ...]) -> str:
    if region in fetched.failed:
        return f"refresh failed: {fetched.failed[region]}"
    if requested and region not in requested:
        return "not requested (--regions)"
    return "not visible to these credentials (region not enabled or not listed)"


def merge(
    previous: CloudCatalog | None,
    fetched: Fetched,
    *,
    requested: tuple[str, ...] = (),
    today: dt.date | None = None,
) -> MergeResult:
    """The catalog after replacing the refreshed regions of ``previous`` with ``fetched``."""
    notes: list[str] = []
    families: dict[str, _FamilyInfo] = {}
    rows: dict[MachineKey, tuple[InstanceType | Machine, str, list[RegionPrice]]] = {}
    kept: dict[str, str] = {}
    if previous is not None:
        for fam in previous.families:
            families[fam.name] = _FamilyInfo(fam.title, fam.price_model)
            for inst in fam.instances:
                old = [p for p in inst.prices if p.region not in fetched.regions]
                for p in old:
                    kept.setdefault(p.region, _kept_reason(p.region, fetched, requested))
                key = (inst.name, inst.accelerator, inst.gpus)
                rows[key] = (inst, fam.name, old)
    for key, machine in fetched.machines.items():
        families[machine.family] = _FamilyInfo(machine.family_title, machine.price_model)
        new = [
            row
            for quote in fetched.quotes.get(key, {}).values()
            if quote.region in fetched.regions
            and (row := _clean(machine, quote, notes)) is not None
        ]
        old = rows[key][2] if key in rows else []
        shape = rows[key][0] if key in rows else None
        if machine.gpu_memory_gib is None and isinstance(shape, InstanceType):
            # The API does not report per-device memory (GCP, Azure): keep what we knew.
            machine = replace(machine, gpu_memory_gib=shape.gpu_memory_gib)
        rows[key] = (machine, machine.family, old + new)
    catalog = _assemble(previous, fetched, families, rows, kept, today)
    return MergeResult(catalog, dict(sorted(kept.items())), notes)


def _assemble(
    previous: CloudCatalog | None,
    fetched: Fetched,
    families: dict[str, _FamilyInfo],
    rows: dict[MachineKey, tuple[InstanceType | Machine, str, list[RegionPrice]]],
    kept: dict[str, str],
    today: dt.date | None,
) -> CloudCatalog:
    by_family: dict[str, list[InstanceType]] = defaultdict(list)
    for shape, family, prices in rows.values():
        if not prices:
            continue
        if isinstance(shape, Machine):
            by_family[family].append(_instance(shape, prices))
        else:
            by_family[family].append(shape.model_copy(update={"prices": prices}))
    out: list[Family] = []
    for name in sorted(by_family):
        info = families[name]
        instances = sorted(
            by_family[name], key=lambda i: (i.gpus, i.vcpus, i.memory_gib, _natural(i.name))
        )
        out.append(
            Family(name=name, title=info.title, price_model=info.price_model, instances=instances)
        )
    if not out:
        raise RefreshError(
            f"the {fetched.cloud} refresh found no GPU instance type with a price "
            "(and there are no previous rows to keep); nothing to write"
        )
    regions = {p.region for fam in out for inst in fam.instances for p in inst.prices}
    note = f"refreshed regions: {len(fetched.regions)}"
    if kept:
        note += f"; previous rows kept for {len(kept)} region(s): {', '.join(sorted(kept))}"
    source = Source(
        name=fetched.source.name,
        url=fetched.source.url,
        retrieved=today or dt.date.today(),
        note=note,
    )
    cloud = previous.cloud if previous is not None else fetched.cloud
    return CloudCatalog(cloud=cloud, source=source, regions=sorted(regions), families=out)
