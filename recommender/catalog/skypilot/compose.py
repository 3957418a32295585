"""GCP price composition: a VM's price is its host row plus its accelerator row.

SkyPilot's GCP ``vms.csv`` prices the host machine (``a2-ultragpu-1g``, ``n1-standard-8``)
and the GPUs (``A100-80GB`` x 1, with no ``InstanceType``) on separate rows, one per zone.
The price of a GPU VM is host + accelerator of the same zone and GPU count:

- accelerator-optimised machines (A2, A3, A4, G2) take a fixed accelerator and count
  (:data:`GPU_ROW`, the ``-<N>g`` suffix or :data:`G2_GPUS`); A4 host rows are 0.0 because
  the B200 row carries the whole price;
- N1 machines take T4, V100, P100 or P4 in 1, 2, 4 or 8, as far as GCP's per-count vCPU and
  memory limits (:data:`N1_LIMITS`) allow; every allowed host x count becomes an instance.
- TPU slice rows (``tpu-v6e-8``, no ``InstanceType``) carry the whole price: each becomes an
  instance of its own, with its chips (:func:`tpu_chips`) and its hosts' share of vCPUs and
  memory (:data:`TPU_HOST_PER_CHIP`).

Every source row ends up used or skipped with a reason in the report's row ledger.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace

from recommender.catalog.families import FamilySpec, classify, not_imported
from recommender.catalog.skypilot.parse import VmRow
from recommender.catalog.skypilot.report import ImportReport

__all__ = [
    "G2_GPUS",
    "GPU_ROW",
    "N1_LIMITS",
    "TPU_HOST_PER_CHIP",
    "compose_gcp",
    "host_gpus",
    "tpu_chips",
]

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
# TPU slice name -> (version, the number after it). tpu-v5p-N counts TensorCores, 2 per chip
# (https://cloud.google.com/tpu/docs/v5p: 2x2x1 = 8 cores, 4 chips, 1 host); v5e and v6e
# slices count chips (one TensorCore each: docs.cloud.google.com/tpu/docs/v5e, /v6e).
_TPU = re.compile(r"^tpu-(v5litepod|v5p|v6e)-(\d+)$")
TPU_CORES_PER_CHIP: dict[str, int] = {"v5litepod": 1, "v5p": 2, "v6e": 1}
# Host vCPUs and memory (GiB) per TPU chip: the slice's TPU VMs divided by their chips.
# Memory: "DRAM per host" / "chips per host" of docs.cloud.google.com/tpu/docs/v5e (512 GiB,
# 8) and /v6e (1536 GiB, 8); v5p 448 GiB per 4-chip host. vCPUs: ct5lp-hightpu-8t 224,
# ct6e-standard-8t 180, ct5p-hightpu-4t 208 (recalled - verify).
TPU_HOST_PER_CHIP: dict[str, tuple[float, float]] = {
    "v5litepod": (28.0, 64.0),
    "v5p": (52.0, 112.0),
    "v6e": (22.5, 192.0),
}

GpuKey = tuple[str, int, str]  # accelerator name, count, zone
Cleaner = Callable[[VmRow], VmRow | None]


def host_gpus(instance_type: str) -> int | None:
    """GPUs an accelerator-optimised GCP machine type comes with (``None`` if not one)."""
    if instance_type in G2_GPUS:
        return G2_GPUS[instance_type]
    m = _SUFFIX.search(instance_type)
    return int(m.group(1)) if m else None


def tpu_chips(name: str) -> tuple[str, int] | None:
    """``("v5p", 4)`` for ``tpu-v5p-8``; ``None`` for a name that is not a TPU slice."""
    m = _TPU.match(name)
    if m is None:
        return None
    version, units = m.group(1), int(m.group(2))
    return version, max(1, units // TPU_CORES_PER_CHIP[version])


def _tpu_instance(row: VmRow) -> VmRow | None:
    shape = tpu_chips(row.accelerator)
    if shape is None:
        return None
    version, chips = shape
    vcpus, memory = TPU_HOST_PER_CHIP[version]
    return replace(
        row,
        instance_type=row.accelerator,
        count=float(chips),
        vcpus=row.vcpus or vcpus * chips,
        memory_gib=row.memory_gib or memory * chips,
        parts=(row.origin,),
    )


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
        parts=(host.origin, gpu.origin),
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
        self.tpus: list[VmRow] = []
        for row in rows:
            if row.instance_type:
                self.hosts.append(row)
            elif (tpu := _tpu_instance(row)) is not None:
                self.tpus.append(tpu)
            elif (key := _gpu_key(row)) is not None:
                self.gpus[key] = row
            else:
                report.rows.skip(row.origin, "no-gpu-count")
        self.used: set[GpuKey] = set()
        self.used_hosts: set[object] = set()
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
            self.report.rows.skip(host.origin, "unpaired-host-row")
            return
        self.used.add(key)
        if host.price == 0.0:
            self.report.add(
                "gcp",
                "host-price-zero",
                _where(host),
                f"host 0.0 + {gpu.key} {gpu.price} ({host.origin}, {gpu.origin})",
            )
            self.report.rows.fix(host.origin, "host-price-zero")
        self.combine(host, gpu)

    def combine(self, host: VmRow, gpu: VmRow) -> None:
        self.used_hosts.add(host.origin)
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
                self.report.rows.skip(row.origin, "unpaired-gpu-row")
        for what, where in sorted(zones.items()):
            shown = ", ".join(sorted(where)[:3]) + (", ..." if len(where) > 3 else "")
            self.report.add("gcp", "unpaired-gpu-row", what, f"{len(where)} zone row(s) ({shown})")

    def unused_hosts(self, hosts: Iterable[VmRow]) -> None:
        """Hosts that took no accelerator: deliberately not imported, or unpaired."""
        per_type: dict[tuple[str, str], int] = defaultdict(int)
        for host in hosts:
            if host.origin in self.used_hosts:
                continue
            reason = not_imported("gcp", host.instance_type)
            kind = "not-imported" if reason else "unpaired-host-row"
            self.report.rows.skip(host.origin, kind)
            per_type[(host.instance_type, kind)] += 1
        for (name, kind), n in sorted(per_type.items()):
            detail = not_imported("gcp", name) or (
                "no accelerator row of its zones it may carry within GCP's per-GPU limits"
            )
            self.report.add("gcp", kind, name, f"{n} zone row(s): {detail}")


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
    c.unused_hosts(h for hosts in n1_by_zone.values() for h in hosts)
    for tpu in c.tpus:
        cleaned = clean(tpu)
        if cleaned is not None:
            c.out.append(cleaned)
    return c.out
