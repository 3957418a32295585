"""Dense matmul throughput (TFLOP/s) per precision, the best of a short square-shape sweep.

The method of mamf-finder and triton's ``do_bench``: warm up, flush the L2 cache before
every timed call (so operands come from device memory, as in a real model), time each call
on the device clock, keep the median, and report the best shape. fp8 uses
``torch._scaled_mm`` where the GPU has fp8 tensor cores (compute capability 8.9+).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import torch

from probes.spec import Precision
from probes.timing import Deadline, measure
from recommender.profile import Figure

__all__ = [
    "CPU_SIZES",
    "GPU_SIZES",
    "MATMUL_PRECISIONS",
    "MatmulResult",
    "matmul_tflops",
    "supported_precisions",
]

GPU_SIZES = (2048, 4096, 8192)
CPU_SIZES = (256, 512, 1024)

MATMUL_PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8")
_DTYPES: dict[Precision, torch.dtype] = {
    "fp32": torch.float32,
    "tf32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
}


@dataclass
class MatmulResult:
    figures: dict[Precision, Figure] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def supported_precisions(device: torch.device) -> list[Precision]:
    """Precisions worth timing on ``device`` (the CPU has no tf32, fp16 or fp8 units)."""
    if device.type != "cuda":
        return ["fp32", "bf16"]
    major, minor = torch.cuda.get_device_capability(device)
    out: list[Precision] = ["fp32"]
    if major >= 8:
        out += ["tf32", "bf16"]
    out.append("fp16")
    if (major, minor) >= (8, 9) and hasattr(torch, "float8_e4m3fn"):
        out.append("fp8")
    return out


@contextlib.contextmanager
def _fp32_mode(precision: Precision) -> Iterator[None]:
    """fp32 means IEEE fp32; tf32 lets fp32 matmuls use the tensor cores."""
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(old)


def _matmul_call(precision: Precision, n: int, device: torch.device) -> Callable[[], object]:
    if precision == "fp8":
        a = torch.randn(n, n, device=device).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=device).to(torch.float8_e4m3fn).t()  # column-major
        scale = torch.ones((), device=device)

        def fp8() -> object:
            return torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)

        return fp8
    dtype = _DTYPES[precision]
    x = torch.randn(n, n, device=device, dtype=dtype)
    y = torch.randn(n, n, device=device, dtype=dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    return lambda: torch.mm(x, y, out=out)


def l2_flusher(device: torch.device) -> Callable[[], object]:
    """A call that overwrites a buffer twice the size of the last-level cache."""
    if device.type == "cuda":
        l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0))
        size = max(2 * l2, 256 << 20)
    else:
        size = 32 << 20
    buf = torch.empty(size, dtype=torch.int8, device=device)
    return buf.zero_


def _sweep(
    precision: Precision,
    sizes: Sequence[int],
    device: torch.device,
    deadline: Deadline,
    flush: Callable[[], object],
) -> tuple[dict[int, Figure], str | None]:
    """Median TFLOP/s per size, stopping before a size that cannot finish in time."""
    per_size: dict[int, Figure] = {}
    last: tuple[int, float] | None = None
    for n in sizes:
        if last is not None:
            # A matmul's time grows as n^3 once the device is saturated: estimate 3 calls.
            prev_n, prev_s = last
            if prev_s * (n / prev_n) ** 3 * 3 > deadline.remaining():
                return per_size, f"sizes from {n} skipped: over the time budget"
        try:
            call = _matmul_call(precision, n, device)
            samples = measure(call, device, deadline, warmup=2, max_repeats=30, before=flush)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            return per_size, f"size {n} does not fit in device memory"
        if not samples:
            return per_size, f"size {n}: over the time budget"
        per_size[n] = samples.figure(2.0 * n**3 / 1e12, unit="TFLOP/s", method="")
        last = (n, samples.median)
    return per_size, None


def matmul_tflops(
    device: torch.device,
    deadline: Deadline,
    *,
    peaks: Mapping[Precision, float | None] | None = None,
    sizes: Sequence[int] | None = None,
    precisions: Sequence[Precision] | None = None,
) -> MatmulResult:
    """Best-shape TFLOP/s for each supported precision, sharing the time up to ``deadline``."""
    sizes = sizes or (GPU_SIZES if device.type == "cuda" else CPU_SIZES)
    todo = list(precisions or supported_precisions(device))
    result = MatmulResult()
    flush = l2_flusher(device)
    timer = "CUDA events" if device.type == "cuda" else "perf_counter"
    for i, precision in enumerate(todo):
        share = deadline.fraction(1.0 / (len(todo) - i))
        try:
            with _fp32_mode(precision):
                per_size, note = _sweep(precision, sizes, device, share, flush)
        except (RuntimeError, TypeError) as exc:  # an op the build or the device lacks
            result.skipped.append(f"matmul {precision}: unsupported here ({exc})".split("\n")[0])
            continue
        if note:
            result.skipped.append(f"matmul {precision}: {note}")
        if not per_size:
            continue
        best_n = max(per_size, key=lambda n: per_size[n].value)
        best = per_size[best_n]
        sweep = ", ".join(f"{n}: {f.value:.3g}" for n, f in per_size.items())
        peak = (peaks or {}).get(precision)
        result.figures[precision] = best.model_copy(
            update={
                "spec_peak": peak,
                "fraction_of_peak": best.value / peak if peak else None,
                "method": f"{best_n}^3 {precision} matmul, best of square sizes ({sweep} "
                f"TFLOP/s); L2 flushed before each call; {timer}; median of {best.repeats}",
            }
        )
    return result
