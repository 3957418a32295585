"""Request body limits: size (413), time to receive it (408), and memory for all of them (503).

A declared ``Content-Length`` over the limit is refused before anything is read; a body
without one (chunked) is read up to the limit and refused as soon as it passes it, so a
client can never make the service buffer more than the limit. A body must arrive within
the body timeout (a client trickling bytes is answered 408 and its memory freed), and the
bodies being received at once may hold at most ``max_buffered_bytes`` in one worker: past
that a request is 503 with ``Retry-After`` instead of the process growing without bound.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recommender.api.problems import Problem, ProblemResponse, problem_type

__all__ = ["BodyLimitMiddleware"]


def _problem(scope: Scope, status: int, slug: str, title: str, detail: str) -> ProblemResponse:
    problem = Problem(
        type=problem_type(slug), title=title, status=status, detail=detail, instance=scope["path"]
    )
    return ProblemResponse(problem.model_dump(mode="json", exclude_none=True), status_code=status)


# Seconds a client should wait when every body buffer is in use.
BUSY_RETRY_AFTER_S = 1


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        *,
        timeout_s: float = 30.0,
        max_buffered_bytes: int = 64 * 1_048_576,
        per_path: dict[str, int] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.per_path = per_path or {}  # tighter limits for bodies known to be small
        self.timeout_s = timeout_s
        self.max_buffered_bytes = max_buffered_bytes
        self.buffered_bytes = 0  # in all requests being received now (one event loop)

    def _slow(self, scope: Scope) -> ProblemResponse:
        return _problem(
            scope,
            408,
            "body-timeout",
            "Request Timeout",
            f"The request body did not arrive within {self.timeout_s:g} s "
            "(RECOMMENDER_SERVER_BODY_TIMEOUT_SECONDS).",
        )

    def _busy(self, scope: Scope) -> ProblemResponse:
        response = _problem(
            scope,
            503,
            "busy",
            "Service Unavailable",
            "The service is receiving too many request bodies at once; retry shortly.",
        )
        response.headers["Retry-After"] = str(BUSY_RETRY_AFTER_S)
        return response

    def _limit(self, scope: Scope) -> int:
        return self.per_path.get(scope["path"], self.max_bytes)

    def _too_large(self, scope: Scope) -> ProblemResponse:
        limit = self._limit(scope)
        setting = (
            "RECOMMENDER_MAX_BODY_BYTES" if limit == self.max_bytes else "no valid body is larger"
        )
        return _problem(
            scope,
            413,
            "body-too-large",
            "Content Too Large",
            f"The request body exceeds {limit} bytes ({setting}).",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared == -1:
            bad = _problem(
                scope, 400, "bad-content-length", "Bad Request", "Content-Length is not a number."
            )
            await bad(scope, receive, send)
            return
        if declared is not None and declared > self._limit(scope):
            await self._too_large(scope)(scope, receive, send)
            return
        body = bytearray()
        try:
            outcome = await self._read(scope, receive, body)
        finally:
            self.buffered_bytes -= len(body)
        if isinstance(outcome, ProblemResponse):
            await outcome(scope, receive, send)
        elif outcome:
            await self.app(scope, _replay(bytes(body), receive), send)

    async def _read(
        self, scope: Scope, receive: Receive, body: bytearray
    ) -> ProblemResponse | bool:
        """Receive the whole body into ``body``: ``True`` when it came, ``False`` when the
        client went away, or the refusal to answer instead."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                return self._slow(scope)
            if message["type"] != "http.request":  # client went away
                return False
            chunk = message.get("body", b"")
            if self.buffered_bytes + len(chunk) > self.max_buffered_bytes:
                return self._busy(scope)
            body += chunk
            self.buffered_bytes += len(chunk)
            if len(body) > self._limit(scope):
                return self._too_large(scope)
            if not message.get("more_body", False):
                return True


def _content_length(scope: Scope) -> int | None:
    """The declared length, ``None`` when absent, ``-1`` when unreadable."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                return -1
            return length if length >= 0 else -1
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
