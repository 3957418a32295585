"""Dense matmul throughput (TFLOP/s) per precision, the best of a short square-shape sweep.

The method of mamf-finder and triton's ``do_bench``: warm up, flush the L2 cache before
every timed call (so operands come from device memory, as in a real model), time each call
on the device clock, keep the median, and report the best shape. fp8 uses
``torch._scaled_mm`` where the GPU has fp8 tensor cores (compute capability 8.9+), int8
``torch._int_mm`` (cuBLASLt's int8 kernels, int32 out: the rate an int8 engine's GEMMs start
from) on Ampere and newer (8.0+), in tera-operations per second like the datasheets' INT8 TOPS.

Those are burst figures: a few dozen calls, as mamf-finder times them. A chip held at full
load lowers its clock to stay within its power and temperature limits (a GB200 sustains 0.80
of its mamf-finder fp8 rate after Azure's 10,000 warm-up calls: recommender/scoring/
achievable.yaml), so the best shape of the first of bf16 / fp16 / tf32 / fp32 measured (fp32
first on a CPU) is then run back to back for the rest of the phase (``SUSTAINED_SHARE`` of
it, at least ``SUSTAINED_MIN_S``): the sustained figure, its rate per window of calls from
the first to the last, and on a GPU a diagnosis where it falls below the burst.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import torch

from probes.spec import Precision
from probes.timing import Deadline, measure, sync
from recommender.profile import Figure

__all__ = [
    "CPU_SIZES",
    "GPU_SIZES",
    "MATMUL_PRECISIONS",
    "SUSTAINED_MIN_S",
    "SUSTAINED_SHARE",
    "MatmulResult",
    "matmul_tflops",
    "supported_precisions",
    "sustained_tflops",
]

GPU_SIZES = (2048, 4096, 8192)
CPU_SIZES = (256, 512, 1024)

MATMUL_PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")
# The sustained run: the first of these with a burst figure (a CPU's is fp32: it has no
# 16-bit matrix units), for this share of the phase.
SUSTAINED_ORDER: tuple[Precision, ...] = ("bf16", "fp16", "tf32", "fp32")
SUSTAINED_ORDER_CPU: tuple[Precision, ...] = ("fp32", "bf16")
SUSTAINED_SHARE = 0.3
SUSTAINED_MIN_S = 1.0  # shorter, a chip's clock has not moved yet: not worth a figure
SUSTAINED_WINDOWS = 10  # rates reported per tenth of the run (min / max)
SUSTAINED_MAX_CALLS = 10_000  # tiny shapes (a CPU's) would otherwise plan millions
MIN_WINDOW_S = 1e-9  # a clock that did not move (tests) still gives a finite rate
_DTYPES: dict[Precision, torch.dtype] = {
    "fp32": torch.float32,
    "tf32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
}


@dataclass
class MatmulResult:
    figures: dict[Precision, Figure] = field(default_factory=dict)
    sustained: dict[Precision, Figure] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def supported_precisions(device: torch.device) -> list[Precision]:
    """Precisions worth timing on ``device`` (the CPU has no tf32, fp16, fp8 or int8 units
    the engine predicts with)."""
    if device.type != "cuda":
        return ["fp32", "bf16"]
    major, minor = torch.cuda.get_device_capability(device)
    out: list[Precision] = ["fp32"]
    if major >= 8:
        out += ["tf32", "bf16"]
    out.append("fp16")
    if (major, minor) >= (8, 9) and hasattr(torch, "float8_e4m3fn"):
        out.append("fp8")
    if major >= 8 and hasattr(torch, "_int_mm"):
        out.append("int8")
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
    if precision == "int8":
        # both row-major, as torchao's int8 layers hand them to it (torchao/kernel/intmm.py,
        # ``safe_int_mm`` makes ``mat2`` contiguous first)
        x8 = torch.randint(-128, 128, (n, n), device=device, dtype=torch.int8)
        y8 = torch.randint(-128, 128, (n, n), device=device, dtype=torch.int8)

        def int8() -> object:
            return torch._int_mm(x8, y8)

        return int8
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


def sustained_tflops(
    call: Callable[[], object],
    flops: float,
    device: torch.device,
    deadline: Deadline,
    per_call_s: float,
) -> Figure | None:
    """TFLOP/s of ``call`` (``flops`` each, about ``per_call_s`` seconds in a burst) run back
    to back until ``deadline``: the overall rate, with the lowest and highest of its windows
    (tenths of the calls planned, each ended by a device sync); None when less than
    ``SUSTAINED_MIN_S`` is left."""
    seconds = deadline.remaining()
    if seconds < SUSTAINED_MIN_S:
        return None
    planned = min(SUSTAINED_MAX_CALLS, max(SUSTAINED_WINDOWS, int(seconds / per_call_s)))
    per_window = -(-planned // SUSTAINED_WINDOWS)
    call()
    sync(device)
    rates: list[float] = []
    calls, start = 0, deadline.clock()
    while calls < planned and not deadline.expired():
        opened, n = deadline.clock(), 0
        while n < per_window and not deadline.expired():
            call()
            n += 1
            if n % 4 == 0:  # keep the device queue short: the window ends when its work does
                sync(device)
        sync(device)
        rates.append(n * flops / 1e12 / max(deadline.clock() - opened, MIN_WINDOW_S))
        calls += n
    elapsed = max(deadline.clock() - start, MIN_WINDOW_S)
    return Figure(
        value=calls * flops / 1e12 / elapsed,
        unit="TFLOP/s",
        repeats=calls,
        min=min(rates),
        max=max(rates),
        method=f"back to back for {elapsed:.1f} s ({calls} calls, {len(rates)} windows)",
    )


def _sustain(
    result: MatmulResult,
    device: torch.device,
    deadline: Deadline,
    best: dict[Precision, int],
    peaks: Mapping[Precision, float | None],
) -> None:
    """The sustained run of the first precision of the device's order (``SUSTAINED_ORDER``,
    ``SUSTAINED_ORDER_CPU``) with a burst figure, at its best size (``best``), into
    ``result``."""
    order = SUSTAINED_ORDER if device.type == "cuda" else SUSTAINED_ORDER_CPU
    precision = next((p for p in order if p in result.figures), None)
    if precision is None:
        return
    n, burst = best[precision], result.figures[precision].value
    flops = 2.0 * n**3
    with _fp32_mode(precision):
        figure = sustained_tflops(
            _matmul_call(precision, n, device), flops, device, deadline, flops / (burst * 1e12)
        )
    if figure is None:
        result.skipped.append(f"matmul {precision} sustained: under {SUSTAINED_MIN_S:g} s left")
        return
    result.sustained[precision] = _against_peak(
        figure,
        peaks.get(precision),
        f"{n}^3 {precision} matmul {figure.method}; {figure.value / burst:.0%} of the burst figure",
    )


def _against_peak(figure: Figure, peak: float | None, method: str) -> Figure:
    """``figure`` beside the spec sheet's ``peak`` (where known), described by ``method``."""
    return figure.model_copy(
        update={
            "spec_peak": peak,
            "fraction_of_peak": figure.value / peak if peak else None,
            "method": method,
        }
    )


def matmul_tflops(
    device: torch.device,
    deadline: Deadline,
    *,
    peaks: Mapping[Precision, float | None] | None = None,
    sizes: Sequence[int] | None = None,
    precisions: Sequence[Precision] | None = None,
    sustained: bool = True,
) -> MatmulResult:
    """Best-shape TFLOP/s for each supported precision, sharing the time up to ``deadline``,
    then (``sustained``) one of them run back to back for the time set aside for it."""
    sizes = sizes or (GPU_SIZES if device.type == "cuda" else CPU_SIZES)
    todo = list(precisions or supported_precisions(device))
    result = MatmulResult()
    flush = l2_flusher(device)
    timer = "CUDA events" if device.type == "cuda" else "perf_counter"
    burst_end = deadline.fraction(1.0 - SUSTAINED_SHARE) if sustained else deadline
    best_sizes: dict[Precision, int] = {}
    for i, precision in enumerate(todo):
        share = burst_end.fraction(1.0 / (len(todo) - i))
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
        best_sizes[precision] = best_n
        best = per_size[best_n]
        sweep = ", ".join(f"{n}: {f.value:.3g}" for n, f in per_size.items())
        result.figures[precision] = _against_peak(
            best,
            (peaks or {}).get(precision),
            f"{best_n}^3 {precision} matmul, best of square sizes ({sweep} TFLOP/s); "
            f"L2 flushed before each call; {timer}; median of {best.repeats}",
        )
    if sustained:
        try:
            _sustain(result, device, deadline, best_sizes, peaks or {})
        except RuntimeError as exc:  # out of memory among them: the burst figures stand
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            result.skipped.append(f"matmul sustained: failed ({first})")
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return result
