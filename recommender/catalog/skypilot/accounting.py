"""Every source row accounted for: imported (perhaps fixed) or skipped with a reason.

The importer tells a :class:`RowLedger` what became of each CSV row, by its
:class:`~.parse.Origin`: :meth:`~RowLedger.use` when the row went into a price of the
catalog, :meth:`~RowLedger.fix` when a quirk was fixed on it, :meth:`~RowLedger.skip` when it
was left out and why. :func:`account` then sets that against every row read, per file; a row
the ledger never heard of is a *silent drop*, which the tests forbid.

An imported row wins over a skip (a GCP accelerator row priced with one host and unused by
another is imported); the first skip reason given for a row is kept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from recommender.catalog.skypilot.parse import Origin

__all__ = ["FileAccount", "RowLedger", "account"]


@dataclass
class RowLedger:
    """What the import did with each source row (see the module docstring)."""

    used: set[Origin] = field(default_factory=set)
    fixes: dict[Origin, set[str]] = field(default_factory=lambda: defaultdict(set))
    skipped: dict[Origin, str] = field(default_factory=dict)

    def use(self, origins: Iterable[Origin]) -> None:
        self.used.update(origins)

    def fix(self, origin: Origin, quirk: str) -> None:
        self.fixes[origin].add(quirk)

    def skip(self, origin: Origin, reason: str) -> None:
        self.skipped.setdefault(origin, reason)


@dataclass(frozen=True)
class FileAccount:
    """One source file: rows read, imported (of which fixed, per quirk), skipped per reason."""

    file: str
    read: int
    imported: int
    fixed: int
    fixes: dict[str, int]
    skipped: dict[str, int]
    silent: list[Origin]

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "read": self.read,
            "imported": self.imported,
            "fixed": self.fixed,
            "fixes": self.fixes,
            "skipped": self.skipped_total,
            "skipped_by_reason": self.skipped,
            "silent_drops": len(self.silent),
        }


def _one_file(name: str, origins: list[Origin], ledger: RowLedger) -> FileAccount:
    imported = fixed = 0
    fixes: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    silent: list[Origin] = []
    for origin in origins:
        if origin in ledger.used:
            imported += 1
            quirks = ledger.fixes.get(origin)
            if quirks:
                fixed += 1
                fixes.update(quirks)
        elif origin in ledger.skipped:
            skipped[ledger.skipped[origin]] += 1
        else:
            silent.append(origin)
    return FileAccount(
        file=name,
        read=len(origins),
        imported=imported,
        fixed=fixed,
        fixes=dict(sorted(fixes.items())),
        skipped=dict(sorted(skipped.items())),
        silent=silent,
    )


def account(origins: Iterable[Origin], ledger: RowLedger) -> list[FileAccount]:
    """Per source file (sorted by name), what became of every row in ``origins``."""
    by_file: dict[str, list[Origin]] = defaultdict(list)
    for origin in origins:
        by_file[origin.file].append(origin)
    return [_one_file(name, by_file[name], ledger) for name in sorted(by_file)]
