"""Request bodies: too large (413), too slow (408), too many at once (503)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import Message, Scope

from recommender.api.limits import BodyLimitMiddleware


async def _ok(scope: Scope, receive: Any, send: Any) -> None:
    message = await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": message["body"]})


def _scope(length: int | None = None) -> Scope:
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    return {"type": "http", "path": "/v1/x", "method": "POST", "headers": headers}


def _run(middleware: BodyLimitMiddleware, scope: Scope, chunks: list[bytes | None]) -> int:
    """Send ``chunks`` (``None``: the client stalls) and return the answer's status."""
    sent: list[Message] = []

    async def receive() -> Message:
        chunk = chunks.pop(0) if chunks else None
        if chunk is None:
            await asyncio.Event().wait()  # never arrives
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(middleware(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    status: int = start["status"]
    return status


def test_a_body_that_does_not_arrive_in_time_is_408_and_frees_its_buffer() -> None:
    mw = BodyLimitMiddleware(_ok, max_bytes=10_000, timeout_s=0.01)
    assert _run(mw, _scope(), [b"x" * 100, None]) == 408
    assert mw.buffered_bytes == 0


def test_bodies_past_the_buffer_bound_are_503() -> None:
    mw = BodyLimitMiddleware(_ok, max_bytes=10_000, max_buffered_bytes=1_500)
    mw.buffered_bytes = 1_000  # another request is being received
    assert _run(mw, _scope(), [b"x" * 600]) == 503
    assert mw.buffered_bytes == 1_000
    assert _run(mw, _scope(), [b"x" * 400]) == 200


def test_too_large_is_413_before_reading_when_declared() -> None:
    mw = BodyLimitMiddleware(_ok, max_bytes=1_024)
    assert _run(mw, _scope(length=5_000), []) == 413
    assert _run(mw, _scope(), [b"x" * 1_000, b"x" * 1_000]) == 413
    assert _run(mw, _scope(), [json.dumps({"a": 1}).encode()]) == 200
    assert mw.buffered_bytes == 0


def test_a_path_with_small_bodies_has_its_own_tighter_limit() -> None:
    mw = BodyLimitMiddleware(_ok, max_bytes=1_000_000, per_path={"/v1/x": 2_000})
    assert _run(mw, _scope(length=660_000), []) == 413  # refused before reading
    assert _run(mw, {**_scope(), "path": "/v1/other"}, [b"x" * 5_000]) == 200
