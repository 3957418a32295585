"""The catalog the service answers from, and its reloading when the files change.

:class:`CatalogState` holds the last good catalog. :meth:`~CatalogState.reload` loads the
directory again; a catalog with errors is refused (logged with every problem) and the last
good one keeps serving, while :meth:`~CatalogState.status` reports the refusal.
:meth:`~CatalogState.reload_if_changed` reloads only when a file's size or modification
time changed, which the app polls in a background task.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from recommender.catalog import Catalog, CatalogError, Problem, load_catalog

__all__ = ["CatalogState", "Loaded", "ReloadOutcome"]

log = logging.getLogger("recommender.api.catalog")

Fingerprint = tuple[tuple[str, int, int], ...]


def fingerprint(directory: Path) -> Fingerprint:
    """(name, mtime_ns, size) of every YAML file: any edit, add or removal changes it."""
    try:
        files = sorted(directory.glob("*.yaml"))
        return tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    except OSError:
        return ()


@dataclass(frozen=True, slots=True)
class Loaded:
    catalog: Catalog
    loaded_at: dt.datetime
    fingerprint: Fingerprint
    prices_as_of: dt.datetime | None


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

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.current: Loaded | None = None
        self.last: ReloadOutcome | None = None
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
            catalog = load_catalog(self.directory)
            catalog.offers  # noqa: B018 -- build the offers table now, not on a request
            catalog.names  # noqa: B018
        except CatalogError as exc:
            outcome = ReloadOutcome(now, loaded=False, problems=tuple(exc.problems))
            self._log_refusal(outcome)
        except Exception as exc:  # unreadable directory, a loader bug: refused all the same
            log.exception("loading the catalog at %s failed", self.directory)
            problem = Problem(str(self.directory), None, "", f"{type(exc).__name__}: {exc}")
            outcome = ReloadOutcome(now, loaded=False, problems=(problem,))
            self._log_refusal(outcome)
        else:
            self.current = Loaded(catalog, now, seen, _prices_as_of(catalog, self.directory))
            outcome = ReloadOutcome(now, loaded=True, problems=catalog.warnings)
            log.info(
                "catalog loaded from %s: %d accelerators, %d offers, %d warning(s)",
                self.directory,
                len(catalog.accelerators),
                len(catalog.offers),
                len(catalog.warnings),
            )
        self.last = outcome
        return outcome

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
