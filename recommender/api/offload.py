"""Where blocking work runs: CPU work on threads of its own, never behind database waits.

Starlette runs sync endpoints on one pool of worker threads (40 by default); when the
database is slow, requests waiting for it hold those threads, and an endpoint that needs no
database would queue behind them. Endpoints that need no database are therefore ``async``
and hand their CPU work to :func:`compute`, whose threads are capped separately (so a
flood of heavy requests cannot starve the event loop either).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import ParamSpec, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from starlette.requests import Request

__all__ = ["CPU_THREADS", "compute"]

# Concurrent CPU-bound computations per worker process: more than the cores a worker gets
# (the GIL serialises them anyway), few enough that queued ones do not pile up memory.
CPU_THREADS = 8

P = ParamSpec("P")
T = TypeVar("T")


def _limiter(request: Request) -> CapacityLimiter:
    limiter: CapacityLimiter | None = getattr(request.app.state, "cpu_limiter", None)
    if limiter is None:  # created on first use, inside the running event loop
        limiter = CapacityLimiter(CPU_THREADS)
        request.app.state.cpu_limiter = limiter
    return limiter


async def compute(request: Request, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` on a CPU thread (not the database-bound pool)."""
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs), limiter=_limiter(request))
