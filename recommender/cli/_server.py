"""How ``recommender serve`` runs uvicorn: guarded connections and evenly loaded workers.

Connections: every accepted socket gets TCP_NODELAY; a connection that has not sent a
complete request head within the header timeout (from connecting, or from the end of its
last response) is closed, so idle or slow-loris connections cannot pile up; past the
connection limit a new connection is closed at once. (Keep-alive idling is uvicorn's own
``timeout_keep_alive``; reading the body has its deadline in
:class:`recommender.api.limits.BodyLimitMiddleware`.)

Workers: each worker process binds its own listening socket with ``SO_REUSEPORT``, so the
kernel spreads new connections evenly over them (one shared socket lets whichever worker
wakes first take most of them). :class:`Supervisor` starts the workers, restarts one that
dies, and stops them all on SIGINT or SIGTERM.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import resource
import signal
import socket
import time
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "HTTP_PROTOCOL",
    "ConnectionLimits",
    "GuardedH11Protocol",
    "Supervisor",
    "bind_reuseport",
    "raise_open_file_limit",
]

log = logging.getLogger("recommender.serve")

# Pending connections the kernel queues per listening socket (uvicorn's default is 2048).
LISTEN_BACKLOG = 2048
# How often the supervisor looks for a dead worker (seconds).
SUPERVISE_INTERVAL_S = 0.5
# How long a stopping worker may take to finish its requests before it is killed (seconds).
STOP_GRACE_S = 20.0


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    header_timeout_s: float = 10.0
    max_connections: int = 4096


def _nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _Guard:
    """The connection rules above, mixed into a uvicorn HTTP protocol class."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    _head_deadline: asyncio.TimerHandle | None = None
    _head_seen = False

    # Provided by the uvicorn protocol this is mixed into.
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    connections: set[Any]

    @classmethod
    def configure(cls, limits: ConnectionLimits) -> None:
        _Guard.limits = limits

    def _await_head(self) -> None:
        self._cancel_deadline()
        self._head_seen = False
        self._head_deadline = self.loop.call_later(self.limits.header_timeout_s, self._head_overdue)

    def _head_overdue(self) -> None:
        self._head_deadline = None
        if not self._head_seen and not self.transport.is_closing():
            self.transport.close()

    def _cancel_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _guard_connection(self, transport: asyncio.Transport) -> bool:
        """After the protocol registered the connection: ``False`` when it was refused."""
        if len(self.connections) > self.limits.max_connections:
            transport.abort()
            return False
        self._await_head()
        return True


class GuardedH11Protocol(_Guard, H11Protocol):
    """uvicorn's h11 protocol with TCP_NODELAY, the header deadline and the connection limit.

    With ``--workers`` > 1 uvicorn binds the listening socket itself with ``proto`` 0, and
    asyncio only disables Nagle's algorithm on accepted sockets whose ``proto`` is TCP; each
    keep-alive response then waits ~40 ms for the client's delayed ACK
    (https://github.com/Kludex/uvicorn/issues/3149). Setting the option here fixes both paths.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _nodelay(transport)
        super().connection_made(transport)
        self._guard_connection(transport)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._head_seen = True

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._await_head()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)


HTTP_PROTOCOL: type[asyncio.Protocol] = GuardedH11Protocol

try:  # the C parser, when installed (`pip install 'uvicorn[standard]'`)
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - depends on the environment
    pass
else:  # pragma: no cover - depends on the environment

    class GuardedHttpToolsProtocol(_Guard, HttpToolsProtocol):
        """:class:`GuardedH11Protocol`'s rules on uvicorn's httptools-based protocol."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            _nodelay(transport)
            super().connection_made(transport)
            self._guard_connection(transport)

        def on_headers_complete(self) -> None:
            self._head_seen = True
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._await_head()
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_deadline()
            super().connection_lost(exc)

    HTTP_PROTOCOL = GuardedHttpToolsProtocol


def raise_open_file_limit(wanted: int) -> int:
    """Raise this process's open-file limit towards ``wanted`` (each connection is a file);
    returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def bind_reuseport(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port) that other workers can bind too (SO_REUSEPORT)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    sock.listen(LISTEN_BACKLOG)
    sock.set_inheritable(True)
    return sock


def _worker_main(host: str, port: int, uvicorn_options: dict[str, Any]) -> None:
    """One worker process: its own SO_REUSEPORT socket, uvicorn serving the app factory."""
    import uvicorn

    sock = bind_reuseport(host, port)
    config = uvicorn.Config(
        "recommender.cli.serve:worker_app", factory=True, workers=1, **uvicorn_options
    )
    uvicorn.Server(config).run(sockets=[sock])


class Supervisor:
    """Runs ``workers`` worker processes until SIGINT/SIGTERM; restarts one that dies."""

    def __init__(self, workers: int, host: str, port: int, uvicorn_options: dict[str, Any]) -> None:
        self.workers = workers
        self.args = (host, port, uvicorn_options)
        self.context = multiprocessing.get_context("spawn")
        self.processes: list[BaseProcess] = []
        self.stopping = False

    def _start(self) -> BaseProcess:
        process = self.context.Process(target=_worker_main, args=self.args, daemon=False)
        process.start()
        return process

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True

    def run(self) -> None:
        bind_reuseport(self.args[0], self.args[1]).close()  # fail now if the port is taken
        previous = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.processes = [self._start() for _ in range(self.workers)]
            while not self.stopping:
                time.sleep(SUPERVISE_INTERVAL_S)
                self._replace_dead()
        finally:
            self._terminate()
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _replace_dead(self) -> None:
        for i, process in enumerate(self.processes):
            if process.is_alive() or self.stopping:
                continue
            log.warning("worker %s exited with %s; starting another", process.pid, process.exitcode)
            _forget_metrics_of(process.pid)
            self.processes[i] = self._start()

    def _terminate(self) -> None:
        for process in self.processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()


def _forget_metrics_of(pid: int | None) -> None:
    """Drop a dead worker's live gauges from the shared metrics directory."""
    if pid is None or not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
