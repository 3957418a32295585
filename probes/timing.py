"""Timing primitives: the run's time budget, device-aware timers and median-of-repeats.

Every benchmark is bounded by a :class:`Deadline` carved out of the :class:`Budget` that
``--seconds`` sets, warms up before it measures, and reports the median of its repeats. On a
GPU one call is timed with CUDA events (the device's own clock); on the CPU with
``time.perf_counter``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from recommender.profile import Figure

__all__ = [
    "Budget",
    "Clock",
    "Deadline",
    "Samples",
    "cuda_event",
    "measure",
    "percentile",
    "sync",
    "time_call",
]


Clock = Callable[[], float]  # seconds on a monotonic scale; tests inject a fake one


@dataclass(frozen=True)
class Deadline:
    """A point on ``clock`` (default: the monotonic clock) that a phase must finish by."""

    at: float
    clock: Clock = field(default=time.monotonic, compare=False, repr=False)

    @classmethod
    def after(cls, seconds: float, clock: Clock = time.monotonic) -> Deadline:
        return cls(clock() + max(0.0, seconds), clock)

    def remaining(self) -> float:
        return max(0.0, self.at - self.clock())

    def expired(self) -> bool:
        return self.clock() >= self.at

    def fraction(self, share: float) -> Deadline:
        """A deadline ``share`` of the way from now to this one (on the same clock)."""
        return Deadline.after(self.remaining() * share, self.clock)


@dataclass
class Budget:
    """The whole run's time: phases ask for their share of what is left.

    ``reserve_s`` is kept back at the end for writing the report, so the run ends in time.
    """

    total_s: float
    reserve_s: float = 0.0
    started: float | None = None  # on ``clock``; default: when the budget is made
    clock: Clock = field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    @property
    def start(self) -> float:
        assert self.started is not None  # set by __post_init__
        return self.started

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float:
        return max(0.0, self.total_s - self.reserve_s - self.elapsed())

    def end(self) -> Deadline:
        return Deadline(self.start + self.total_s, self.clock)

    def phase(self, weight: float, weights_left: float) -> Deadline:
        """The deadline of a phase of ``weight`` among ``weights_left`` still to run."""
        share = weight / weights_left if weights_left > 0 else 1.0
        return Deadline.after(self.remaining() * min(1.0, share), self.clock)


def sync(device: torch.device) -> None:
    """Wait for the device's queued work (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def cuda_event() -> torch.cuda.Event:
    """A timing-enabled CUDA event (not recorded yet)."""
    return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]


def time_call(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds one call of ``fn`` takes: CUDA events on a GPU, ``perf_counter`` on the CPU."""
    if device.type == "cuda":
        start, end = cuda_event(), cuda_event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1e3
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@dataclass(frozen=True)
class Samples:
    """Durations (seconds) of repeated calls; throughput = ``work / duration``."""

    seconds: tuple[float, ...]

    def __bool__(self) -> bool:
        return bool(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def figure(
        self, work: float, *, unit: str, method: str, spec_peak: float | None = None
    ) -> Figure:
        """A :class:`Figure` of ``work`` units per second (median, min, max over repeats)."""
        rates = sorted(work / s for s in self.seconds if s > 0)
        if not rates:
            raise ValueError("no positive duration among the samples")
        value = statistics.median(rates)
        fraction = value / spec_peak if spec_peak else None
        return Figure(
            value=value,
            unit=unit,
            repeats=len(rates),
            min=rates[0],
            max=rates[-1],
            spec_peak=spec_peak,
            fraction_of_peak=fraction,
            method=method,
        )


def measure(
    fn: Callable[[], object],
    device: torch.device,
    deadline: Deadline,
    *,
    warmup: int = 1,
    max_repeats: int = 20,
    before: Callable[[], object] | None = None,
) -> Samples:
    """Warm up, then time ``fn`` until ``max_repeats`` or the deadline, whichever is first.

    ``before`` runs untimed ahead of every call (an L2 flush, a page-cache drop). A repeat
    is only started when the slowest call so far still fits before the deadline, so the
    phase ends in time; if not even one fits after warm-up the result is empty.
    """
    slowest = 0.0
    for _ in range(warmup):
        if before is not None:
            before()
        t0 = deadline.clock()
        fn()
        sync(device)
        slowest = deadline.clock() - t0  # the last warm-up call: first-touch costs are paid
        if deadline.expired():
            return Samples(())
    out: list[float] = []
    while len(out) < max_repeats and deadline.remaining() > slowest:
        t0 = deadline.clock()
        if before is not None:
            before()
            sync(device)
        out.append(time_call(fn, device))
        slowest = max(slowest, deadline.clock() - t0)
    return Samples(tuple(out))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
