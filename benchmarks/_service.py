"""What the service benchmarks (``load.py``, ``abuse.py``) share: a free loopback port, a
server process started, awaited until ready and stopped, and its worker processes."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx

__all__ = ["READY_TIMEOUT_S", "child_pids", "free_port", "running", "wait_ready"]

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


@contextlib.contextmanager
def running(
    cmd: list[str], url: str, *, stop_timeout_s: float = 30.0, **popen: Any
) -> Iterator[subprocess.Popen[Any]]:
    """Start ``cmd`` (a server listening at ``url``), yield it once ready, stop it with
    SIGINT (uvicorn's graceful shutdown) on the way out."""
    proc = subprocess.Popen(cmd, **popen)
    try:
        wait_ready(url, proc)
        yield proc
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=stop_timeout_s)


def child_pids(pid: int) -> list[int]:
    """The direct children of ``pid`` (a uvicorn supervisor's workers)."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(p) for p in out.stdout.split()]
