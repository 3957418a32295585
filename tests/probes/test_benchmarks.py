"""Hardware micro-benchmarks on the CPU with tiny shapes: figures, budgets, fallbacks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from probes import decode, storage
from probes.decode import decode_mbs_per_core
from probes.matmul import matmul_tflops, supported_precisions, sustained_tflops
from probes.memory import memory_bandwidth_gbs
from probes.storage import filesystem_type, storage_read_mbs
from probes.timing import Deadline
from probes.transfer import host_device_bandwidth
from tests.probes.fakeclock import FakeClock

CPU = torch.device("cpu")


def _still(seconds: float) -> Deadline:
    """A deadline on a clock that stands still: each benchmark runs its full repeat count
    (or skips what its own estimate says cannot fit), however busy the machine is."""
    return Deadline.after(seconds, FakeClock())


def test_matmul_reports_the_best_size_against_the_peak() -> None:
    result = matmul_tflops(
        CPU, _still(2), sizes=(32, 64), precisions=["fp32"], peaks={"fp32": 1.0}, sustained=False
    )
    fig = result.figures["fp32"]
    assert fig.value > 0 and fig.unit == "TFLOP/s"
    assert fig.fraction_of_peak == pytest.approx(fig.value / 1.0)
    assert "L2 flushed" in fig.method and "32:" in fig.method
    assert "64:" in fig.method


def test_matmul_skips_sizes_that_cannot_finish_in_time() -> None:
    result = matmul_tflops(CPU, _still(0.3), sizes=(64, 8192), precisions=["fp32"], sustained=False)
    assert "fp32" in result.figures
    assert any("8192" in s and "budget" in s for s in result.skipped)


def test_cpu_precisions_are_fp32_and_bf16() -> None:
    assert supported_precisions(CPU) == ["fp32", "bf16"]


@pytest.mark.parametrize(
    ("capability", "expected"),
    [
        ((7, 5), ["fp32", "fp16"]),
        ((8, 0), ["fp32", "tf32", "bf16", "fp16", "int8"]),
        ((9, 0), ["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]),
    ],
)
def test_gpu_precisions_follow_the_compute_capability(
    monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int], expected: list[str]
) -> None:
    """int8 (torch._int_mm, cuBLASLt's int8 kernels) from Ampere, fp8 from Ada / Hopper."""
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert supported_precisions(torch.device("cuda")) == expected


def test_int8_matmul_counts_two_operations_a_multiply_add() -> None:
    result = matmul_tflops(CPU, _still(2), sizes=(32, 64), precisions=["int8"], sustained=False)
    fig = result.figures["int8"]
    assert fig.value > 0 and fig.unit == "TFLOP/s"
    assert "int8 matmul" in fig.method and "64:" in fig.method


def test_memory_bandwidth_counts_read_and_write() -> None:
    fig = memory_bandwidth_gbs(CPU, _still(1), buffer_bytes=8 << 20, spec_peak=1000.0)
    assert fig is not None and fig.value > 0 and fig.unit == "GB/s"
    assert "read + write" in fig.method
    assert fig.fraction_of_peak == pytest.approx(fig.value / 1000.0)


def test_host_device_copies_are_skipped_on_the_cpu() -> None:
    result = host_device_bandwidth(CPU, _still(1))
    assert result.h2d.pinned is None and result.skipped


def test_storage_read_uses_o_direct_and_cleans_up(tmp_path: Path) -> None:
    fig = storage_read_mbs(tmp_path, _still(2), max_bytes=4 << 20, chunk=1 << 20)
    assert fig is not None and fig.value > 0 and fig.unit == "MB/s"
    assert "4 MiB file" in fig.method
    assert ("O_DIRECT" in fig.method) == hasattr(os, "O_DIRECT")
    assert list(tmp_path.iterdir()) == []


def test_storage_falls_back_to_dropping_the_page_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = storage._reader

    def no_direct(path: Path, chunk: int, direct: bool) -> object:
        if direct:
            raise OSError(22, "Invalid argument")
        return real(path, chunk, direct)

    monkeypatch.setattr(storage, "_reader", no_direct)
    fig = storage_read_mbs(tmp_path, _still(2), max_bytes=2 << 20, chunk=1 << 20)
    assert fig is not None and "posix_fadvise(DONTNEED)" in fig.method


def test_filesystem_type_picks_the_longest_mount(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/vda / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n")
    assert filesystem_type(Path("/dev/shm/x"), mounts) == "tmpfs"
    assert filesystem_type(Path("/home"), mounts) == "ext4"
    assert filesystem_type(Path("/"), tmp_path / "absent") is None


# A budget no busy machine exhausts: each codec stops at its repeat cap long before it, so
# the test takes the same time as with a tight one on a quiet machine.
DECODE_BUDGET_S = 30.0


def test_decode_measures_each_codec_per_core() -> None:
    figures, skipped = decode_mbs_per_core(_still(1.5))
    assert set(figures) == {"jpeg", "zlib", "image-normalize"} and not skipped
    assert all(f.value > 0 and "one core" in f.method for f in figures.values())


def test_decode_names_a_missing_codec_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pillow(rng: object) -> object:
        raise ImportError("No module named 'PIL'", name="PIL")

    monkeypatch.setitem(decode.CODECS, "jpeg", no_pillow)
    figures, skipped = decode_mbs_per_core(_still(0.5), codecs=("jpeg", "zlib"))
    assert "zlib" in figures and skipped == ["decode jpeg: PIL is not installed"]


def test_matmul_holds_one_precision_back_to_back_for_the_sustained_figure() -> None:
    result = matmul_tflops(CPU, Deadline.after(2.5), sizes=(32, 64), precisions=["fp32"])
    held = result.sustained["fp32"]
    assert held.value > 0 and held.unit == "TFLOP/s" and held.repeats >= 10
    assert held.min is not None and held.max is not None and held.min <= held.max
    assert "back to back" in held.method and "of the burst figure" in held.method


def test_a_chip_that_slows_under_load_shows_it_in_its_windows() -> None:
    """Each call takes a little longer than the one before (a clock coming down under a power
    limit): the slowest tenth is the last, and the whole run sits below the first tenth."""
    clock = FakeClock()
    durations = iter(0.01 * (1 + 0.002 * i) for i in range(100_000))

    def call() -> None:
        clock.advance(next(durations))

    held = sustained_tflops(call, 1e12, CPU, Deadline.after(2.0, clock), per_call_s=0.01)
    assert held is not None and held.min is not None and held.max is not None
    assert held.repeats < 200  # planned 2 s / 10 ms; the slowing calls met the deadline first
    assert held.max == pytest.approx(1 / 0.0102, rel=0.02)  # the first tenth's calls
    assert held.min < 0.8 * held.max  # the last, slowest
    assert held.min < held.value < held.max


def test_no_sustained_figure_in_too_short_a_budget() -> None:
    result = matmul_tflops(CPU, _still(0.9), sizes=(32,), precisions=["fp32"])
    assert "fp32" in result.figures and result.sustained == {}
    assert any("sustained" in s for s in result.skipped)


def test_a_failed_sustained_run_keeps_the_burst_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    from probes import matmul

    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise RuntimeError("CUDA out of memory. Tried to allocate 384.00 MiB\nmore detail")

    monkeypatch.setattr(matmul, "sustained_tflops", out_of_memory)
    result = matmul_tflops(CPU, Deadline.after(2.5), sizes=(32,), precisions=["fp32"])
    assert "fp32" in result.figures and result.sustained == {}
    assert "matmul sustained: failed (CUDA out of memory. Tried to allocate 384.00 MiB)" in (
        result.skipped
    )
