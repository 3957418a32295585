"""Cleaned rows -> instance types -> families, named by :mod:`recommender.catalog.families`.

Rows are grouped per offering (instance type, accelerator row, GPU count); each group becomes
one :class:`InstanceType` with its shape (the most common vCPUs, memory, GPU memory, local
disk and architecture of its rows) and its per-region prices. The family table names the
family and the canonical accelerator id; instance-level quirks are fixed and reported here:
fractional GPUs (skipped), counts the source gets wrong (``true_gpus``), rows without an
accelerator name (inferred from the family) or naming another accelerator (the family wins),
and GPU instance types no family covers (skipped).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from recommender.catalog.families import FamilySpec, classify
from recommender.catalog.names import AcceleratorNames
from recommender.catalog.schema import Family, InstanceType
from recommender.catalog.skypilot.parse import VmRow
from recommender.catalog.skypilot.regions import collapse_regions, most_common
from recommender.catalog.skypilot.report import ImportReport

__all__ = ["build_families", "natural_key"]

Cleaner = Callable[[VmRow], VmRow | None]
GroupKey = tuple[str, str, float | None]


def natural_key(name: str) -> tuple[tuple[int, str], ...]:
    """``g2-standard-8`` before ``g2-standard-12``: digit runs compare as numbers."""
    return tuple(
        (int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", name)
    )


class _Builder:
    def __init__(
        self, cloud: str, report: ImportReport, names: AcceleratorNames | None, clean: Cleaner
    ) -> None:
        self.cloud, self.report, self.names, self.clean = cloud, report, names, clean

    def skip(self, kind: str, subject: str, detail: str) -> None:
        self.report.add(self.cloud, kind, subject, detail)

    def gpus(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> int | None:
        count, _ = most_common(r.count for r in rows if r.count is not None)
        if count is None or count <= 0:
            self.skip("no-gpu-count", name, f"no AcceleratorCount ({rows[0].origin})")
            return None
        if not count.is_integer():
            self.skip(
                "fractional-gpu", name, f"{count:g} x {spec.accelerator} per VM ({rows[0].origin})"
            )
            return None
        if spec.true_gpus is not None and int(count) != spec.true_gpus:
            self.skip(
                "gpu-count-fixed",
                name,
                f"source says {int(count)} x {spec.accelerator}, kept {spec.true_gpus}"
                + (f": {spec.note}" if spec.note else ""),
            )
            return spec.true_gpus
        return int(count)

    def check_name(self, spec: FamilySpec, name: str, given: str) -> None:
        if not given:
            self.skip(
                "accelerator-inferred", name, f"no AcceleratorName; {spec.accelerator} by family"
            )
            return
        if self.names is None or self.cloud == "gcp":
            return  # GCP rows are paired by name in compose.py
        if spec.accelerator not in {a.id for a in self.names.resolve_all(given, strict=False)}:
            self.skip(
                "accelerator-mismatch",
                name,
                f"row says {given!r}, family {spec.family} says {spec.accelerator}; "
                "kept the family's",
            )

    def instance(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> InstanceType | None:
        gpus = self.gpus(spec, name, rows)
        if gpus is None:
            return None
        self.check_name(spec, name, rows[0].accelerator)
        vcpus, n_vcpus = most_common(r.vcpus for r in rows if r.vcpus)
        memory, n_memory = most_common(r.memory_gib for r in rows if r.memory_gib)
        if vcpus is None or memory is None:
            self.skip("no-shape", name, f"no vCPUs or MemoryGiB ({rows[0].origin})")
            return None
        if n_vcpus > 1 or n_memory > 1:
            self.skip("shape-disagrees", name, f"kept {vcpus:g} vCPUs, {memory:g} GiB")
        cleaned = [c for r in rows if (c := self.clean(r)) is not None]
        subject = name if self.cloud != "gcp" else f"{name} + {gpus} x {rows[0].accelerator}"
        prices = collapse_regions(self.cloud, subject, cleaned, self.report)
        if not prices:
            return None
        gpu_memory, _ = most_common(r.gpu_memory_gib for r in rows if r.gpu_memory_gib)
        disk, _ = most_common(r.local_disk_gb for r in rows)
        arch, _ = most_common(r.arch for r in rows)
        return InstanceType(
            name=name,
            accelerator=spec.accelerator,
            gpus=gpus,
            vcpus=vcpus,
            memory_gib=memory,
            local_disk_gb=disk or 0.0,
            gpu_memory_gib=gpu_memory,
            arch="arm64" if arch == "arm64" else "x86_64",
            prices=prices,
        )


def _groups(cloud: str, rows: Iterable[VmRow]) -> dict[GroupKey, list[VmRow]]:
    """One offering per instance type; on GCP per host x accelerator row x count (N1)."""
    groups: dict[GroupKey, list[VmRow]] = defaultdict(list)
    for row in rows:
        if not row.instance_type:
            continue
        if cloud == "gcp":
            groups[(row.instance_type, row.accelerator, row.count)].append(row)
        else:
            groups[(row.instance_type, "", None)].append(row)
    return groups


def build_families(
    cloud: str,
    rows: Iterable[VmRow],
    report: ImportReport,
    *,
    clean: Cleaner,
    names: AcceleratorNames | None = None,
) -> list[Family]:
    """Families of ``cloud`` from its rows, sorted by name, instances in natural order."""
    b = _Builder(cloud, report, names, clean)
    members: dict[str, list[InstanceType]] = defaultdict(list)
    specs: dict[str, FamilySpec] = {}
    groups = sorted(_groups(cloud, rows).items(), key=lambda kv: natural_key(kv[0][0]))
    for (name, _, _), group in groups:
        spec = classify(cloud, name, group[0].accelerator or None)
        if spec is None:
            if group[0].accelerator or (group[0].count or 0) > 0:
                b.skip(
                    "unknown-family",
                    name,
                    f"{group[0].accelerator or '?'} x {group[0].count or 0:g}: add a FamilySpec "
                    "to recommender/catalog/families.py (and the accelerator to accelerators.yaml)",
                )
            continue  # a CPU-only instance type
        inst = b.instance(spec, name, group)
        if inst is not None:
            specs[spec.family] = spec
            members[spec.family].append(inst)
    return [
        Family(
            name=family,
            title=specs[family].title,
            price_model=specs[family].price_model,
            instances=sorted(members[family], key=lambda i: (natural_key(i.name), i.gpus)),
        )
        for family in sorted(members)
    ]
