"""GCP machine types and accelerator types per zone -> catalog machines priced per region.

Machine types that carry GPUs (A2, A3, A4, G2) become one machine each. N1 hosts take
attached GPUs: every N1 standard / highmem / highcpu shape in a zone is combined with each
T4, V100, P100 or P4 count (1, 2, 4, 8, up to the zone's ``maximum_cards_per_instance``)
whose vCPU and memory limits it fits. A shape is offered in a region when some zone of the
region has it; its price is host + GPUs from :class:`~.gcp_pricing.SkuPrices`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh.base import Fetched, Machine, MachineKey, Quote, Skipped
from recommender.catalog.refresh.gcp_pricing import SkuPrices
from recommender.catalog.refresh.mapping import FamilyMatch, resolve_family

__all__ = ["ATTACHED_NAME", "N1_LIMITS", "ZoneMachines", "build_offers"]

PRICE_MODEL = "host + attached GPUs (Cloud Billing SKUs: vCPUs x core + GiB x RAM + GPUs x GPU)"
N1_HOST = re.compile(r"n1-(standard|highmem|highcpu)-\d+")
LOCAL_SSD_PARTITION_GB = 375.0

# GPUs per N1 instance -> (most vCPUs, most memory GiB) the host may have.
# Source: https://cloud.google.com/compute/docs/gpus (N1 GPU limits; SkyPilot's
# gcp_catalog.py quotes the same table). P100 x4 is 64 vCPUs in some zones; we use 96.
N1_LIMITS: dict[str, dict[int, tuple[int, int]]] = {
    "nvidia-tesla-t4": {1: (48, 312), 2: (48, 312), 4: (96, 624)},
    "nvidia-tesla-v100": {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)},
    "nvidia-tesla-p100": {1: (16, 104), 2: (32, 208), 4: (96, 624)},
    "nvidia-tesla-p4": {1: (24, 156), 2: (48, 312), 4: (96, 624)},
}
# GCP accelerator type -> the name family_table.py uses for the attached GPU.
ATTACHED_NAME = {
    "nvidia-tesla-t4": "T4",
    "nvidia-tesla-v100": "V100",
    "nvidia-tesla-p100": "P100",
    "nvidia-tesla-p4": "P4",
}


@dataclass
class ZoneMachines:
    """What one zone lists: machine types and accelerator types."""

    zone: str
    region: str
    machine_types: list[Any] = field(default_factory=list)
    accelerator_types: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Shape:
    machine: Machine
    series: str
    accelerator_type: str
    count: int


def _machine(mt: Any, match: FamilyMatch, count: int) -> Machine:
    ssd = getattr(mt, "bundled_local_ssds", None)
    partitions = int(getattr(ssd, "partition_count", 0) or 0)
    return Machine(
        name=mt.name,
        family=match.family,
        family_title=match.title,
        price_model=PRICE_MODEL,
        accelerator=match.accelerator,
        gpus=match.true_gpus or count,
        vcpus=float(mt.guest_cpus),
        memory_gib=mt.memory_mb / 1024,
        local_disk_gb=partitions * LOCAL_SSD_PARTITION_GB,
        arch="arm64" if str(getattr(mt, "architecture", "")).upper() == "ARM64" else "x86_64",
    )


def _resolved(match: FamilyMatch | Skipped, region: str, fetched: Fetched) -> FamilyMatch | None:
    if isinstance(match, Skipped):
        fetched.skip(replace(match, regions=(region,)))
        return None
    if match.note and match.note not in fetched.notes:
        fetched.notes.append(match.note)
    return match


def _builtin(mt: Any, region: str, names: AcceleratorNames, fetched: Fetched) -> _Shape | None:
    acc = mt.accelerators[0]
    atype, count = acc.guest_accelerator_type, int(acc.guest_accelerator_count)
    guess = mt.name.rsplit("-", 1)[0]
    match = _resolved(
        resolve_family("gcp", mt.name, atype, names, family_guess=guess), region, fetched
    )
    if match is None:
        return None
    return _Shape(_machine(mt, match, count), mt.name.split("-")[0], atype, count)


def _attached(
    hosts: list[Any], at: Any, region: str, names: AcceleratorNames, fetched: Fetched
) -> list[_Shape]:
    out: list[_Shape] = []
    for count, (max_cpus, max_gib) in N1_LIMITS[at.name].items():
        if count > int(at.maximum_cards_per_instance or 0):
            continue
        for host in hosts:
            if host.guest_cpus > max_cpus or host.memory_mb / 1024 > max_gib:
                continue
            found = resolve_family(
                "gcp", host.name, at.name, names, attached=ATTACHED_NAME[at.name]
            )
            match = _resolved(found, region, fetched)
            if match is not None:
                out.append(_Shape(_machine(host, match, count), "n1", at.name, count))
    return out


def _shapes(zm: ZoneMachines, names: AcceleratorNames, fetched: Fetched) -> list[_Shape]:
    hosts: list[Any] = []
    out: list[_Shape] = []
    for mt in zm.machine_types:
        state = str(getattr(getattr(mt, "deprecated", None), "state", "") or "")
        if state in ("OBSOLETE", "DELETED"):
            continue
        if mt.accelerators:
            shape = _builtin(mt, zm.region, names, fetched)
            if shape is not None:
                out.append(shape)
        elif N1_HOST.fullmatch(mt.name):
            hosts.append(mt)
    for at in zm.accelerator_types:
        if at.name in N1_LIMITS:
            out.extend(_attached(hosts, at, zm.region, names, fetched))
    return out


def _price(shape: _Shape, prices: SkuPrices, region: str, *, spot: bool) -> float | None:
    host = prices.host(shape.series, region, spot=spot)
    gpu = prices.gpu(shape.accelerator_type, region, spot=spot)
    if host is None or gpu is None:
        return None
    core, ram = host
    m = shape.machine
    return core * m.vcpus + ram * m.memory_gib + gpu * shape.count


def build_offers(
    zones: dict[str, ZoneMachines], prices: SkuPrices, names: AcceleratorNames, fetched: Fetched
) -> None:
    """Add every priced shape of every refreshed region to ``fetched``; report the rest."""
    found: dict[tuple[MachineKey, str], tuple[_Shape, list[str]]] = {}
    for zm in sorted(zones.values(), key=lambda z: z.zone):
        if zm.region not in fetched.regions:
            continue
        for shape in _shapes(zm, names, fetched):
            entry = found.setdefault((shape.machine.key, zm.region), (shape, []))
            entry[1].append(zm.zone)
    for (_, region), (shape, zone_list) in sorted(found.items()):
        on_demand = _price(shape, prices, region, spot=False)
        spot = _price(shape, prices, region, spot=True)
        if on_demand is None and spot is None:
            fetched.skip(
                Skipped(
                    shape.machine.name,
                    "no-price",
                    f"no Compute Engine SKU prices its {shape.series} cores/RAM and "
                    f"{shape.accelerator_type} GPUs there",
                    shape.accelerator_type,
                    (region,),
                )
            )
            continue
        fetched.add(shape.machine, Quote(region, on_demand, spot, tuple(sorted(zone_list))))
