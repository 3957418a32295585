"""API keys belong in a header, never in a URL (URLs end up in logs, histories, referrers).

:class:`KeysInQueryMiddleware` refuses any request whose query string has a credential-like
parameter (``?api_key=``) with a 400 that says which header to use; :func:`redact_query`
hides such values in a logged request line (the access log's filter calls it).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from recommender.api.problems import Problem, ProblemResponse, problem_type

__all__ = ["SECRET_PARAMETERS", "KeysInQueryMiddleware", "redact_query"]

# Query parameters that carry credentials (compared case-insensitively).
SECRET_PARAMETERS = frozenset(
    {"api_key", "apikey", "api-key", "key", "token", "access_token", "auth", "authorization"}
)
_SECRET = re.compile(
    r"(?i)([?&](?:" + "|".join(re.escape(n) for n in sorted(SECRET_PARAMETERS)) + r")=)[^&\s\"]*"
)


def redact_query(text: str) -> str:
    """``text`` with every credential parameter's value replaced by ``REDACTED``."""
    return _SECRET.sub(r"\1REDACTED", text)


class KeysInQueryMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"") if scope["type"] == "http" else b""
        if query:
            names = {
                name.lower()
                for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True)
            }
            found = sorted(names & SECRET_PARAMETERS)
            if found:
                problem = Problem(
                    type=problem_type("key-in-query"),
                    title="Bad Request",
                    status=400,
                    detail=f"Query parameter {found[0]!r} looks like a credential; URLs are "
                    "logged, so keys are only read from a header: send "
                    "`Authorization: Bearer <key>` or `X-API-Key: <key>`, and revoke a key "
                    "that was sent in a URL (`recommender apikey revoke`).",
                    instance=scope["path"],
                )
                response = ProblemResponse(
                    problem.model_dump(mode="json", exclude_none=True), status_code=400
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
