"""Cleaned rows -> instance types -> families, named by :mod:`recommender.catalog.families`.

Rows are grouped per offering (instance type, accelerator row, GPU count); each group becomes
one :class:`InstanceType` with its shape (the most common vCPUs, memory, GPU memory, local
disk and architecture of its rows) and its per-region prices. The family table names the
family and the canonical accelerator id; instance-level quirks are fixed and reported here:
fractional GPUs (one device with ``gpu_fraction``), counts the source gets wrong or omits
(``true_gpus``), device memory it gets wrong (``true_gpu_memory_gib``), rows without an
accelerator name (inferred from the family) or naming another accelerator (the family wins),
GPU instance types no family covers and types deliberately not imported (skipped). Every row
is entered in the report's row ledger: used, or skipped with the reason.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from recommender.catalog.families import FamilySpec, classify, not_imported
from recommender.catalog.names import AcceleratorNames
from recommender.catalog.networks import network_of
from recommender.catalog.schema import Family, InstanceType
from recommender.catalog.skypilot.parse import VmRow
from recommender.catalog.skypilot.regions import collapse_regions, most_common
from recommender.catalog.skypilot.report import ImportReport

__all__ = ["build_families", "natural_key"]

Cleaner = Callable[[VmRow], VmRow | None]
GroupKey = tuple[str, str, float | None]
Gpus = tuple[int, float | None]  # whole devices, and the fraction of one where it is a share


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

    def fixed(self, kind: str, rows: Sequence[VmRow], subject: str, detail: str) -> None:
        """An instance-wide fix: reported once, entered against every row."""
        self.report.add(self.cloud, kind, subject, detail)
        for row in rows:
            for origin in row.origins:
                self.report.rows.fix(origin, kind)

    def dropped(self, kind: str, rows: Iterable[VmRow], subject: str, detail: str) -> None:
        """Rows left out: reported once, each entered as skipped for ``kind``."""
        self.report.add(self.cloud, kind, subject, detail)
        for row in rows:
            for origin in row.origins:
                self.report.rows.skip(origin, kind)

    def gpus(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> Gpus | None:
        count, _ = most_common(r.count for r in rows if r.count is not None)
        where = rows[0].origin
        if (count is None or count <= 0) and spec.true_gpus is not None:
            self.fixed(
                "gpu-count-inferred",
                rows,
                name,
                f"no AcceleratorCount ({where}); {spec.true_gpus} x {spec.accelerator} by family"
                + (f": {spec.note}" if spec.note else ""),
            )
            return spec.true_gpus, None
        if count is None or count <= 0:
            self.dropped("no-gpu-count", rows, name, f"no AcceleratorCount ({where})")
            return None
        if not count.is_integer():
            if count > 1:
                self.dropped(
                    "no-gpu-count", rows, name, f"{count:g} devices is not a share of one ({where})"
                )
                return None
            self.fixed(
                "fractional-gpu", rows, name, f"{count:g} x {spec.accelerator} per VM ({where})"
            )
            return 1, count
        if spec.true_gpus is not None and int(count) != spec.true_gpus:
            self.fixed(
                "gpu-count-fixed",
                rows,
                name,
                f"source says {int(count)} x {spec.accelerator}, kept {spec.true_gpus}"
                + (f": {spec.note}" if spec.note else ""),
            )
            return spec.true_gpus, None
        return int(count), None

    def gpu_memory(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> float | None:
        memory, _ = most_common(r.gpu_memory_gib for r in rows if r.gpu_memory_gib)
        if spec.true_gpu_memory_gib is not None and memory != spec.true_gpu_memory_gib:
            self.fixed(
                "gpu-memory-fixed",
                rows,
                name,
                f"source says {memory:g} GiB per device, kept {spec.true_gpu_memory_gib:g}"
                + (f": {spec.note}" if spec.note else ""),
            )
            return spec.true_gpu_memory_gib
        return memory

    def arch(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> str:
        arch, _ = most_common(r.arch for r in rows)
        if spec.arch is not None and arch != spec.arch:
            self.fixed(
                "arch-inferred",
                rows,
                name,
                f"source says {arch}; the family's hosts are {spec.arch}",
            )
            return spec.arch
        return arch or "x86_64"

    def check_name(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> None:
        given = rows[0].accelerator
        if not given:
            self.fixed(
                "accelerator-inferred",
                rows,
                name,
                f"no AcceleratorName; {spec.accelerator} by family",
            )
            return
        if self.names is None or self.cloud == "gcp":
            return  # GCP rows are paired by name in compose.py
        if spec.accelerator not in {a.id for a in self.names.resolve_all(given, strict=False)}:
            self.fixed(
                "accelerator-mismatch",
                rows,
                name,
                f"row says {given!r}, family {spec.family} says {spec.accelerator}; "
                "kept the family's",
            )

    def account(self, cleaned: Sequence[VmRow], regions: set[str]) -> None:
        """Rows priced into one of ``regions`` are imported; the rest lost every price."""
        for row in cleaned:
            if row.region in regions:
                self.report.rows.use(row.origins)
            else:
                for origin in row.origins:
                    self.report.rows.skip(origin, "no-price")

    def instance(self, spec: FamilySpec, name: str, rows: Sequence[VmRow]) -> InstanceType | None:
        shape = self.gpus(spec, name, rows)
        if shape is None:
            return None
        gpus, fraction = shape
        self.check_name(spec, name, rows)
        vcpus, n_vcpus = most_common(r.vcpus for r in rows if r.vcpus)
        memory, n_memory = most_common(r.memory_gib for r in rows if r.memory_gib)
        if vcpus is None or memory is None:
            self.dropped("no-shape", rows, name, f"no vCPUs or MemoryGiB ({rows[0].origin})")
            return None
        if n_vcpus > 1 or n_memory > 1:
            self.fixed("shape-disagrees", rows, name, f"kept {vcpus:g} vCPUs, {memory:g} GiB")
        cleaned = [c for r in rows if (c := self.clean(r)) is not None]
        attached = self.cloud == "gcp" and rows[0].accelerator != name  # not a TPU slice
        subject = f"{name} + {gpus} x {rows[0].accelerator}" if attached else name
        prices = collapse_regions(self.cloud, subject, cleaned, self.report)
        self.account(cleaned, {p.region for p in prices})
        if not prices:
            return None
        disk, _ = most_common(r.local_disk_gb for r in rows)
        arch = self.arch(spec, name, rows)
        return InstanceType(
            name=name,
            accelerator=spec.accelerator,
            gpus=gpus,
            gpu_fraction=fraction,
            vcpus=vcpus,
            memory_gib=memory,
            local_disk_gb=disk or 0.0,
            gpu_memory_gib=self.gpu_memory(spec, name, rows),
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


def _unclassified(b: _Builder, name: str, group: Sequence[VmRow]) -> None:
    """Rows of a type no family covers: deliberately left out, unknown, or CPU-only."""
    reason = not_imported(b.cloud, name)
    n = len(group)
    if reason is not None:
        b.dropped("not-imported", group, name, f"{n} row(s): {reason}")
    elif group[0].accelerator or (group[0].count or 0) > 0:
        b.dropped(
            "unknown-family",
            group,
            name,
            f"{group[0].accelerator or '?'} x {group[0].count or 0:g}: add a FamilySpec "
            "to recommender/catalog/family_table.py (and the accelerator to accelerators.yaml)",
        )
    else:
        b.dropped("no-accelerator", group, name, f"{n} row(s) without an accelerator")


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
            _unclassified(b, name, group)
            continue
        inst = b.instance(spec, name, group)
        if inst is not None:
            specs[spec.family] = spec
            members[spec.family].append(inst)
    return [
        Family(
            name=family,
            title=specs[family].title,
            price_model=specs[family].price_model,
            purchase=specs[family].purchase,
            network=network_of(cloud, family),
            instances=sorted(members[family], key=lambda i: (natural_key(i.name), i.gpus)),
        )
        for family in sorted(members)
    ]
