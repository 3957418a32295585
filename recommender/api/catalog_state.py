"""The catalog the service answers from, and its reloading when the files change.

:class:`CatalogState` holds the last good catalog and its version (one immutable
:class:`Loaded`, swapped whole: a request that took it answers from one version).
:meth:`~CatalogState.reload` loads the directory again through its manifest
(:func:`recommender.catalog.load_versioned`); a catalog with errors, an incomplete or
changing directory, or one with more than ``max_offer_drop`` fewer offers than the serving
one is refused (logged with every problem) and the last good one keeps serving, while the
catalog status reports the refusal. :meth:`~CatalogState.reload_if_changed` reloads only
when a file's size or modification time changed, which the app polls in a background task.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from recommender.catalog import Catalog, CatalogError, Problem
from recommender.catalog.loader import load_versioned
from recommender.catalog.manifest import MANIFEST_NAME

__all__ = ["CatalogState", "Loaded", "ReloadOutcome"]

log = logging.getLogger("recommender.api.catalog")

Fingerprint = tuple[tuple[str, int, int], ...]


def fingerprint(directory: Path) -> Fingerprint:
    """(name, mtime_ns, size) of every YAML file and the manifest: any edit, add or removal
    changes it."""
    try:
        files = sorted([*directory.glob("*.yaml"), *directory.glob(MANIFEST_NAME)])
        return tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    except OSError:
        return ()


@dataclass(frozen=True, slots=True)
class Loaded:
    catalog: Catalog
    loaded_at: dt.datetime
    fingerprint: Fingerprint
    prices_as_of: dt.datetime | None
    version: str = ""


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    at: dt.datetime
    loaded: bool
    problems: tuple[Problem, ...] = ()


def _prices_as_of(catalog: Catalog, directory: Path) -> dt.datetime | None:
    """When the oldest price data was read: each cloud file's ``source.retrieved`` day, or
    the file's modification time where the day is not recorded."""
    dates: list[dt.datetime] = []
    for cloud, doc in catalog.cloud_docs.items():
        day = doc.model.source.retrieved
        if day is not None:
            dates.append(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC))
            continue
        try:
            mtime = (directory / f"{cloud}.yaml").stat().st_mtime
        except OSError:
            continue
        dates.append(dt.datetime.fromtimestamp(mtime, dt.UTC))
    return min(dates) if dates else None


class CatalogState:
    """The serving catalog (``None`` until one loads) and the outcome of the last attempt."""

    def __init__(
        self, directory: Path, *, require_manifest: bool = True, max_offer_drop: float = 1.0
    ) -> None:
        self.directory = directory
        self.require_manifest = require_manifest
        self.max_offer_drop = max_offer_drop
        self.current: Loaded | None = None
        self.last: ReloadOutcome | None = None
        self.announced: str | None = None  # the last reload token this worker sent others
        self._attempted: Fingerprint | None = None
        self._lock = threading.Lock()

    def reload(self) -> ReloadOutcome:
        """Load the directory now; keep the last good catalog if this one is broken."""
        with self._lock:
            return self._reload(fingerprint(self.directory))

    def reload_if_changed(self) -> ReloadOutcome | None:
        """Reload when the files differ from those last tried (good or refused)."""
        with self._lock:
            seen = fingerprint(self.directory)
            if seen == self._attempted:
                return None
            return self._reload(seen)

    def _reload(self, seen: Fingerprint) -> ReloadOutcome:
        self._attempted = seen
        now = dt.datetime.now(dt.UTC)
        try:
            catalog, version = load_versioned(
                self.directory, require_manifest=self.require_manifest
            )
            catalog.offers  # noqa: B018 -- build the offers table now, not on a request
            catalog.names  # noqa: B018
            self._check_drop(catalog)
        except CatalogError as exc:
            outcome = ReloadOutcome(now, loaded=False, problems=tuple(exc.problems))
            self._log_refusal(outcome)
        except Exception as exc:  # unreadable directory, a loader bug: refused all the same
            log.exception("loading the catalog at %s failed", self.directory)
            problem = Problem(str(self.directory), None, "", f"{type(exc).__name__}: {exc}")
            outcome = ReloadOutcome(now, loaded=False, problems=(problem,))
            self._log_refusal(outcome)
        else:
            prices_as_of = _prices_as_of(catalog, self.directory)
            self.current = Loaded(catalog, now, seen, prices_as_of, version)
            outcome = ReloadOutcome(now, loaded=True, problems=catalog.warnings)
            log.info(
                "catalog %s loaded from %s: %d accelerators, %d offers, %d warning(s)",
                version,
                self.directory,
                len(catalog.accelerators),
                len(catalog.offers),
                len(catalog.warnings),
            )
        self.last = outcome
        return outcome

    def _check_drop(self, catalog: Catalog) -> None:
        """Refuse a catalog with far fewer offers than the serving one (a lost file or
        region, not a refresh)."""
        current = self.current
        if current is None:
            return
        before, after = len(current.catalog.offers), len(catalog.offers)
        if before and (before - after) / before > self.max_offer_drop:
            raise CatalogError(
                [
                    Problem(
                        "(catalog)",
                        None,
                        "",
                        f"{after} offers, {(before - after) / before:.1%} fewer than the {before} "
                        f"serving (more than RECOMMENDER_CATALOG_MAX_OFFER_DROP="
                        f"{self.max_offer_drop:g}); raise it to accept the drop",
                        check="drop",
                    )
                ]
            )

    def _log_refusal(self, outcome: ReloadOutcome) -> None:
        keeping = "keeping the last good catalog" if self.current else "no catalog is loaded"
        log.error(
            "catalog at %s refused (%d error(s)); %s:\n%s",
            self.directory,
            len(outcome.problems),
            keeping,
            "\n".join(f"  {p}" for p in outcome.problems),
        )

    @property
    def version(self) -> str | None:
        current = self.current
        return current.version if current else None

    @property
    def catalog(self) -> Catalog | None:
        current = self.current
        return current.catalog if current else None

    def age_seconds(self, now: float | None = None) -> float | None:
        """Seconds since the oldest price data was read (``None``: no prices loaded)."""
        current = self.current
        if current is None or current.prices_as_of is None:
            return None
        return (now if now is not None else time.time()) - current.prices_as_of.timestamp()

    @property
    def refused(self) -> bool:
        """The last attempt was refused (the files on disk are not what is serving)."""
        return self.last is not None and not self.last.loaded
