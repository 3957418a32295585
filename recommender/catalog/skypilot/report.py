"""The import report: every change the SkyPilot importer made to the data, and why.

Each :class:`Fix` names the cloud, the kind of quirk, what it touched (instance, region or
source row) and what was done. :class:`ImportReport` collects them, counts them per kind and
renders the short summary that heads each generated YAML file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from recommender.catalog.skypilot.accounting import RowLedger

__all__ = ["KINDS", "Fix", "ImportReport"]

# kind -> what the importer does about it (one line, shown in summaries and YAML headers).
KINDS: dict[str, str] = {
    "spot-placeholder": "spot price equal to on-demand (a placeholder) dropped",
    "spot-above-on-demand": "spot price above on-demand dropped",
    "empty-on-demand": "empty on-demand price left absent",
    "empty-spot": "empty spot price left absent",
    "no-price": "region without any price dropped",
    "local-zone": "local/wavelength zone row not merged into its parent region",
    "on-demand-disagrees": "zones of one region disagree on on-demand; the most common kept",
    "shape-disagrees": "rows disagree on vCPUs/memory; the most common kept",
    "gpu-count-fixed": "GPU count the source gets wrong replaced by the true count",
    "fractional-gpu": "instance with a fraction of a GPU: one device, gpu_fraction set",
    "gpu-count-inferred": "row without an accelerator count: the family's true count used",
    "gpu-memory-fixed": "device memory the source gets wrong replaced by the chip's",
    "arch-inferred": "host CPU architecture the source omits taken from the family",
    "duplicate-row": "exact duplicate of an earlier row of the same file skipped",
    "price-placeholder": "placeholder price (700.0 on GCP TPU rows) left absent",
    "not-imported": "instance type deliberately not imported (families.NOT_IMPORTED says why)",
    "no-accelerator": "row of an instance type without any accelerator (CPU-only) skipped",
    "accelerator-inferred": "row without an accelerator name: accelerator taken from its family",
    "accelerator-mismatch": "row names another accelerator than its family: the family's kept",
    "no-gpu-count": "GPU instance without an accelerator count skipped",
    "no-shape": "instance without vCPUs or memory skipped",
    "unknown-family": "GPU instance type with no family in family_table.py skipped",
    "host-price-zero": "host row priced 0.0: the accelerator row carries the whole price",
    "unpaired-gpu-row": "GCP accelerator row with no host row of its zone and count: unused",
    "unpaired-host-row": "GCP host row with no accelerator row of its zone and count: unused",
    "file-choice": "instance type in several files: taken from the one covering most regions",
}


@dataclass(frozen=True, slots=True, order=True)
class Fix:
    """One change (or deliberate omission) the importer made."""

    cloud: str
    kind: str
    subject: str  # instance type, "instance @ region" or a source row "file:line"
    detail: str

    def __str__(self) -> str:
        return f"{self.cloud} {self.kind}: {self.subject}: {self.detail}"

    def as_dict(self) -> dict[str, str]:
        return {
            "cloud": self.cloud,
            "kind": self.kind,
            "subject": self.subject,
            "detail": self.detail,
        }


@dataclass
class ImportReport:
    """Every :class:`Fix` of one import run, in a deterministic order."""

    fixes: list[Fix] = field(default_factory=list)
    rows: RowLedger = field(default_factory=RowLedger)

    def add(self, cloud: str, kind: str, subject: str, detail: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown import-report kind {kind!r}")
        self.fixes.append(Fix(cloud, kind, subject, detail))

    def for_cloud(self, cloud: str) -> list[Fix]:
        return sorted(f for f in self.fixes if f.cloud == cloud)

    def counts(self, cloud: str | None = None) -> dict[str, int]:
        """Fixes per kind (for one cloud, or all), in :data:`KINDS` order."""
        c = Counter(f.kind for f in self.fixes if cloud is None or f.cloud == cloud)
        return {k: c[k] for k in KINDS if c[k]}

    def summary_lines(self, cloud: str, *, examples: int = 2) -> list[str]:
        """One line per kind: count, what was done, a few subjects as examples."""
        fixes = self.for_cloud(cloud)
        lines = []
        for kind, n in self.counts(cloud).items():
            subjects = sorted({f.subject for f in fixes if f.kind == kind})
            shown = ", ".join(subjects[:examples]) + (", ..." if len(subjects) > examples else "")
            lines.append(f"{n:5d} x {kind}: {KINDS[kind]} (e.g. {shown})")
        return lines
