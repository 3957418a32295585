"""The workload step profiler: where each step's time goes, what it computes and moves.

After warm-up, each measured step is split into the host's wait on ``next(batches)``, the
host-to-device copy and the device compute of ``step(batch)``; on a GPU the copy, the
compute and the idle gap before each step are read from CUDA events on the device's own
timeline (the host is not synchronised between steps, so overlap is kept, as in a real
training loop). FLOPs per step come from one extra step under
``torch.utils.flop_counter.FlopCounterMode``; GPU utilisation is sampled with NVML.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode

from probes.nvml import UtilizationSampler, nvml_id_for_cuda
from probes.timing import Deadline, cuda_event, percentile, sync
from probes.workloads import LoadedWorkload, batch_nbytes, batch_size, is_pinned, to_device
from recommender.profile import StageTiming, Utilization, WorkloadProfile

__all__ = [
    "MAX_STEPS",
    "StepTimes",
    "WorkloadRun",
    "count_flops",
    "prepare_flop_counter",
    "profile_workload",
]

MAX_STEPS = 1000
WARMUP_STEPS = 2


@dataclass
class StepTimes:
    """Seconds per measured step for each stage, and the wall time of them all."""

    data_wait: list[float] = field(default_factory=list)
    h2d: list[float] = field(default_factory=list)
    compute: list[float] = field(default_factory=list)
    idle: list[float] = field(default_factory=list)
    step: list[float] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)
    wall_s: float = 0.0


@dataclass
class WorkloadRun:
    """The profile section, the raw per-step times, and whether device memory was used."""

    profile: WorkloadProfile
    times: StepTimes
    device_memory_touched: bool


def _stage(values: list[float]) -> StageTiming:
    return StageTiming(
        mean=statistics.fmean(values) if values else 0.0,
        median=statistics.median(values) if values else 0.0,
        p90=percentile(values, 0.9),
    )


def _rss_bytes() -> int | None:
    try:
        resident = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return resident * os.sysconf("SC_PAGE_SIZE")


def _one_step(wl: LoadedWorkload, device: torch.device) -> float:
    t0 = time.perf_counter()
    wl.step(to_device(_next_batch(wl, 0), device))
    sync(device)
    return time.perf_counter() - t0


def prepare_flop_counter() -> None:
    """Pay FlopCounterMode's one-off start-up (it imports sympy: seconds on a small VM)."""
    x = torch.ones(2, 2)
    with FlopCounterMode(display=False):
        x @ x


def count_flops(wl: LoadedWorkload, device: torch.device) -> float | None:
    """FLOPs of one step (matmuls, convolutions, attention), or ``None`` if it cannot count."""
    batch = to_device(_next_batch(wl, 0), device)
    try:
        with FlopCounterMode(display=False) as counter:
            wl.step(batch)
        sync(device)
    except Exception:  # an op the counter cannot trace: no figure rather than no profile
        return None
    return float(counter.get_total_flops())


@dataclass
class _Mark:
    t0: float
    t1: float
    t2: float
    t3: float
    events: tuple[Any, Any, Any] | None
    nbytes: int


def _event(device: torch.device) -> Any:
    if device.type != "cuda":
        return None
    e = cuda_event()
    e.record()
    return e


@dataclass
class _Loop:
    marks: list[_Mark]
    origin: Any
    wall_s: float
    peak_rss: int | None
    first_size: int = 1
    first_pinned: bool = False


def _exhausted(done: int) -> RuntimeError:
    return RuntimeError(
        f"batches ran out after {done} step(s) of profiling; return an endless iterator "
        "(e.g. itertools.cycle over a few batches) so the probe can time enough steps"
    )


def _next_batch(wl: LoadedWorkload, done: int) -> Any:
    try:
        return next(wl.batches)
    except StopIteration:
        raise _exhausted(done) from None


def _measure_steps(
    wl: LoadedWorkload, device: torch.device, deadline: Deadline, estimate: float, max_steps: int
) -> _Loop:
    """Run steps until ``max_steps``, the deadline, or the end of the batches."""
    # On a GPU the host runs a few steps ahead of the device: stop a little earlier.
    margin = estimate * (2.0 if device.type == "cuda" else 1.0)
    loop = _Loop([], _event(device), 0.0, _rss_bytes() if device.type == "cpu" else None)
    start = time.perf_counter()
    while len(loop.marks) < max_steps and (not loop.marks or deadline.remaining() > margin):
        t0 = time.perf_counter()
        try:
            batch = next(wl.batches)
        except StopIteration:
            if loop.marks:
                break
            raise _exhausted(WARMUP_STEPS) from None
        t1 = time.perf_counter()
        e0 = _event(device)
        on_device = to_device(batch, device)
        e1 = _event(device)
        t2 = time.perf_counter()
        wl.step(on_device)
        e2 = _event(device)
        t3 = time.perf_counter()
        if not loop.marks:
            loop.first_size, loop.first_pinned = batch_size(batch), is_pinned(batch)
        events = (e0, e1, e2) if e0 is not None else None
        loop.marks.append(_Mark(t0, t1, t2, t3, events, batch_nbytes(batch)))
        if loop.peak_rss is not None:
            loop.peak_rss = max(loop.peak_rss, _rss_bytes() or 0)
    sync(device)
    loop.wall_s = time.perf_counter() - start
    return loop


def _split(marks: list[_Mark], origin: Any, wall: float) -> StepTimes:
    times = StepTimes(wall_s=wall)
    prev_end = origin
    for i, m in enumerate(marks):
        times.data_wait.append(m.t1 - m.t0)
        times.nbytes.append(m.nbytes)
        if m.events is None:  # CPU: host clock; the next step starts when this one ends
            end = marks[i + 1].t0 if i + 1 < len(marks) else m.t3
            times.h2d.append(m.t2 - m.t1)
            times.compute.append(m.t3 - m.t2)
            times.step.append(end - m.t0)
            times.idle.append(max(0.0, times.step[-1] - times.compute[-1]))
            continue
        e0, e1, e2 = m.events
        times.h2d.append(e0.elapsed_time(e1) / 1e3)
        times.compute.append(e1.elapsed_time(e2) / 1e3)
        times.idle.append(max(0.0, prev_end.elapsed_time(e0) / 1e3))
        times.step.append(prev_end.elapsed_time(e2) / 1e3)
        prev_end = e2
    return times


def _warm_up(wl: LoadedWorkload, device: torch.device, deadline: Deadline) -> float:
    """Run up to WARMUP_STEPS steps; return the last one's seconds (the step estimate)."""
    estimate = _one_step(wl, device)
    for _ in range(WARMUP_STEPS - 1):
        if deadline.remaining() < 4 * estimate:
            break
        estimate = _one_step(wl, device)
    return estimate


def profile_workload(
    wl: LoadedWorkload,
    device: torch.device,
    deadline: Deadline,
    *,
    max_steps: int = MAX_STEPS,
    flops: bool = True,
) -> WorkloadRun:
    """Warm up, count FLOPs, then time steps until ``max_steps`` or ``deadline``.

    Call :func:`prepare_flop_counter` first when ``flops`` is on, or its start-up cost
    lands in this phase.
    """
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    estimate = _warm_up(wl, device, deadline)
    flops_per_step = (
        count_flops(wl, device) if flops and deadline.remaining() > 3 * estimate else None
    )
    sampler = UtilizationSampler(nvml_id_for_cuda(device.index or 0)) if cuda else None
    with sampler or contextlib.nullcontext():
        loop = _measure_steps(wl, device, deadline, estimate, max_steps)
    times = _split(loop.marks, loop.origin, loop.wall_s)
    peak = int(torch.cuda.max_memory_allocated(device)) if cuda else loop.peak_rss
    profile = _summarise(
        wl,
        times,
        (loop.first_size, loop.first_pinned),
        flops_per_step,
        peak,
        int(cuda),
        _utilization(sampler),
    )
    # Weights or activations on the device take more than a few copies of the batch.
    touched = bool(cuda and peak and peak > 4 * max(times.nbytes, default=0) + (1 << 20))
    return WorkloadRun(profile, times, device_memory_touched=touched)


def _summarise(
    wl: LoadedWorkload,
    times: StepTimes,
    first_batch: tuple[int, bool],
    flops_per_step: float | None,
    peak: int | None,
    devices: int,
    utilization: Utilization | None,
) -> WorkloadProfile:
    size, pinned = first_batch
    steps = len(times.step)
    nbytes = statistics.fmean(times.nbytes) if times.nbytes else 0.0
    compute = _stage(times.compute)
    achieved = flops_per_step / compute.median / 1e12 if flops_per_step and compute.median else None
    return WorkloadProfile(
        name=wl.name,
        kind=wl.kind,
        precision=wl.precision,
        batch_size=size,
        devices_used=devices,
        warmup_steps=WARMUP_STEPS,
        steps_measured=steps,
        wall_s=times.wall_s,
        throughput_samples_per_s=steps * size / times.wall_s if times.wall_s > 0 else 0.0,
        data_wait_s=_stage(times.data_wait),
        h2d_s=_stage(times.h2d),
        compute_s=compute,
        idle_s=_stage(times.idle),
        step_s=_stage(times.step),
        flops_per_step=flops_per_step,
        flops_per_sample=flops_per_step / size if flops_per_step is not None else None,
        achieved_tflops=achieved,
        bytes_to_device_per_step=nbytes,
        bytes_to_device_per_sample=nbytes / size,
        batches_pinned=pinned,
        peak_memory_bytes=peak,
        peak_memory_kind=None if peak is None else "device-allocated" if devices else "host-rss",
        gpu_utilization=utilization,
    )


def _utilization(sampler: UtilizationSampler | None) -> Utilization | None:
    if sampler is None or not sampler.samples:
        return None
    return Utilization(
        mean_percent=statistics.fmean(sampler.samples),
        samples=list(sampler.samples),
        interval_s=sampler.interval_s,
    )
