"""One cloud's refresh from start to finish: fetch, merge, diff, check, then write (or not).

:func:`refresh_cloud` is what ``recommender catalog refresh`` runs for each cloud and what a
library caller uses. It never leaves a half-written file: the candidate is checked by the
ordinary loader before anything is replaced, and the replacement is one atomic rename.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from recommender.catalog.loader import CatalogLoad
from recommender.catalog.names import AcceleratorNames
from recommender.catalog.problems import Problem
from recommender.catalog.refresh.apply import check_candidate, render, write
from recommender.catalog.refresh.base import Fetched, RefreshError, RefreshOptions, Skipped
from recommender.catalog.refresh.diff import CatalogDiff, diff_catalogs
from recommender.catalog.refresh.merge import merge
from recommender.catalog.refresh.registry import get_refresher
from recommender.catalog.schema import CloudCatalog

__all__ = ["RefreshReport", "RefreshSettings", "refresh_cloud"]


@dataclass(frozen=True, slots=True)
class RefreshSettings:
    """What to do with the result: the safety knobs of the command line."""

    dry_run: bool = False
    force: bool = False
    max_drop: float = 0.2
    price_threshold: float = 0.05
    today: dt.date | None = None


@dataclass
class RefreshReport:
    """What one cloud's refresh found and did."""

    cloud: str
    file: Path
    written: bool = False
    dry_run: bool = False
    diff: CatalogDiff | None = None
    refreshed_regions: list[str] = field(default_factory=list)
    failed_regions: dict[str, str] = field(default_factory=dict)
    kept_regions: dict[str, str] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    unknown_accelerators: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "cloud": self.cloud,
            "file": str(self.file),
            "written": self.written,
            "dry_run": self.dry_run,
            "error": self.error,
            "diff": self.diff.as_dict() if self.diff else None,
            "refreshed_regions": self.refreshed_regions,
            "failed_regions": self.failed_regions,
            "kept_regions": self.kept_regions,
            "unknown_accelerators": self.unknown_accelerators,
            "skipped": [s.as_dict() for s in self.skipped],
            "notes": self.notes,
            "warnings": [p.as_dict() for p in self.warnings],
        }


def _previous(load: CatalogLoad, cloud: str, force: bool) -> CloudCatalog | None:
    """The current catalog of ``cloud``; an unreadable one is refused unless ``force``."""
    doc = load.clouds.get(cloud)
    path = load.directory / f"{cloud}.yaml"
    if doc is None and path.is_file() and not force:
        mine = [str(p) for p in load.problems if Path(p.file).name == path.name]
        raise RefreshError(
            f"{path} exists but cannot be read ({'; '.join(mine[:3]) or 'schema errors'}); "
            "fix it, or re-run with --force to replace it without a diff"
        )
    return doc.model if doc is not None else None


def _command(cloud: str, options: RefreshOptions) -> str:
    regions = f" --regions {','.join(options.regions)}" if options.regions else ""
    return f"recommender catalog refresh --cloud {cloud}{regions}"


def _fill(report: RefreshReport, fetched: Fetched) -> None:
    report.refreshed_regions = sorted(fetched.regions)
    report.failed_regions = dict(sorted(fetched.failed.items()))
    report.skipped = sorted(fetched.skipped, key=lambda s: (s.reason, s.instance_type))
    report.unknown_accelerators = fetched.unknown_accelerators
    report.notes.extend(fetched.notes)


def refresh_cloud(
    cloud: str,
    catalog_dir: Path,
    options: RefreshOptions,
    settings: RefreshSettings,
) -> RefreshReport:
    """Refresh ``<catalog_dir>/<cloud>.yaml``; a refusal is in :attr:`RefreshReport.error`.

    The report carries what was learnt (diff, failed regions, unknown GPUs) even when the
    result was refused; the file is then left byte-for-byte as it was.
    """
    report = RefreshReport(cloud, catalog_dir / f"{cloud}.yaml", dry_run=settings.dry_run)
    try:
        _run(report, catalog_dir, options, settings)
    except RefreshError as exc:
        report.error = str(exc)
    return report


def _run(
    report: RefreshReport,
    catalog_dir: Path,
    options: RefreshOptions,
    settings: RefreshSettings,
) -> None:
    cloud = report.cloud
    refresher = get_refresher(cloud)
    refresher.ready(options)  # missing SDK or credentials: fail before reading anything
    load = CatalogLoad(catalog_dir)
    if load.accelerators is None:
        raise RefreshError(f"{catalog_dir / 'accelerators.yaml'} is missing or broken")
    previous = _previous(load, cloud, settings.force)
    names = AcceleratorNames(load.accelerators.model.accelerators)
    fetched = refresher.fetch(names, options)
    _fill(report, fetched)
    if not fetched.regions:
        failed = "; ".join(f"{r}: {why}" for r, why in sorted(fetched.failed.items())[:5])
        raise RefreshError(
            f"no {cloud} region could be refreshed ({failed or 'the API listed none'}); "
            f"{report.file} was left unchanged"
        )
    merged = merge(previous, fetched, requested=options.regions, today=settings.today)
    report.kept_regions = merged.kept_regions
    report.notes.extend(merged.notes)
    report.diff = diff_catalogs(previous, merged.catalog, threshold=settings.price_threshold)
    text = render(merged.catalog, _command(cloud, options))
    report.warnings = check_candidate(catalog_dir, cloud, text)
    if settings.dry_run:
        if report.diff.drop_share > settings.max_drop and not settings.force:
            report.notes.append(
                f"a real run would refuse this result: it drops {report.diff.drop_share:.1%} "
                f"of the previous rows, more than --max-drop {settings.max_drop:.0%}"
            )
        return
    write(catalog_dir, cloud, text, report.diff, max_drop=settings.max_drop, force=settings.force)
    report.written = True
