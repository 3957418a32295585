"""A clock for tests: time moves only when the test says so (or by a fixed tick per read)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FakeClock:
    """``now`` seconds; every read adds ``tick`` (0: time stands still between ``advance``)."""

    now: float = 1000.0
    tick: float = 0.0

    def __call__(self) -> float:
        self.now += self.tick
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
