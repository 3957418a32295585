"""Retrying a cloud call that was throttled: bounded attempts, exponential backoff with jitter.

Each cloud says "slow down" its own way (``ThrottlingException``, ``RequestLimitExceeded``,
HTTP 429, ``ResourceExhausted``); the refresher passes a classifier that recognises its
cloud's signals. Anything else propagates at once: only throttling is worth waiting for.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = ["Backoff", "Throttle", "ThrottledError"]

T = TypeVar("T")

# is_throttle(exc) -> None (not throttling: re-raise), or the seconds the server asked us to
# wait (0.0 when it named none).
Throttle = Callable[[BaseException], float | None]


class ThrottledError(Exception):
    """Still throttled after every attempt: the caller treats the region as failed."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """``attempts`` tries, sleeping ``base_s * 2**n`` (capped, jittered) between them."""

    attempts: int = 5
    base_s: float = 1.0
    cap_s: float = 20.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    jitter: Callable[[float, float], float] = field(default=random.uniform, compare=False)

    def delay(self, attempt: int, asked_s: float = 0.0) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based)."""
        ceiling = min(self.cap_s, self.base_s * 2.0**attempt)
        return max(min(asked_s, self.cap_s), ceiling / 2 + self.jitter(0.0, ceiling / 2))

    def call(self, fn: Callable[[], T], is_throttle: Throttle, what: str) -> T:
        """``fn()``, retried while ``is_throttle`` recognises the error; else re-raised."""
        last: BaseException | None = None
        for attempt in range(self.attempts):
            try:
                return fn()
            except Exception as exc:
                asked = is_throttle(exc)
                if asked is None:
                    raise
                last = exc
                if attempt + 1 < self.attempts:
                    self.sleep(self.delay(attempt, asked))
        raise ThrottledError(
            f"{what}: still throttled after {self.attempts} attempts ({last})"
        ) from last
