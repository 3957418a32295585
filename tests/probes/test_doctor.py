"""The doctor's findings: missing driver, CPU-only torch, missing CUDA runtime, unused GPU,
CUDA out of memory (caught, with remedies) and a slow host link."""

from __future__ import annotations

import shutil

import pytest
import torch

from probes import doctor, runner
from probes.doctor import (
    environment_checks,
    gpu_unused,
    host_link_check,
    oom_diagnosis,
    throttle_check,
)
from probes.profiler import StepTimes, WorkloadRun
from probes.runner import DeviceUnavailableError, ProbeOptions, run_probe
from recommender.profile import Capabilities, CopyBandwidth, Figure, Utilization
from tests.probes.test_profiler import _synthetic

SAMPLES = "tests.probes.sample_workloads"


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A machine whose driver tools, device nodes and CUDA state each test sets."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(doctor, "_device_nodes", lambda: False)
    return monkeypatch


def _gpu_host(m: pytest.MonkeyPatch) -> None:
    real = shutil.which
    m.setattr(shutil, "which", lambda n: "/usr/bin/nvidia-smi" if n == "nvidia-smi" else real(n))
    m.setattr(doctor, "_device_nodes", lambda: True)


def _codes(requested: str) -> dict[str, str]:
    return {d.code: d.severity for d in environment_checks(requested)}


def test_no_driver_is_an_error_only_when_cuda_is_asked_for(machine: pytest.MonkeyPatch) -> None:
    machine.setattr(shutil, "which", lambda name: None)
    assert _codes("cuda") == {"no-nvidia-driver": "error"}
    assert _codes("auto") == {"no-gpu": "info"}
    assert _codes("cpu") == {"no-gpu": "info"}


def test_cpu_only_torch_on_a_gpu_machine(machine: pytest.MonkeyPatch) -> None:
    _gpu_host(machine)
    machine.setattr(torch.version, "cuda", None)
    found = environment_checks("cuda")
    assert [(d.code, d.severity) for d in found] == [("cpu-only-torch", "error")]
    assert any("download.pytorch.org/whl/cu" in r for r in found[0].remedies)
    assert _codes("auto") == {"cpu-only-torch": "warning"}


def test_a_missing_cuda_runtime(machine: pytest.MonkeyPatch) -> None:
    _gpu_host(machine)
    machine.setattr(torch.version, "cuda", "12.4")

    def no_cudart() -> str:
        raise OSError("libcudart.so.12: cannot open shared object file: No such file")

    machine.setattr(doctor, "load_cudart", no_cudart)
    (found,) = environment_checks("cuda")
    assert found.code == "cuda-runtime-missing" and found.severity == "error"
    assert "CUDA 12.4 runtime (libcudart)" in found.message and "cannot open" in found.message
    assert any("--force-reinstall torch" in r for r in found.remedies)


def test_cuda_that_will_not_initialise_reports_torch_s_reason(
    machine: pytest.MonkeyPatch,
) -> None:
    _gpu_host(machine)
    machine.setattr(torch.version, "cuda", "12.4")
    machine.setattr(doctor, "load_cudart", lambda: "libcudart.so.12")
    (found,) = environment_checks("cuda")
    assert found.code == "cuda-unavailable" and "cannot use the GPU: " in found.message
    assert any("driver" in r for r in found.remedies)


def test_hidden_gpus(machine: pytest.MonkeyPatch) -> None:
    _gpu_host(machine)
    machine.setenv("CUDA_VISIBLE_DEVICES", "")
    assert _codes("cuda") == {"gpus-hidden": "error"}


def test_device_nodes_without_nvidia_smi(machine: pytest.MonkeyPatch) -> None:
    machine.setattr(shutil, "which", lambda name: None)
    machine.setattr(doctor, "_device_nodes", lambda: True)
    machine.setattr(torch.version, "cuda", None)
    assert _codes("auto") == {"nvidia-smi-missing": "warning", "cpu-only-torch": "warning"}


def test_device_cuda_without_cuda_stops_the_probe(machine: pytest.MonkeyPatch) -> None:
    machine.setattr(shutil, "which", lambda name: None)
    with pytest.raises(DeviceUnavailableError) as info:
        run_probe(ProbeOptions(device="cuda", seconds=2))
    assert [d.code for d in info.value.diagnoses] == ["no-nvidia-driver"]


def test_cuda_oom_in_a_step_becomes_a_diagnosis_not_a_crash() -> None:
    profile = run_probe(
        ProbeOptions(device="cpu", workload=f"{SAMPLES}:oom_step", seconds=3, phases=("workload",))
    )
    (oom,) = [d for d in profile.diagnoses if d.code == "cuda-oom"]
    assert oom.severity == "error" and "Tried to allocate 20.00 GiB" in oom.message
    assert any("halve the batch (16 -> 8)" in r for r in oom.remedies)
    assert any("accumulate gradients" in r for r in oom.remedies)
    assert any("bfloat16" in r for r in oom.remedies)
    assert profile.workload is None and profile.classification is None
    assert profile.has_errors()


def test_a_failing_workload_is_reported() -> None:
    profile = run_probe(
        ProbeOptions(
            device="cpu", workload=f"{SAMPLES}:broken_step", seconds=3, phases=("workload",)
        )
    )
    (failed,) = profile.diagnoses[-1:]
    assert failed.code == "workload-failed" and "ValueError: shapes" in failed.message


def test_oom_remedies_name_bigger_gpus() -> None:
    d = oom_diagnosis(RuntimeError("x"), where="w", batch_size=1, bigger=["H200-SXM-141GB"])
    assert d.remedies[0].startswith("use a smaller batch")
    assert d.remedies[-1] == "a GPU with more memory: H200-SXM-141GB"


def _run(util: list[float] | None, touched: bool) -> WorkloadRun:
    w = _synthetic(compute=0.01, data=0.0, h2d=0.0)
    if util is not None:
        u = Utilization(mean_percent=sum(util) / len(util), samples=util, interval_s=0.1)
        w = w.model_copy(update={"gpu_utilization": u})
    return WorkloadRun(w, StepTimes(), device_memory_touched=touched)


def test_gpu_unused_from_nvml_or_from_memory() -> None:
    assert [d.code for d in gpu_unused(_run([0.0, 0.0, 1.0], touched=True))] == ["gpu-unused"]
    assert gpu_unused(_run([50.0, 60.0, 70.0], touched=True)) == []
    (d,) = gpu_unused(_run(None, touched=False))
    assert "no device memory" in d.message and any("model.to(device)" in r for r in d.remedies)
    assert gpu_unused(_run(None, touched=True)) == []


def test_slow_host_link() -> None:
    caps = Capabilities(h2d_gbs=CopyBandwidth(pinned=Figure(value=10.0, unit="GB/s", repeats=3)))
    (d,) = host_link_check(caps, 64.0, "gen 3 x16 of max gen 5 x16")
    assert d.code == "slow-host-link" and "16%" in d.message and "gen 3" in d.message
    assert host_link_check(caps, 16.0, None) == []


def test_a_failing_benchmark_costs_only_its_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner, "storage_read_mbs", full_disk)
    profile = run_probe(ProbeOptions(device="cpu", seconds=3, phases=("storage", "decode")))
    assert profile.capabilities.storage_read_mbs is None
    assert "storage: failed (OSError: [Errno 28] No space left on device)" in (
        profile.capabilities.skipped
    )
    (d,) = [d for d in profile.diagnoses if d.code == "benchmark-failed"]
    assert any("--scratch-dir" in r for r in d.remedies)
    assert profile.capabilities.decode_mbs_per_core  # the next phase still ran


def test_a_matmul_rate_the_chip_does_not_hold_is_a_warning() -> None:
    def fig(value: float, low: float | None = None) -> Figure:
        return Figure(value=value, unit="TFLOP/s", repeats=10, min=low)

    caps = Capabilities(
        matmul_tflops={"bf16": fig(800.0)},
        matmul_sustained_tflops={"bf16": fig(640.0, 600.0)},
    )
    (d,) = throttle_check(caps)
    assert d.code == "matmul-throttles" and d.severity == "warning"
    assert "80%" in d.message and "slowest tenth 600" in d.message
    assert any("nvidia-smi" in r for r in d.remedies)
    held = caps.model_copy(update={"matmul_sustained_tflops": {"bf16": fig(760.0)}})
    assert throttle_check(held) == []


def test_a_cpus_sustained_rate_is_reported_but_not_diagnosed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shared VM's CPU cores swing with other tenants' load: the profile keeps the figure,
    the doctor says nothing of it (it checks GPUs only)."""
    from probes.matmul import MatmulResult

    def halved(*args: object, **kwargs: object) -> MatmulResult:
        burst = Figure(value=0.06, unit="TFLOP/s", repeats=30)
        return MatmulResult(figures={"fp32": burst}, sustained={"fp32": burst.model_copy(
            update={"value": 0.03})})  # fmt: skip

    monkeypatch.setattr(runner, "matmul_tflops", halved)
    profile = run_probe(ProbeOptions(device="cpu", seconds=2, phases=("matmul",)))
    assert profile.capabilities.matmul_sustained_tflops["fp32"].value == 0.03
    assert not [d for d in profile.diagnoses if d.code == "matmul-throttles"]
