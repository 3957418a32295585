"""Classify a profiled workload: compute-bound, transfer-bound or balanced, and why.

The rule of thumb of the design: a device busy 95-100 % of the time is compute-bound; one
busy 20-80 % with idle gaps between steps is transfer-bound (the data cannot reach it fast
enough). Here a device that computes at least 90 % of the wall time is compute-bound, at
most 80 % transfer-bound, balanced in between. The time the device does not compute is
split between waiting on ``next(batches)`` (data-loading), the host-to-device copy, and
what remains (host-overhead: Python and kernel-launch time between steps); the largest is
the limiting stage. On a GPU, NVML's utilisation caps the event-based busy share, since
CUDA events also count time the stream waited on the host inside ``step``.
"""

from __future__ import annotations

from recommender.profile import Bound, Capabilities, Classification, LimitingStage, WorkloadProfile

__all__ = ["COMPUTE_BOUND_BUSY", "TRANSFER_BOUND_BUSY", "busy_fraction", "classify"]

COMPUTE_BOUND_BUSY = 0.90
TRANSFER_BOUND_BUSY = 0.80
_MIN_NVML_SAMPLES = 3


def busy_fraction(w: WorkloadProfile) -> float:
    """Share of the wall time the device computed (NVML-capped on a GPU)."""
    if w.wall_s <= 0:
        return 0.0
    busy = min(1.0, w.compute_s.mean * w.steps_measured / w.wall_s)
    util = w.gpu_utilization
    if util is not None and len(util.samples) >= _MIN_NVML_SAMPLES:
        busy = min(busy, util.mean_percent / 100.0)
    return busy


def _stage_shares(w: WorkloadProfile, busy: float) -> dict[LimitingStage, float]:
    """Shares of wall time not computing, attributed to data, copy and host overhead."""
    n, wall = w.steps_measured, w.wall_s
    idle = 1.0 - busy
    data = min(idle, w.data_wait_s.mean * n / wall) if wall > 0 else 0.0
    h2d = min(idle - data, w.h2d_s.mean * n / wall) if wall > 0 else 0.0
    return {"data-loading": data, "host-to-device": h2d, "host-overhead": idle - data - h2d}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _stage_reasons(
    w: WorkloadProfile, shares: dict[LimitingStage, float], vcpus: int | None
) -> list[str]:
    out = []
    if shares["data-loading"] > 0.05:
        rate = w.throughput_samples_per_s * w.bytes_to_device_per_sample / 1e6
        out.append(
            f"next(batches) waits {_ms(w.data_wait_s.mean)} per step "
            f"({shares['data-loading']:.0%} of the wall time) and delivers {rate:.3g} MB/s; "
            "add loader workers"
            + (f" (this machine has {vcpus} vCPUs)" if vcpus else "")
            + ", prefetch, cache decoded samples or use a faster format "
            "(WebDataset, Parquet, TFRecord)"
        )
    if shares["host-to-device"] > 0.05:
        rate = w.bytes_to_device_per_step / w.h2d_s.mean / 1e9 if w.h2d_s.mean else 0.0
        out.append(
            f"the host-to-device copy takes {_ms(w.h2d_s.mean)} per step "
            f"({w.bytes_to_device_per_step / 1e6:.3g} MB at {rate:.3g} GB/s)"
            + (
                ""
                if w.batches_pinned
                else "; batches are in pageable memory: pin them "
                "(DataLoader(pin_memory=True)) so copies run faster and asynchronously"
            )
        )
    if shares["host-overhead"] > 0.05:
        out.append(
            f"{shares['host-overhead']:.0%} of the wall time is host overhead between "
            "steps (Python, kernel launches): larger batches, torch.compile or CUDA graphs"
        )
    return out


def _compute_reasons(w: WorkloadProfile, caps: Capabilities | None) -> list[str]:
    out = []
    if w.achieved_tflops is not None:
        line = f"the step achieves {w.achieved_tflops:.3g} TFLOP/s"
        measured = caps.matmul_tflops if caps else {}
        same = next((f for p, f in measured.items() if p == w.precision), None)
        if same is not None:
            line += (
                f" ({w.achieved_tflops / same.value:.0%} of the {w.precision} matmul measured here)"
            )
        elif measured:
            best = max(f.value for f in measured.values())
            line += f" ({w.achieved_tflops / best:.0%} of the best matmul measured here)"
        out.append(line)
    out.append(
        "more throughput needs faster compute: mixed precision (bf16), fused kernels "
        "(torch.compile), or a faster / additional tensor-core GPU"
    )
    return out


def classify(
    w: WorkloadProfile, caps: Capabilities | None = None, *, vcpus: int | None = None
) -> Classification:
    """The verdict on ``w``, with human reasons citing the measured figures."""
    busy = busy_fraction(w)
    shares = _stage_shares(w, busy)
    worst = max(shares, key=lambda k: shares[k])
    bound: Bound
    stage: LimitingStage
    if busy >= COMPUTE_BOUND_BUSY:
        bound, stage = "compute-bound", "compute"
    elif busy <= TRANSFER_BOUND_BUSY:
        bound, stage = "transfer-bound", worst
    else:
        bound, stage = "balanced", worst
    reasons = [
        f"the device computed {busy:.0%} of the wall time "
        f"(compute-bound at >= {COMPUTE_BOUND_BUSY:.0%}, transfer-bound at <= "
        f"{TRANSFER_BOUND_BUSY:.0%})"
    ]
    if w.gpu_utilization is not None:
        util = w.gpu_utilization
        reasons.append(
            f"NVML GPU utilisation averaged {util.mean_percent:.0f}% "
            f"over {len(util.samples)} samples"
        )
    if bound == "compute-bound":
        reasons += _compute_reasons(w, caps)
    else:
        reasons += _stage_reasons(w, shares, vcpus)
    return Classification(
        bound=bound,
        limiting_stage=stage,
        gpu_busy_fraction=busy,
        reasons=reasons,
    )
