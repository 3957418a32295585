"""Request body size limit: a body larger than the setting is refused with 413 problem+json.

A declared ``Content-Length`` over the limit is refused before anything is read; a body
without one (chunked) is read up to the limit and refused as soon as it passes it, so a
client can never make the service buffer more than the limit.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recommender.api.problems import Problem, ProblemResponse, problem_type

__all__ = ["BodyLimitMiddleware"]


def _problem(scope: Scope, status: int, slug: str, title: str, detail: str) -> ProblemResponse:
    problem = Problem(
        type=problem_type(slug), title=title, status=status, detail=detail, instance=scope["path"]
    )
    return ProblemResponse(problem.model_dump(mode="json", exclude_none=True), status_code=status)


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self, scope: Scope) -> ProblemResponse:
        return _problem(
            scope,
            413,
            "body-too-large",
            "Content Too Large",
            f"The request body exceeds {self.max_bytes} bytes (RECOMMENDER_MAX_BODY_BYTES).",
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
        if declared is not None and declared > self.max_bytes:
            await self._too_large(scope)(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # client went away
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._too_large(scope)(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(bytes(body), receive), send)


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
