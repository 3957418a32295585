"""Replacing a cloud's catalog file safely: check the candidate first, then one atomic rename.

Before anything is written, the candidate YAML is put in a scratch copy of the catalog
directory (with the real ``accelerators.yaml`` and the other files beside it) and loaded by
the ordinary loader, so it passes exactly the schema and integrity checks that
``recommender catalog validate`` runs. A candidate with errors, or one that drops more than
``max_drop`` of the previous rows (unless forced), is refused and the old file stays as it
was. Otherwise :func:`recommender.catalog.writer.write_atomic` replaces it in one rename.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from recommender.catalog.loader import validate_catalog
from recommender.catalog.manifest import write_manifest
from recommender.catalog.problems import Problem
from recommender.catalog.refresh.base import RefreshError
from recommender.catalog.refresh.diff import CatalogDiff
from recommender.catalog.schema import CloudCatalog
from recommender.catalog.writer import dump_yaml, write_atomic

__all__ = ["CandidateRejectedError", "DropTooLargeError", "check_candidate", "render", "write"]


class CandidateRejectedError(RefreshError):
    """The refreshed catalog fails the integrity checks; nothing was written."""

    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems[:30])
        more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
        super().__init__(
            f"the refreshed {path.name} fails {len(problems)} integrity check(s); "
            f"{path} was left unchanged:\n{lines}{more}"
        )


class DropTooLargeError(RefreshError):
    """The refresh would remove more than the allowed share of the previous rows."""

    def __init__(self, path: Path, diff: CatalogDiff, max_drop: float) -> None:
        self.diff = diff
        super().__init__(
            f"the refresh would remove {len(diff.removed)} of {diff.before} rows "
            f"({diff.drop_share:.1%}) from {path}, more than --max-drop {max_drop:.0%}; "
            f"nothing was written. Check the failed regions and credentials, or re-run with "
            f"--force to accept it"
        )


def render(catalog: CloudCatalog, command: str) -> str:
    """The YAML text of ``catalog``, with a header saying how it was made."""
    src = catalog.source
    header = (
        f"{catalog.cloud} GPU instance catalog, refreshed from the cloud APIs "
        f"({src.name}) on {src.retrieved} by `{command}`.\n"
        "Prices are USD per hour for the whole instance."
    )
    return dump_yaml(catalog, header=header)


def check_candidate(catalog_dir: Path, cloud: str, text: str) -> list[Problem]:
    """Load ``text`` as ``<cloud>.yaml`` beside the real catalog; its problems, errors first.

    Raises :class:`CandidateRejectedError` when any of them is an error.
    """
    target = catalog_dir / f"{cloud}.yaml"
    with tempfile.TemporaryDirectory(prefix="refresh-check-") as tmp:
        scratch = Path(tmp)
        for f in catalog_dir.glob("*.yaml"):
            if f.name != target.name:
                shutil.copy(f, scratch / f.name)
        candidate = scratch / target.name
        candidate.write_text(text, encoding="utf-8")
        mine = [p for p in validate_catalog(scratch) if Path(p.file).name == target.name]
    relocated = [
        Problem(str(target), p.line, p.field, p.message, p.severity, p.check) for p in mine
    ]
    errors = [p for p in relocated if p.severity == "error"]
    if errors:
        raise CandidateRejectedError(target, errors)
    return relocated


def write(
    catalog_dir: Path,
    cloud: str,
    text: str,
    diff: CatalogDiff,
    *,
    max_drop: float,
    force: bool,
) -> Path:
    """Refuse (unless ``force``) a drop beyond ``max_drop``; else replace the file atomically."""
    target = catalog_dir / f"{cloud}.yaml"
    if diff.drop_share > max_drop and not force:
        raise DropTooLargeError(target, diff, max_drop)
    write_atomic(target, text)
    write_manifest(catalog_dir)  # last: the directory is one consistent version again
    return target
