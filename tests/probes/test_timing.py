"""Budgets, deadlines, median-of-repeats and the figures made from them."""

from __future__ import annotations

import time

import pytest
import torch

from probes.timing import Budget, Deadline, Samples, measure, percentile

CPU = torch.device("cpu")


def test_a_phase_gets_its_weighted_share_of_what_is_left() -> None:
    budget = Budget(10.0, reserve_s=1.0)
    deadline = budget.phase(0.25, 1.0)
    assert deadline.remaining() == pytest.approx(9.0 * 0.25, abs=0.05)
    assert budget.phase(1.0, 0.5).remaining() == pytest.approx(9.0, abs=0.05)  # capped at all


def test_measure_stops_at_max_repeats() -> None:
    calls: list[int] = []
    samples = measure(lambda: calls.append(1), CPU, Deadline.after(5), warmup=2, max_repeats=7)
    assert len(samples.seconds) == 7
    assert len(calls) == 9  # warm-up calls are not samples


def test_measure_ends_within_the_deadline() -> None:
    start = time.monotonic()
    samples = measure(lambda: time.sleep(0.01), CPU, Deadline.after(0.1), max_repeats=1000)
    assert time.monotonic() - start < 0.1 + 0.1  # one call's worth of slack, and noise
    assert 1 <= len(samples.seconds) < 10


def test_measure_gives_nothing_when_one_call_cannot_fit() -> None:
    samples = measure(lambda: time.sleep(0.05), CPU, Deadline.after(0.06), warmup=1)
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
