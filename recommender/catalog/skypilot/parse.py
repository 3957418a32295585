"""Reading SkyPilot-format ``vms.csv`` files into typed rows, with file:line errors.

SkyPilot keeps one CSV per cloud (``~/.sky/catalogs/<version>/<cloud>/vms.csv``). Columns are
named, not positioned, and differ a little per cloud: AWS has ``AvailabilityZone``, ``Arch``
and local-disk columns, Azure has neither zone nor disk, GCP mixes host rows (an
``InstanceType``) with accelerator rows (no ``InstanceType``). ``GpuInfo`` is a Python-repr
dict on AWS and GCP (read with :func:`ast.literal_eval`; its shape differs for AWS Neuron
devices) and a bare accelerator name on Azure.
"""

from __future__ import annotations

import ast
import csv
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "REQUIRED_COLUMNS",
    "GpuInfo",
    "Origin",
    "SkyPilotFormatError",
    "VmRow",
    "parse_gpu_info",
    "read_vms",
]

REQUIRED_COLUMNS = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "SpotPrice",
    "Region",
)
_MIB_PER_GIB = 1024.0


class SkyPilotFormatError(ValueError):
    """A CSV that is not in SkyPilot's format; the message names file, line and column."""

    def __init__(self, file: str, line: int, column: str, message: str) -> None:
        self.file, self.line, self.column = file, line, column
        where = f"{file}:{line}" + (f" {column}:" if column else "")
        super().__init__(f"{where} {message}")


@dataclass(frozen=True, slots=True, order=True)
class Origin:
    """Where a row came from: the CSV's display name and its 1-based line (header = 1)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """What ``GpuInfo`` says about the devices: name, count, memory per device."""

    name: str | None
    count: int | None
    memory_gib: float | None


@dataclass(frozen=True, slots=True)
class VmRow:
    """One row of a ``vms.csv``: an instance (or a GCP accelerator) in one zone or region.

    Prices are USD per hour, ``None`` where the CSV cell is empty. ``zone`` is ``None`` for
    clouds priced per region (Azure).
    """

    instance_type: str  # "" on a GCP accelerator row
    accelerator: str  # SkyPilot accelerator name, "" when the row has none
    count: float | None  # AcceleratorCount as written (Azure has fractions)
    vcpus: float | None
    memory_gib: float | None
    gpu_memory_gib: float | None  # per device, from GpuInfo
    price: float | None
    spot: float | None
    region: str
    zone: str | None
    arch: str
    local_disk_gb: float
    origin: Origin
    parts: tuple[Origin, ...] = ()  # GCP composites: the host and accelerator rows

    @property
    def origins(self) -> tuple[Origin, ...]:
        """Every source row this row stands for (itself, or a composite's parts)."""
        return self.parts or (self.origin,)

    @property
    def key(self) -> str:
        """What the row offers: its instance type, or ``ACC x N`` on an accelerator row."""
        if self.instance_type:
            return self.instance_type
        return f"{self.accelerator} x {_count_text(self.count)}"


def _count_text(count: float | None) -> str:
    if count is None:
        return "?"
    return str(int(count)) if count.is_integer() else f"{count:g}"


def _number(raw: str | None, origin: Origin, column: str) -> float | None:
    text = (raw or "").strip()
    if not text or text.lower() in {"nan", "none", "null"}:
        return None
    try:
        value = float(text)
    except ValueError:
        raise SkyPilotFormatError(
            origin.file, origin.line, column, f"{text!r} is not a number"
        ) from None
    if math.isnan(value) or value < 0:
        raise SkyPilotFormatError(
            origin.file, origin.line, column, f"{text!r} is not a non-negative number"
        )
    return value


def _gpu_list(info: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    gpus = info.get("Gpus")
    if not isinstance(gpus, list):
        return []
    return [g for g in gpus if isinstance(g, Mapping)]


def parse_gpu_info(raw: str, origin: Origin) -> GpuInfo:
    """Read ``GpuInfo``: a Python-repr dict (AWS GPU, AWS Neuron, GCP) or a bare name (Azure).

    AWS GPU: ``{'Gpus': [{'Name', 'Count', 'MemoryInfo': {'SizeInMiB'}}], 'TotalGpuMemoryInMiB'}``;
    AWS Neuron: ``{'TotalNeuronDeviceMemoryInMiB', 'Gpus': [{'Count', 'Name', 'CoreInfo',
    'MemoryInfo'}]}``; GCP: ``{'Gpus': [{'MemoryInfo': {'SizeInMiB'}}]}``.
    """
    text = raw.strip()
    if not text:
        return GpuInfo(None, None, None)
    if not text.startswith("{"):
        return GpuInfo(text, None, None)
    try:
        info = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise SkyPilotFormatError(
            origin.file, origin.line, "GpuInfo", f"not a Python-repr dict ({exc})"
        ) from None
    if not isinstance(info, Mapping):
        raise SkyPilotFormatError(origin.file, origin.line, "GpuInfo", "not a dict")
    gpus = _gpu_list(info)
    first = gpus[0] if gpus else {}
    name = first.get("Name")
    count = sum(int(g.get("Count", 0) or 0) for g in gpus) or None
    memory = first.get("MemoryInfo", {})
    mib = memory.get("SizeInMiB") if isinstance(memory, Mapping) else None
    if mib is None and count:
        total = info.get("TotalGpuMemoryInMiB") or info.get("TotalNeuronDeviceMemoryInMiB")
        mib = total / count if isinstance(total, int | float) else None
    return GpuInfo(
        str(name) if name else None,
        count,
        round(float(mib) / _MIB_PER_GIB, 3) if isinstance(mib, int | float) and mib else None,
    )


def _local_disk(row: Mapping[str, str], origin: Origin) -> float:
    size = _number(row.get("LocalDiskSize"), origin, "LocalDiskSize")
    count = _number(row.get("LocalDiskCount"), origin, "LocalDiskCount")
    if size is None:
        return 0.0
    return size * (count if count is not None else 1.0)


def _row(raw: Mapping[str, str], origin: Origin) -> VmRow:
    region = (raw.get("Region") or "").strip()
    if not region:
        raise SkyPilotFormatError(origin.file, origin.line, "Region", "empty region")
    info = parse_gpu_info(raw.get("GpuInfo") or "", origin)
    arch = (raw.get("Arch") or "").strip().lower()
    return VmRow(
        instance_type=(raw.get("InstanceType") or "").strip(),
        accelerator=(raw.get("AcceleratorName") or "").strip(),
        count=_number(raw.get("AcceleratorCount"), origin, "AcceleratorCount"),
        vcpus=_number(raw.get("vCPUs"), origin, "vCPUs"),
        memory_gib=_number(raw.get("MemoryGiB"), origin, "MemoryGiB"),
        gpu_memory_gib=info.memory_gib,
        price=_number(raw.get("Price"), origin, "Price"),
        spot=_number(raw.get("SpotPrice"), origin, "SpotPrice"),
        region=region,
        zone=(raw.get("AvailabilityZone") or "").strip() or None,
        arch="arm64" if arch in {"arm64", "aarch64"} else "x86_64",
        local_disk_gb=_local_disk(raw, origin),
        origin=origin,
    )


def read_vms(path: Path, display: str | None = None) -> Iterator[VmRow]:
    """Every data row of one SkyPilot-format CSV; raises :class:`SkyPilotFormatError`."""
    name = display or path.name
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise SkyPilotFormatError(
                name,
                1,
                "",
                f"missing column(s) {', '.join(missing)}: not a SkyPilot vms.csv "
                f"(expected at least {', '.join(REQUIRED_COLUMNS)})",
            )
        for raw in reader:
            origin = Origin(name, reader.line_num)
            if None in raw:
                raise SkyPilotFormatError(
                    name, origin.line, "", f"more cells than the {len(header)} header columns"
                )
            yield _row(raw, origin)
