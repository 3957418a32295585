"""Connection rules of `recommender serve`: a connection that sends no request head in time
is closed, connections past the limit are refused, and credentials never reach the log."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from recommender.api.keys_in_query import redact_query
from recommender.cli._server import ConnectionLimits, GuardedH11Protocol
from recommender.cli.serve import RedactKeysFilter
from tests.api.conftest import assert_problem


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def served() -> Iterator[tuple[int, Any]]:
    """A tiny app under uvicorn with the guarded protocol: 0.3 s head deadline, 3 connections."""
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, str]:
        return {"ok": "yes"}

    GuardedH11Protocol.configure(ConnectionLimits(header_timeout_s=0.3, max_connections=3))
    port = _port()
    config = uvicorn.Config(app, port=port, http=GuardedH11Protocol, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield port, server
    finally:
        server.should_exit = True
        thread.join(10)
        GuardedH11Protocol.configure(ConnectionLimits())


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_a_connection_without_a_request_head_is_closed(served: tuple[int, Any]) -> None:
    port, _ = served
    idle = socket.create_connection(("127.0.0.1", port))
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
    try:
        assert _closed_by_server(idle)
        assert _closed_by_server(slow)
    finally:
        idle.close()
        slow.close()
    assert httpx.get(f"http://127.0.0.1:{port}/ping", timeout=5).json() == {"ok": "yes"}


def test_connections_past_the_limit_are_refused(served: tuple[int, Any]) -> None:
    port, _ = served
    GuardedH11Protocol.configure(ConnectionLimits(header_timeout_s=60, max_connections=3))
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    extra = socket.create_connection(("127.0.0.1", port))
    try:
        assert _closed_by_server(extra)  # at once: the head deadline is a minute away
        held[0].sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        held[0].settimeout(10)
        assert held[0].recv(1024).startswith(b"HTTP/1.1 200")
    finally:
        for s in [*held, extra]:
            s.close()


def test_a_key_in_the_query_string_is_refused_and_redacted(client: TestClient) -> None:
    r = client.get("/v1/accelerators", params={"api_key": "rk_abcdef12_secret"})
    problem = assert_problem(r, 400)
    assert "Authorization: Bearer" in problem["detail"] and "secret" not in r.text
    line = "GET /v1/accelerators?gpu=a100&api_key=rk_abcdef12_secret&x=1 HTTP/1.1"
    assert redact_query(line) == "GET /v1/accelerators?gpu=a100&api_key=REDACTED&x=1 HTTP/1.1"
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d', None, None
    )
    record.args = ("127.0.0.1:1", "GET", "/v1/x?token=abc", "1.1", 400)
    assert RedactKeysFilter().filter(record)
    assert record.getMessage() == '127.0.0.1:1 - "GET /v1/x?token=REDACTED HTTP/1.1" 400'
