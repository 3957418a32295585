"""Writing imported catalogs: checked as a whole first, then replaced atomically, or not at all.

The new cloud files are staged in a temporary directory beside copies of the target
directory's other catalog files (and its ``accelerators.yaml``, or the bundled one), and the
staged catalog must pass :func:`~recommender.catalog.load_catalog`. A result with integrity
errors raises :class:`~recommender.catalog.CatalogError` (its problems name the files as they
would have been written) and leaves every existing file byte-identical.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from recommender.catalog.loader import default_catalog_dir, load_catalog
from recommender.catalog.manifest import write_manifest
from recommender.catalog.problems import CatalogError, Problem, display_path
from recommender.catalog.writer import write_atomic

__all__ = ["Published", "Written", "check_staged", "publish"]


@dataclass(frozen=True, slots=True)
class Written:
    """One catalog file the import produced, and whether its bytes changed."""

    path: Path
    changed: bool


@dataclass(frozen=True, slots=True)
class Published:
    """The files of an import and the warnings the whole catalog carries with them."""

    written: list[Written]
    warnings: list[Problem]


def _stage(texts: dict[str, str], out_dir: Path, stage: Path) -> None:
    if out_dir.is_dir():
        for f in sorted(out_dir.glob("*.yaml")):
            shutil.copyfile(f, stage / f.name)
    if not (stage / "accelerators.yaml").is_file():
        shutil.copyfile(default_catalog_dir() / "accelerators.yaml", stage / "accelerators.yaml")
    for cloud, text in texts.items():
        (stage / f"{cloud}.yaml").write_text(text, encoding="utf-8")


def _renamed(problem: Problem, stage: Path, out_dir: Path) -> Problem:
    staged = display_path(stage)
    if problem.file.startswith(staged):
        name = Path(problem.file).name
        return replace(problem, file=display_path(out_dir / name))
    return problem


def check_staged(texts: dict[str, str], out_dir: Path) -> list[Problem]:
    """Load ``texts`` (cloud -> YAML) as they would sit in ``out_dir``: the warnings, or
    :class:`CatalogError` listing every error."""
    with tempfile.TemporaryDirectory(prefix="import-skypilot-") as tmp:
        stage = Path(tmp)
        _stage(texts, out_dir, stage)
        try:
            catalog = load_catalog(stage)
        except CatalogError as exc:
            raise CatalogError(_renamed(p, stage, out_dir) for p in exc.problems) from None
        return [_renamed(p, stage, out_dir) for p in catalog.warnings]


def publish(texts: dict[str, str], out_dir: Path, *, dry_run: bool = False) -> Published:
    """Check ``texts`` with the rest of ``out_dir``, then write each file atomically.

    Nothing is written when the check fails (:class:`CatalogError`) or with ``dry_run``.
    """
    warnings = check_staged(texts, out_dir)
    written = []
    for cloud in sorted(texts):
        path = out_dir / f"{cloud}.yaml"
        text = texts[cloud]
        changed = not path.is_file() or path.read_text(encoding="utf-8") != text
        if changed and not dry_run:
            write_atomic(path, text)
        written.append(Written(path, changed))
    if not dry_run:
        write_manifest(out_dir)  # last: the directory is one consistent version again
    return Published(written, warnings)
