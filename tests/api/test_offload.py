"""CPU work in a worker runs one computation at a time (the GIL serialises it anyway)."""

from __future__ import annotations

import threading
import time

import anyio
from starlette.applications import Starlette
from starlette.requests import Request

from recommender.api.app import create_app
from recommender.api.offload import compute, cpu_bound, install_cpu_lock
from recommender.settings import Settings

HOLD_S = 0.02


def _request(app: Starlette) -> Request:
    return Request({"type": "http", "app": app, "method": "POST", "headers": []})


def test_computations_and_sync_endpoints_never_overlap() -> None:
    app = Starlette()
    install_cpu_lock(app)
    request = _request(app)
    inside = 0
    most = 0
    guard = threading.Lock()

    def work() -> None:
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(HOLD_S)  # a computation holding the CPU lock
        with guard:
            inside -= 1

    def sync_endpoint() -> None:  # what create_recommendation does on its own thread
        with cpu_bound(request):
            work()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(compute, request, work)
                tg.start_soon(anyio.to_thread.run_sync, sync_endpoint)

    anyio.run(main)
    assert most == 1


def test_the_service_app_has_the_lock() -> None:
    settings = Settings(database_url="sqlite:///:memory:", auto_migrate=False)
    app = create_app(settings)
    assert isinstance(app.state.cpu_lock, type(threading.Lock()))
