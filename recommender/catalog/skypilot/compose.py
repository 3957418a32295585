"""GCP price composition: a VM's price is its host row plus its accelerator row.

SkyPilot's GCP ``vms.csv`` prices the host machine (``a2-ultragpu-1g``, ``n1-standard-8``)
and the GPUs (``A100-80GB`` x 1, with no ``InstanceType``) on separate rows, one per zone.
The price of a GPU VM is host + accelerator of the same zone and GPU count:

- accelerator-optimised machines (A2, A3, A4, G2) take a fixed accelerator and count
  (:data:`GPU_ROW`, the ``-<N>g`` suffix or :data:`G2_GPUS`); A4 host rows are 0.0 because
  the B200 row carries the whole price;
- N1 machines take T4, V100, P100 or P4 in 1, 2, 4 or 8, as far as GCP's per-count vCPU and
  memory limits (:data:`N1_LIMITS`) allow; every allowed host x count becomes an instance.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace

from recommender.catalog.families import FamilySpec, classify
from recommender.catalog.skypilot.parse import VmRow
from recommender.catalog.skypilot.report import ImportReport

__all__ = ["G2_GPUS", "GPU_ROW", "N1_LIMITS", "compose_gcp", "host_gpus"]

# Family -> the SkyPilot accelerator row its hosts are priced with.
GPU_ROW: dict[str, str] = {
    "a2-highgpu": "A100",
    "a2-megagpu": "A100",
    "a2-ultragpu": "A100-80GB",
    "a3-highgpu": "H100",
    "a3-edgegpu": "H100",
    "a3-megagpu": "H100-MEGA",
    "a3-ultragpu": "H200",
    "a4-highgpu": "B200",
    "g2-standard": "L4",
}
# G2 machine type -> L4 GPUs (https://cloud.google.com/compute/docs/gpus#l4-gpus).
G2_GPUS: dict[str, int] = {
    "g2-standard-4": 1,
    "g2-standard-8": 1,
    "g2-standard-12": 1,
    "g2-standard-16": 1,
    "g2-standard-24": 2,
    "g2-standard-32": 1,
    "g2-standard-48": 4,
    "g2-standard-96": 8,
}
# GPU -> count -> (most vCPUs, most memory GB) an N1 host may have with that many GPUs.
# Source: https://cloud.google.com/compute/docs/gpus (as tabulated in SkyPilot's
# sky/clouds/service_catalog/gcp_catalog.py, _NUM_ACC_TO_MAX_CPU_AND_MEMORY). The P100 x 4
# limit is lower in us-east1-c, europe-west1-b/d; that zone exception is not modelled.
N1_LIMITS: dict[str, dict[int, tuple[float, float]]] = {
    "T4": {1: (48, 312), 2: (48, 312), 4: (96, 624)},
    "V100": {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)},
    "P4": {1: (24, 156), 2: (48, 312), 4: (96, 624)},
    "P100": {1: (16, 104), 2: (32, 208), 4: (96, 624)},
}
_SUFFIX = re.compile(r"-(\d+)g(?:-nolssd)?$")

GpuKey = tuple[str, int, str]  # accelerator name, count, zone
Cleaner = Callable[[VmRow], VmRow | None]


def host_gpus(instance_type: str) -> int | None:
    """GPUs an accelerator-optimised GCP machine type comes with (``None`` if not one)."""
    if instance_type in G2_GPUS:
        return G2_GPUS[instance_type]
    m = _SUFFIX.search(instance_type)
    return int(m.group(1)) if m else None


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a + b, 6)


def _combine(host: VmRow, gpu: VmRow) -> VmRow:
    return replace(
        host,
        accelerator=gpu.accelerator,
        count=gpu.count,
        gpu_memory_gib=gpu.gpu_memory_gib,
        price=_add(host.price, gpu.price),
        spot=_add(host.spot, gpu.spot),
    )


def _gpu_key(row: VmRow) -> GpuKey | None:
    if row.count is None or not row.count.is_integer():
        return None
    return (row.accelerator, int(row.count), row.zone or row.region)


def _fits_n1(host: VmRow, gpu: str, count: int) -> bool:
    limit = N1_LIMITS.get(gpu, {}).get(count)
    if limit is None or host.vcpus is None or host.memory_gib is None:
        return False
    return host.vcpus <= limit[0] and host.memory_gib <= limit[1]


def _where(row: VmRow) -> str:
    return f"{row.key} @ {row.zone or row.region}"


class _Composer:
    def __init__(self, rows: Iterable[VmRow], report: ImportReport, clean: Cleaner) -> None:
        self.report = report
        self.clean = clean
        self.hosts: list[VmRow] = []
        self.gpus: dict[GpuKey, VmRow] = {}
        for row in rows:
            if row.instance_type:
                self.hosts.append(row)
            elif (key := _gpu_key(row)) is not None:
                self.gpus[key] = row
        self.used: set[GpuKey] = set()
        self.out: list[VmRow] = []
        self._n1: dict[tuple[str, str], bool] = {}

    def takes(self, host: VmRow, gpu: str) -> bool:
        """Whether ``host`` is an N1 machine type that may carry ``gpu`` (cached)."""
        key = (host.instance_type, gpu)
        if key not in self._n1:
            self._n1[key] = classify("gcp", host.instance_type, gpu) is not None
        return self._n1[key]

    def fixed(self, host: VmRow, spec: FamilySpec) -> None:
        gpu_name, count = GPU_ROW.get(spec.family), host_gpus(host.instance_type)
        key = (gpu_name or "", count or 0, host.zone or host.region)
        gpu = self.gpus.get(key)
        if gpu is None:
            self.report.add(
                "gcp",
                "unpaired-host-row",
                host.instance_type,
                f"no {gpu_name} x {count} row in {key[2]} ({host.origin})",
            )
            return
        self.used.add(key)
        if host.price == 0.0:
            self.report.add(
                "gcp",
                "host-price-zero",
                _where(host),
                f"host 0.0 + {gpu.key} {gpu.price} ({host.origin}, {gpu.origin})",
            )
        self.combine(host, gpu)

    def combine(self, host: VmRow, gpu: VmRow) -> None:
        clean_host, clean_gpu = self.clean(host), self.clean(gpu)
        if clean_host is not None and clean_gpu is not None:
            self.out.append(_combine(clean_host, clean_gpu))

    def n1(self, hosts_by_zone: dict[str, list[VmRow]]) -> None:
        for key in sorted(self.gpus):
            name, count, zone = key
            if name not in N1_LIMITS:
                continue
            for host in hosts_by_zone.get(zone, []):
                if self.takes(host, name) and _fits_n1(host, name, count):
                    self.used.add(key)
                    self.combine(host, self.gpus[key])

    def unpaired_gpus(self) -> None:
        zones: dict[str, list[str]] = defaultdict(list)
        for key, row in self.gpus.items():
            if key not in self.used:
                zones[row.key].append(key[2])
        for what, where in sorted(zones.items()):
            shown = ", ".join(sorted(where)[:3]) + (", ..." if len(where) > 3 else "")
            self.report.add("gcp", "unpaired-gpu-row", what, f"{len(where)} zone row(s) ({shown})")


def compose_gcp(rows: Iterable[VmRow], report: ImportReport, clean: Cleaner) -> list[VmRow]:
    """Host + accelerator composites, one per host row x fitting accelerator row of its zone.

    Each part goes through ``clean`` (the row-level quirk fixes) before the prices are added,
    so a spot price above on-demand on the accelerator row drops the composite's spot price.
    Hosts of no GPU family (CPU-only machines in a full SkyPilot file) are ignored; host and
    accelerator rows left without a partner are reported.
    """
    c = _Composer(rows, report, clean)
    n1_by_zone: dict[str, list[VmRow]] = defaultdict(list)
    for host in c.hosts:
        spec = classify("gcp", host.instance_type)
        if spec is not None:
            c.fixed(host, spec)
        else:
            n1_by_zone[host.zone or host.region].append(host)
    c.n1(n1_by_zone)
    c.unpaired_gpus()
    return c.out
