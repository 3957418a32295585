"""The library's errors: a common base, and problems found in input files with their place.

Every error the library raises on purpose is a :class:`RecommenderError`; each says which
input ``field`` was at fault. :class:`ProblemsError` and its subclasses (catalog, workload,
profile) carry every :class:`Problem` found, each with file, line and field path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recommender.errors import InvalidOptionError, NotFoundError, ProfileError, RecommenderError

__all__ = [
    "CatalogError",
    "InvalidOptionError",
    "NotFoundError",
    "Problem",
    "ProblemsError",
    "ProfileError",
    "RecommenderError",
    "Severity",
    "WorkloadError",
    "display_path",
]

Severity = Literal["error", "warning"]


def display_path(path: str | Path) -> str:
    """``path`` relative to the working directory when it lies below it, else as given."""
    p = Path(path)
    try:
        return os.path.relpath(p) if p.is_absolute() and Path.cwd() in p.parents else str(p)
    except ValueError:  # another drive (Windows)
        return str(p)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong (``error``) or suspicious (``warning``) in a catalog file."""

    file: str
    line: int | None
    field: str
    message: str
    severity: Severity = "error"
    check: str = "schema"

    def __str__(self) -> str:
        where = display_path(self.file) + (f":{self.line}" if self.line else "")
        field = f" {self.field}:" if self.field else ""
        tag = "" if self.severity == "error" else " (warning)"
        return f"{where}{field} {self.message}{tag}"

    def as_dict(self) -> dict[str, object]:
        return {
            "file": display_path(self.file),
            "line": self.line,
            "field": self.field,
            "message": self.message,
            "severity": self.severity,
            "check": self.check,
        }


class ProblemsError(RecommenderError):
    """Input could not be used; ``problems`` lists every reason with its place."""

    what = "the input"

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: Sequence[Problem] = tuple(problems)
        self.field = next((p.field for p in self.problems if p.severity == "error"), "")
        lines = [str(p) for p in self.problems]
        head = f"{len(lines)} problem(s) in {self.what}"
        super().__init__(head + ":\n" + "\n".join(f"  {line}" for line in lines))


class CatalogError(ProblemsError):
    """A catalog could not be loaded."""

    what = "the catalog"


class WorkloadError(ProblemsError, ValueError):
    """A workload (file, dict or model) could not be read, validated or placed (a constraint
    naming a region or accelerator the catalog does not have)."""

    what = "the workload"
