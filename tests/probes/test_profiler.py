"""The step profiler and the classification: slow data is transfer-bound, heavy compute is
compute-bound, and the figures (FLOPs, bytes, stages) are what the workload did."""

from __future__ import annotations

import pytest
import torch

from probes.classify import classify
from probes.profiler import profile_workload
from probes.timing import Deadline
from probes.workloads import load_workload
from recommender.profile import StageTiming, Utilization, WorkloadProfile
from tests.probes.fakeclock import FakeClock
from tests.probes.sample_workloads import BATCH, IN, OUT

CPU = torch.device("cpu")
SAMPLES = "tests.probes.sample_workloads"


def _run(name: str, seconds: float = 0.6, max_steps: int = 1000) -> WorkloadProfile:
    """Profile on a clock that ticks 10 ms per read: the step count does not depend on how
    fast (or how busy) the machine is; the stage timings are still measured for real."""
    wl = load_workload(f"{SAMPLES}:{name}", CPU)
    deadline = Deadline.after(seconds, FakeClock(tick=0.01))
    return profile_workload(wl, CPU, deadline, max_steps=max_steps).profile


def test_a_slow_loader_is_transfer_bound_on_data_loading() -> None:
    w = _run("slow_loader")
    verdict = classify(w, vcpus=2)
    assert verdict.bound == "transfer-bound"
    assert verdict.limiting_stage == "data-loading"
    assert w.data_wait_s.median >= 0.019  # the 20 ms sleep (a busy machine only adds)
    assert any("next(batches)" in r and "loader workers" in r for r in verdict.reasons)


def test_heavy_compute_with_instant_data_is_compute_bound() -> None:
    w = _run("heavy_compute")
    verdict = classify(w)
    assert verdict.bound == "compute-bound"
    assert verdict.limiting_stage == "compute"
    assert verdict.gpu_busy_fraction >= 0.9


def test_flops_bytes_and_throughput_are_measured() -> None:
    w = _run("linear", seconds=100.0, max_steps=50)
    assert w.batch_size == BATCH and w.devices_used == 0
    assert w.flops_per_sample == 2 * IN * OUT
    assert w.flops_per_step == 2 * IN * OUT * BATCH
    assert w.bytes_to_device_per_sample == IN * 4 + 8  # float32 features + an int64 label
    assert w.steps_measured == 50
    assert w.throughput_samples_per_s == pytest.approx(50 * BATCH / w.wall_s)
    assert w.peak_memory_kind == "host-rss" and w.peak_memory_bytes
    assert w.step_s.mean >= w.compute_s.mean


def test_batches_that_run_out_ask_for_an_endless_iterator() -> None:
    wl = load_workload(f"{SAMPLES}:finite", CPU)
    with pytest.raises(RuntimeError, match="endless iterator"):
        profile_workload(wl, CPU, Deadline.after(0.5))


def _synthetic(
    compute: float, data: float, h2d: float, util: list[float] | None = None
) -> WorkloadProfile:
    step = compute + data + h2d
    return WorkloadProfile(
        name="synthetic",
        batch_size=32,
        devices_used=1,
        warmup_steps=2,
        steps_measured=100,
        wall_s=100 * step,
        throughput_samples_per_s=32 / step,
        data_wait_s=StageTiming(mean=data, median=data, p90=data),
        h2d_s=StageTiming(mean=h2d, median=h2d, p90=h2d),
        compute_s=StageTiming(mean=compute, median=compute, p90=compute),
        idle_s=StageTiming(mean=data + h2d, median=data + h2d, p90=data + h2d),
        step_s=StageTiming(mean=step, median=step, p90=step),
        bytes_to_device_per_step=32e6,
        bytes_to_device_per_sample=1e6,
        gpu_utilization=Utilization(
            mean_percent=sum(util) / len(util), samples=util, interval_s=0.1
        )
        if util
        else None,
    )


def test_between_the_thresholds_is_balanced() -> None:
    verdict = classify(_synthetic(compute=0.085, data=0.010, h2d=0.005))
    assert verdict.bound == "balanced" and verdict.limiting_stage == "data-loading"


def test_a_slow_pageable_copy_is_host_to_device_bound_and_says_pin() -> None:
    verdict = classify(_synthetic(compute=0.02, data=0.001, h2d=0.03))
    assert verdict.bound == "transfer-bound" and verdict.limiting_stage == "host-to-device"
    assert any("pin_memory=True" in r for r in verdict.reasons)


def test_nvml_utilisation_caps_the_busy_share() -> None:
    # Events say the stream was busy (the host stalled inside step), NVML says 40 %.
    verdict = classify(_synthetic(compute=0.1, data=0.0, h2d=0.0, util=[40.0, 35.0, 45.0]))
    assert verdict.gpu_busy_fraction == pytest.approx(0.40)
    assert verdict.bound == "transfer-bound" and verdict.limiting_stage == "host-overhead"
    assert any("NVML" in r for r in verdict.reasons)
