"""Admin reload across workers: the worker that answers ``POST /v1/admin/reload`` tells the
others through a file in the runtime directory their ``serve`` shares.

:func:`announce` writes a fresh token to ``<runtime_dir>/catalog-reload``; every worker
watches that file (:func:`follow`, a few times a second) and reloads when the token
changes, so within a fraction of a second every worker serves the same version.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path

from starlette.concurrency import run_in_threadpool

from recommender.catalog.writer import write_atomic

__all__ = ["RELOAD_SIGNAL_POLL_S", "announce", "follow", "signal_path"]

log = logging.getLogger("recommender.api.catalog")

# How often each worker looks at the reload signal (seconds): a stat() call.
RELOAD_SIGNAL_POLL_S = 0.2
SIGNAL_NAME = "catalog-reload"


def signal_path(runtime_dir: Path | None) -> Path | None:
    return runtime_dir / SIGNAL_NAME if runtime_dir is not None else None


def _token(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def announce(path: Path | None) -> str | None:
    """Ask every worker to reload; returns the token written (``None``: a single process)."""
    if path is None:
        return None
    token = uuid.uuid4().hex
    write_atomic(path, token)
    return token


async def follow(path: Path, reload: Callable[[], object], *, own: Callable[[], str]) -> None:
    """Reload whenever another worker announces a reload (never on one's own token)."""
    seen = _token(path)
    while True:
        await asyncio.sleep(RELOAD_SIGNAL_POLL_S)
        token = _token(path)
        if token is None or token == seen:
            continue
        seen = token
        if token == own():
            continue
        try:
            await run_in_threadpool(reload)
        except Exception:  # a bug here must not stop later reloads
            log.exception("reload on another worker's signal failed")
