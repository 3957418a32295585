"""Budgets, deadlines, median-of-repeats and the figures made from them."""

from __future__ import annotations

import pytest
import torch

from probes.timing import Budget, Deadline, Samples, measure, percentile
from tests.probes.fakeclock import FakeClock

CPU = torch.device("cpu")


def test_a_phase_gets_its_weighted_share_of_what_is_left() -> None:
    clock = FakeClock()
    budget = Budget(10.0, reserve_s=1.0, clock=clock)
    deadline = budget.phase(0.25, 1.0)
    assert deadline.remaining() == 9.0 * 0.25
    assert budget.phase(1.0, 0.5).remaining() == 9.0  # capped at all
    clock.advance(4.0)
    assert budget.elapsed() == 4.0
    assert budget.remaining() == 5.0
    assert deadline.expired()
    assert budget.end().remaining() == 6.0


def test_fraction_stays_on_the_same_clock() -> None:
    clock = FakeClock()
    half = Deadline.after(10.0, clock).fraction(0.5)
    assert half.remaining() == 5.0
    clock.advance(5.0)
    assert half.expired()


def test_measure_stops_at_max_repeats() -> None:
    calls: list[int] = []
    samples = measure(lambda: calls.append(1), CPU, Deadline.after(5), warmup=2, max_repeats=7)
    assert len(samples.seconds) == 7
    assert len(calls) == 9  # warm-up calls are not samples


def test_measure_starts_no_call_that_would_pass_the_deadline() -> None:
    clock = FakeClock()  # binary fractions of a second: exact arithmetic
    deadline = Deadline.after(8 / 64, clock)
    samples = measure(lambda: clock.advance(1 / 64), CPU, deadline, max_repeats=1000)
    # 1/64 s of warm-up, then a call only while more than the slowest call (1/64 s) is left
    assert len(samples.seconds) == 6
    assert clock.now == deadline.at - 1 / 64


def test_measure_gives_nothing_when_one_call_cannot_fit() -> None:
    clock = FakeClock()
    deadline = Deadline.after(0.06, clock)
    samples = measure(lambda: clock.advance(0.05), CPU, deadline, warmup=1)
    assert not samples


def test_before_runs_untimed_ahead_of_every_call() -> None:
    order: list[str] = []
    measure(
        lambda: order.append("call"),
        CPU,
        Deadline.after(1),
        warmup=1,
        max_repeats=2,
        before=lambda: order.append("flush"),
    )
    assert order == ["flush", "call"] * 3


def test_figure_is_the_median_rate_with_peak_fraction() -> None:
    fig = Samples((1.0, 2.0, 4.0)).figure(8.0, unit="GB/s", method="m", spec_peak=8.0)
    assert (fig.value, fig.min, fig.max) == (4.0, 2.0, 8.0)
    assert fig.fraction_of_peak == pytest.approx(0.5)
    assert fig.repeats == 3


def test_percentile_interpolates() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.9) == pytest.approx(4.6)
    assert percentile([], 0.5) == 0.0
