"""Where blocking work runs: CPU work on threads of its own, never behind database waits.

Starlette runs sync endpoints on one pool of worker threads (40 by default); when the
database is slow, requests waiting for it hold those threads, and an endpoint that needs no
database would queue behind them. Endpoints that need no database are therefore ``async``
and hand their CPU work to :func:`compute`, whose threads are capped separately (so a
flood of heavy requests cannot starve the event loop either).

CPU work runs one computation at a time per worker process (:func:`cpu_bound`, one lock per
app): the GIL serialises it anyway, and running several at once only makes the threads trade
the GIL back and forth around every small numpy operation (numpy releases it for each ufunc).
Measured on one worker (2-core machine, varied recommendations): 7.4 ms of CPU per request
with one in flight, 11.3 ms with 4 and 15.0 ms with 8, throughput falling from 125/s to 74/s.
Threads waiting for the lock hold no GIL; the event loop and database waits go on meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from starlette.applications import Starlette
from starlette.requests import Request

__all__ = ["CPU_THREADS", "compute", "cpu_bound", "install_cpu_lock"]

# Threads handed CPU work per worker process: the computations themselves take turns on
# :func:`cpu_bound`'s lock; this bounds how many wait holding a thread (queued ones beyond it
# wait as coroutines, which cost no thread).
CPU_THREADS = 8

P = ParamSpec("P")
T = TypeVar("T")


def _limiter(request: Request) -> CapacityLimiter:
    limiter: CapacityLimiter | None = getattr(request.app.state, "cpu_limiter", None)
    if limiter is None:  # created on first use, inside the running event loop
        limiter = CapacityLimiter(CPU_THREADS)
        request.app.state.cpu_limiter = limiter
    return limiter


def install_cpu_lock(app: Starlette) -> None:
    """Give ``app`` (a Starlette / FastAPI app) the lock :func:`cpu_bound` takes."""
    app.state.cpu_lock = threading.Lock()


@contextmanager
def cpu_bound(request: Request) -> Iterator[None]:
    """Hold this worker's CPU lock: one engine computation at a time (see the module doc).
    For sync endpoints, which already run on a thread; async ones use :func:`compute`."""
    lock: threading.Lock = request.app.state.cpu_lock
    with lock:
        yield


async def compute(request: Request, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` on a CPU thread (not the database-bound pool), under the
    worker's CPU lock."""

    def run() -> T:
        with cpu_bound(request):
            return fn(*args, **kwargs)

    return await anyio.to_thread.run_sync(run, limiter=_limiter(request))
