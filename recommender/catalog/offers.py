"""The columnar offers table: one row per instance type x region x pricing model.

Columns are numpy arrays so that scoring filters and predicts over every offer of every
cloud at once. Strings (cloud, region, instance type, accelerator) are stored as small
integer codes into a tuple of names; accelerator spec columns are gathered per row so that
vectorised formulas need no per-row lookups. A fractional GPU (AWS g6f: 1/8 of an L4) is one
device of the derived accelerator ``L4-0.125`` (:mod:`.fractions`), whose memory, bandwidth
and peaks are that share of the whole device's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from recommender.catalog.fractions import fraction_id
from recommender.catalog.schema import (
    Accelerator,
    CloudCatalog,
    Family,
    Precision,
    PurchaseOption,
)

__all__ = ["PRECISIONS", "PURCHASES", "Offer", "OffersTable", "build_offers"]

PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

Pricing = Literal["on-demand", "spot"]
# How an offer's price is bought: on demand, as spot, or only through a reservation /
# committed use (an on-demand list price the cloud does not sell on demand: GCP A4).
PURCHASES: tuple[PurchaseOption, ...] = ("on-demand", "spot", "reservation")


@dataclass(frozen=True, slots=True)
class Offer:
    """One row of the table, as plain Python values (for output, not for computation)."""

    cloud: str
    region: str
    family: str
    instance_type: str
    accelerator: str
    gpus: int
    gpu_memory_gb: float
    vcpus: float
    memory_gib: float
    local_disk_gb: float
    pricing: Pricing
    price_per_hour: float
    gpu_fraction: float = 1.0
    arch: str = "x86_64"
    purchase: PurchaseOption = "on-demand"

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _member(column: npt.NDArray[Any], wanted: IntArray, size: int) -> BoolArray:
    """``np.isin(column, wanted)`` for a column of codes ``0 .. size-1``, as one lookup per row
    (np.isin sorts both arrays: ~10x slower on the catalog's 10,000 rows)."""
    table = np.zeros(size, dtype=bool)
    table[wanted] = True
    return np.asarray(table[column], dtype=bool)


@dataclass(frozen=True, eq=False)
class OffersTable:
    """Offer columns (all of length ``len(self)``) plus the name tables the codes index."""

    cloud_names: tuple[str, ...]
    region_names: tuple[str, ...]
    family_names: tuple[str, ...]
    instance_names: tuple[str, ...]
    accelerators: tuple[Accelerator, ...]

    cloud: IntArray
    region: IntArray
    family: IntArray
    instance: IntArray
    acc: IntArray
    gpus: IntArray
    vcpus: FloatArray
    memory_gib: FloatArray
    local_disk_gb: FloatArray
    spot: BoolArray
    price: FloatArray
    gpu_fraction: FloatArray  # 1.0, or the share of one device (gpus is then 1)
    arm64: BoolArray  # host CPU architecture: arm64 (True) or x86_64
    purchase: IntArray  # index into PURCHASES

    # Per-row accelerator specs, gathered from ``accelerators`` by ``acc``.
    gpu_memory_gb: FloatArray
    gpu_bandwidth_gbs: FloatArray
    host_link_gbs: FloatArray
    nvlink_gbs: FloatArray
    peak_tflops: dict[Precision, FloatArray]

    def __len__(self) -> int:
        return int(self.price.shape[0])

    # -- filtering ---------------------------------------------------------------------
    def codes(
        self, names: Sequence[str], column: Literal["cloud", "region", "instance"]
    ) -> IntArray:
        table = {
            "cloud": self.cloud_names,
            "region": self.region_names,
            "instance": self.instance_names,
        }[column]
        wanted = {n.lower() for n in names}
        return np.array([i for i, n in enumerate(table) if n.lower() in wanted], dtype=np.int32)

    def accelerator_codes(self, ids: Iterable[str]) -> IntArray:
        wanted = set(ids)
        return np.array(
            [i for i, a in enumerate(self.accelerators) if a.id in wanted], dtype=np.int32
        )

    def mask(
        self,
        *,
        clouds: Sequence[str] | None = None,
        regions: Sequence[str] | None = None,
        accelerators: Iterable[str] | None = None,
        min_gpu_memory_gb: float | None = None,
        max_price: float | None = None,
        spot: bool | None = None,
        max_gpus: int | None = None,
        min_gpus: int | None = None,
        purchase: Iterable[str] | None = None,
    ) -> BoolArray:
        """Rows that satisfy every given filter (``None`` means no filter).

        ``spot=True`` keeps spot rows only, ``False`` on-demand list prices only, ``None``
        both; ``purchase`` keeps the rows bought one of those ways (:data:`PURCHASES`).
        """
        keep = np.ones(len(self), dtype=bool)
        if clouds is not None:
            keep &= _member(self.cloud, self.codes(clouds, "cloud"), len(self.cloud_names))
        if regions is not None:
            keep &= _member(self.region, self.codes(regions, "region"), len(self.region_names))
        if accelerators is not None:
            codes = self.accelerator_codes(accelerators)
            keep &= _member(self.acc, codes, len(self.accelerators))
        if min_gpu_memory_gb is not None:
            keep &= self.gpu_memory_gb >= min_gpu_memory_gb
        if max_price is not None:
            keep &= self.price <= max_price
        if spot is not None:
            keep &= self.spot == spot
        if max_gpus is not None:
            keep &= self.gpus <= max_gpus
        if min_gpus is not None:
            keep &= self.gpus >= min_gpus
        if purchase is not None:
            chosen = set(purchase)
            wanted = np.array([i for i, n in enumerate(PURCHASES) if n in chosen], dtype=np.int32)
            keep &= _member(self.purchase, wanted, len(PURCHASES))
        return keep

    def take(self, index: npt.NDArray[Any]) -> OffersTable:
        """A new table with the rows selected by a boolean mask or an index array."""
        kwargs: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                kwargs[f.name] = value[index]
            elif f.name == "peak_tflops":
                kwargs[f.name] = {k: v[index] for k, v in value.items()}
            else:
                kwargs[f.name] = value
        return OffersTable(**kwargs)

    def purchase_of(self, i: int) -> PurchaseOption:
        return PURCHASES[int(self.purchase[i])]

    def offer(self, i: int) -> Offer:
        acc = self.accelerators[int(self.acc[i])]
        return Offer(
            cloud=self.cloud_names[int(self.cloud[i])],
            region=self.region_names[int(self.region[i])],
            family=self.family_names[int(self.family[i])],
            instance_type=self.instance_names[int(self.instance[i])],
            accelerator=acc.id,
            gpus=int(self.gpus[i]),
            gpu_memory_gb=float(self.gpu_memory_gb[i]),
            vcpus=float(self.vcpus[i]),
            memory_gib=float(self.memory_gib[i]),
            local_disk_gb=float(self.local_disk_gb[i]),
            pricing="spot" if bool(self.spot[i]) else "on-demand",
            price_per_hour=float(self.price[i]),
            gpu_fraction=float(self.gpu_fraction[i]),
            arch="arm64" if bool(self.arm64[i]) else "x86_64",
            purchase=PURCHASES[int(self.purchase[i])],
        )

    def offers(self, index: Iterable[int] | None = None) -> list[Offer]:
        rows = range(len(self)) if index is None else index
        return [self.offer(int(i)) for i in rows]


class _Interner:
    def __init__(self) -> None:
        self.names: list[str] = []
        self._codes: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self.names)
            self.names.append(name)
        return code


_SPOT = PURCHASES.index("spot")


def _list_price_code(family: Family, gpus: int) -> int:
    """The on-demand list price is bought on demand, or only through a reservation."""
    option = family.purchase.list_price_option(gpus) if family.purchase else "on-demand"
    return PURCHASES.index(option)


def build_offers(
    clouds: Iterable[CloudCatalog], accelerators: Sequence[Accelerator]
) -> OffersTable:
    """Flatten cloud catalogs into columns. Instances on unknown accelerators are skipped
    (the integrity checks report them)."""
    acc_index = {a.id: i for i, a in enumerate(accelerators)}
    cloud_i, region_i, family_i, instance_i = _Interner(), _Interner(), _Interner(), _Interner()
    rows: list[
        tuple[int, int, int, int, int, int, float, float, float, float, bool, int, float]
    ] = []
    for cat in clouds:
        c = cloud_i(cat.cloud)
        for fam in cat.families:
            f = family_i(fam.name)
            for inst in fam.instances:
                a = acc_index.get(
                    fraction_id(inst.accelerator, inst.gpu_fraction)
                    if inst.gpu_fraction
                    else inst.accelerator
                )
                if a is None:
                    continue
                it = instance_i(inst.name)
                for p in inst.prices:
                    r = region_i(p.region)
                    base = (
                        c,
                        r,
                        f,
                        it,
                        a,
                        inst.gpus,
                        inst.vcpus,
                        inst.memory_gib,
                        inst.local_disk_gb,
                        inst.gpu_fraction or 1.0,
                        inst.arch == "arm64",
                    )
                    if p.on_demand is not None:
                        rows.append((*base, _list_price_code(fam, inst.gpus), p.on_demand))
                    if p.spot is not None:
                        rows.append((*base, _SPOT, p.spot))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 13
    acc = np.array(cols[4], dtype=np.int32)
    gpus = np.array(cols[5], dtype=np.int32)
    fraction = np.array(cols[9], dtype=np.float64)

    def spec(values: Sequence[float]) -> FloatArray:
        return np.asarray(values, dtype=np.float64)[acc] if len(acc) else np.zeros(0)

    peak = {
        prec: spec([a.peak_tflops.get(prec) or np.nan for a in accelerators]) for prec in PRECISIONS
    }
    return OffersTable(
        cloud_names=tuple(cloud_i.names),
        region_names=tuple(region_i.names),
        family_names=tuple(family_i.names),
        instance_names=tuple(instance_i.names),
        accelerators=tuple(accelerators),
        cloud=np.array(cols[0], dtype=np.int32),
        region=np.array(cols[1], dtype=np.int32),
        family=np.array(cols[2], dtype=np.int32),
        instance=np.array(cols[3], dtype=np.int32),
        acc=acc,
        gpus=gpus,
        vcpus=np.array(cols[6], dtype=np.float64),
        memory_gib=np.array(cols[7], dtype=np.float64),
        local_disk_gb=np.array(cols[8], dtype=np.float64),
        spot=np.array(cols[11], dtype=np.int32) == _SPOT,
        purchase=np.array(cols[11], dtype=np.int32),
        price=np.array(cols[12], dtype=np.float64),
        gpu_fraction=fraction,
        arm64=np.array(cols[10], dtype=bool),
        gpu_memory_gb=spec([a.memory_gb for a in accelerators]),
        gpu_bandwidth_gbs=spec([a.memory_bandwidth_gbs for a in accelerators]),
        host_link_gbs=spec([a.host_link.gbs_per_direction for a in accelerators]),
        nvlink_gbs=spec([a.nvlink_gbs or 0.0 for a in accelerators]),
        peak_tflops=peak,
    )
