"""What the service benchmarks (``load.py``, ``abuse.py``) share: a free loopback port and
waiting for a started ``recommender serve`` to be ready."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from typing import Any

import httpx

__all__ = ["READY_TIMEOUT_S", "free_port", "wait_ready"]

READY_TIMEOUT_S = 120.0  # migrations and the catalog load on a busy 2-core machine
POLL_S = 0.2


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_ready(url: str, proc: subprocess.Popen[Any]) -> None:
    """Return once ``url``'s ``/readyz`` answers 200; exit if ``proc`` dies or time runs out."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the service exited with {proc.returncode} before it was ready")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        time.sleep(POLL_S)
    raise SystemExit(f"the service was not ready within {READY_TIMEOUT_S:.0f} s")
