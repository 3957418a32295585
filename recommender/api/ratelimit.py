"""Rate limits on ``/v1``: per client address, and per API key, with the ``limits`` library.

Every ``/v1`` request counts against its client address (the peer uvicorn saw; behind a
proxy, run uvicorn with ``--forwarded-allow-ips`` so that it is the client's); a request that
carries a well-formed API key also counts against that key (by its visible prefix: no
database look-up before the limit). Past a limit the answer is 429 problem+json with
``Retry-After``. Counters are a sliding window in the storage the settings name (in memory
per worker by default; a shared ``async+redis://`` storage makes them global).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from limits import RateLimitItem, parse_many
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.storage import storage_from_string
from starlette.types import ASGIApp, Receive, Scope, Send

from recommender.api.problems import Problem, ProblemResponse, problem_type
from recommender.settings import Settings
from recommender.store import key_prefix

__all__ = ["RateLimitMiddleware", "presented_key"]

LIMITED_PREFIX = "/v1/"


def presented_key(scope: Scope) -> str | None:
    """The API key a request carries (``Authorization: Bearer`` or ``X-API-Key``), unverified."""
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                return credentials.strip()
        elif name == b"x-api-key" and value.strip():
            return value.decode("latin-1").strip()
    return None


class RateLimitMiddleware:
    """Counts each /v1 request against its address and key; 429 past either limit."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        storage = storage_from_string(settings.rate_limit_storage)
        self.limiter = SlidingWindowCounterRateLimiter(storage)
        self.per_address = _items(settings.rate_limit_per_address)
        self.per_key = _items(settings.rate_limit_per_key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(LIMITED_PREFIX):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        checks: list[tuple[Sequence[RateLimitItem], str, str]] = [
            (self.per_address, "address", client[0] if client else "unknown")
        ]
        prefix = key_prefix(presented_key(scope) or "")
        if prefix is not None:
            checks.append((self.per_key, "key", prefix))
        for items, kind, who in checks:
            for item in items:
                if not await self.limiter.hit(item, kind, who):
                    stats = await self.limiter.get_window_stats(item, kind, who)
                    wait = max(1, math.ceil(stats.reset_time - time.time()))
                    await _too_many(scope, kind, item, wait)(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _items(spec: str) -> list[RateLimitItem]:
    return list(parse_many(spec)) if spec else []


def _too_many(scope: Scope, kind: str, item: RateLimitItem, wait_s: int) -> ProblemResponse:
    setting = "RECOMMENDER_RATE_LIMIT_PER_" + ("ADDRESS" if kind == "address" else "KEY")
    problem = Problem(
        type=problem_type("rate-limited"),
        title="Too Many Requests",
        status=429,
        detail=f"More than {item} from this {'client address' if kind == 'address' else 'API key'}"
        f" ({setting}); retry in {wait_s} s.",
        instance=scope["path"],
    )
    return ProblemResponse(
        problem.model_dump(mode="json", exclude_none=True),
        status_code=429,
        headers={"Retry-After": str(wait_s)},
    )
