"""The doctor: find the classic GPU setup failures and say what to do about each.

Environment checks (before anything runs): no NVIDIA driver / ``nvidia-smi`` missing, a
CPU-only torch build on a GPU machine, the CUDA runtime (``libcudart``) not loadable, torch
unable to initialise CUDA, NVML missing. Run checks (after the workload ran): the GPU
present but unused by the workload, CUDA out of memory (caught, with remedies), a
workload that raised, a host link far below its spec, a matmul rate the chip does not hold
under sustained load. Every finding is a
:class:`~recommender.profile.Diagnosis` with a stable ``code``.
"""

from __future__ import annotations

import ctypes
import glob
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from probes.nvml import nvml
from probes.profiler import WorkloadRun
from recommender.profile import Capabilities, Diagnosis, Severity

__all__ = [
    "environment_checks",
    "gpu_unused",
    "host_link_check",
    "load_cudart",
    "oom_diagnosis",
    "throttle_check",
    "workload_failed",
]

CONTAINER_HINT = (
    "or run the probe container, which brings a matching torch + CUDA: "
    "docker run --gpus all instance-recommender-probe"
)


def _device_nodes() -> bool:
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def _nvml_works() -> bool:
    lib = nvml()
    if lib is None:
        return False
    lib.nvmlShutdown()
    return True


def load_cudart() -> str:
    """Load the CUDA runtime torch was built against; return its path or raise OSError."""
    major = (torch.version.cuda or "").split(".")[0]
    names = [f"libcudart.so.{major}", "libcudart.so"] if major else ["libcudart.so"]
    for base in map(Path, sys.path):
        names += glob.glob(str(base / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so*"))
    names += glob.glob(str(Path(torch.__file__).parent / "lib" / "libcudart*.so*"))
    errors = []
    for name in names:
        try:
            ctypes.CDLL(name)
        except OSError as exc:
            errors.append(str(exc))
            continue
        return name
    raise OSError("; ".join(errors[:2]) or "no libcudart found")


def _cuda_init_error() -> str:
    try:
        torch.cuda.init()  # type: ignore[no-untyped-call]
    except Exception as exc:
        return str(exc).strip().splitlines()[0]
    return "torch.cuda.is_available() is False"


def _no_driver(requested: str) -> list[Diagnosis]:
    if requested != "cuda":
        return [
            Diagnosis(code="no-gpu", severity="info", message="no GPU found; measuring the CPU")
        ]
    return [
        Diagnosis(
            code="no-nvidia-driver",
            severity="error",
            message="--device cuda, but there is no NVIDIA driver: nvidia-smi is not on PATH "
            "and there is no /dev/nvidia* device",
            remedies=[
                "check the VM has a GPU: lspci | grep -i nvidia",
                "install the NVIDIA driver (e.g. sudo apt install nvidia-driver-550-server) or "
                "start from a GPU image (AWS Deep Learning AMI, GCP Deep Learning VM)",
                "in a container, install the NVIDIA Container Toolkit and pass --gpus all",
            ],
        )
    ]


def _broken_cuda(severity: Severity) -> Diagnosis:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1", "none", "NoDevFiles"):
        return Diagnosis(
            code="gpus-hidden",
            severity=severity,
            message=f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from CUDA",
            remedies=["unset CUDA_VISIBLE_DEVICES, or list the GPUs to use (e.g. 0,1)"],
        )
    if torch.version.cuda is None:
        return Diagnosis(
            code="cpu-only-torch",
            severity=severity,
            message=f"torch {torch.__version__} is a CPU-only build, but this machine has an "
            "NVIDIA GPU: nothing will run on it",
            remedies=[
                "install a CUDA build matching the driver's CUDA version (nvidia-smi shows it): "
                "pip install torch --index-url https://download.pytorch.org/whl/cu124",
                CONTAINER_HINT,
            ],
        )
    try:
        load_cudart()
    except OSError as exc:
        return Diagnosis(
            code="cuda-runtime-missing",
            severity=severity,
            message=f"the CUDA {torch.version.cuda} runtime (libcudart) torch needs cannot be "
            f"loaded: {exc}",
            remedies=[
                "reinstall torch so pip brings its CUDA libraries: "
                "pip install --force-reinstall torch",
                "or put the CUDA toolkit's lib64 on LD_LIBRARY_PATH",
                CONTAINER_HINT,
            ],
        )
    return Diagnosis(
        code="cuda-unavailable",
        severity=severity,
        message=f"torch {torch.__version__} (CUDA {torch.version.cuda}) cannot use the GPU: "
        f"{_cuda_init_error()}",
        remedies=[
            "a driver older than torch's CUDA runtime is the usual cause: compare the CUDA "
            "version nvidia-smi prints with torch.version.cuda, then upgrade the driver or "
            "install a torch built for an older CUDA",
            "check CUDA_VISIBLE_DEVICES names GPUs that exist",
            "in a container, pass --gpus all",
        ],
    )


def environment_checks(requested: str) -> list[Diagnosis]:
    """Findings about the driver / torch / CUDA set-up for ``--device`` ``requested``."""
    has_smi = shutil.which("nvidia-smi") is not None
    nodes = _device_nodes()
    out: list[Diagnosis] = []
    if nodes and not has_smi:
        out.append(
            Diagnosis(
                code="nvidia-smi-missing",
                severity="warning",
                message="/dev/nvidia* exists but nvidia-smi is not on PATH: the driver's "
                "user-space tools are missing",
                remedies=[
                    "install the driver utilities (nvidia-utils)",
                    "in a container: --gpus all with NVIDIA_DRIVER_CAPABILITIES=compute,utility",
                ],
            )
        )
    if torch.cuda.is_available():
        if requested == "cpu":
            out.append(
                Diagnosis(
                    code="gpu-present-not-used",
                    severity="info",
                    message=f"{torch.cuda.device_count()} GPU(s) present; --device cpu "
                    "measures the CPU only",
                    remedies=["drop --device cpu (or pass --device cuda) to measure the GPU"],
                )
            )
        elif not _nvml_works():
            out.append(
                Diagnosis(
                    code="nvml-unavailable",
                    severity="warning",
                    message="NVML cannot be loaded: GPU utilisation and device facts are "
                    "not sampled",
                    remedies=["pip install nvidia-ml-py (the driver provides libnvidia-ml.so)"],
                )
            )
        return out
    if not (has_smi or nodes):
        return out + _no_driver(requested)
    if requested != "cpu":
        out.append(_broken_cuda("error" if requested == "cuda" else "warning"))
    return out


def oom_diagnosis(
    exc: BaseException,
    *,
    where: str,
    batch_size: int | None = None,
    memory_bytes: int | None = None,
    bigger: Sequence[str] = (),
) -> Diagnosis:
    """CUDA ran out of memory during ``where``: the error and what makes the job fit."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    on = f" of {memory_bytes / 2**30:.0f} GiB" if memory_bytes else ""
    halve = (
        f"halve the batch ({batch_size} -> {max(1, batch_size // 2)})"
        if batch_size and batch_size > 1
        else "use a smaller batch"
    )
    remedies = [
        f"{halve} and accumulate gradients over 2 steps to keep the effective batch",
        "mixed precision: torch.autocast(device_type='cuda', dtype=torch.bfloat16)",
        "activation checkpointing (torch.utils.checkpoint) trades compute for memory",
        "shard the model over several GPUs (FSDP)",
        "a GPU with more memory" + (f": {', '.join(bigger)}" if bigger else ""),
    ]
    return Diagnosis(
        code="cuda-oom",
        severity="error",
        message=f"CUDA out of memory{on} during {where}: {first}",
        remedies=remedies,
    )


def workload_failed(exc: BaseException, spec: str) -> Diagnosis:
    module, _, func = spec.rpartition(":")
    return Diagnosis(
        code="workload-failed",
        severity="error",
        message=f"the workload {spec} raised {type(exc).__name__}: {exc}".splitlines()[0],
        remedies=[
            "reproduce it alone: batches, step = "
            f"{func or 'function'}(torch.device(...)); step(next(iter(batches)))"
            + (f" (from {module})" if module and module != "reference" else ""),
            "step(batch) receives the batch already on the device: do not move it again",
        ],
    )


def gpu_unused(run: WorkloadRun) -> list[Diagnosis]:
    """The GPU idled while the workload ran: NVML ~0 %, or no device memory beyond batches."""
    util = run.profile.gpu_utilization
    if util is not None and len(util.samples) >= 3:
        if util.mean_percent >= 5.0:
            return []
        evidence = f"NVML utilisation averaged {util.mean_percent:.1f}% while it ran"
    elif run.device_memory_touched:
        return []
    else:
        evidence = "it allocated no device memory beyond copies of its batches"
    return [
        Diagnosis(
            code="gpu-unused",
            severity="warning",
            message=f"the GPU is present but the workload does not use it: {evidence}",
            remedies=[
                "move the model to the device inside the workload function: model.to(device)",
                "compute on the batch step() receives (already on the device), not a CPU copy",
                "look for .cpu() / .numpy() / .item() calls that move work back to the host",
            ],
        )
    ]


# Sustained matmul below this share of the burst figure is worth telling: the chip lowers its
# clock under load (a GB200 holds 0.80 of its burst fp8 rate: probes/matmul.py).
THROTTLE_SHARE = 0.85


def throttle_check(caps: Capabilities) -> list[Diagnosis]:
    """A sustained matmul rate well below the burst one of the same precision (the runner
    asks it of GPUs only: a CPU's cores swing with whatever else runs on them, as on a 2-vCPU
    VM whose windows went from 0.023 to 0.139 TFLOP/s around a 0.061 fp32 burst while another
    job shared it)."""
    out = []
    for precision, held in caps.matmul_sustained_tflops.items():
        burst = caps.matmul_tflops.get(precision)
        if burst is None or held.value >= THROTTLE_SHARE * burst.value:
            continue
        slowest = f", its slowest tenth {held.min:.4g}" if held.min is not None else ""
        out.append(
            Diagnosis(
                code="matmul-throttles",
                severity="warning",
                message=f"{precision} matmuls run at {burst.value:.4g} TFLOP/s in bursts but "
                f"{held.value:.4g} back to back ({held.value / burst.value:.0%}{slowest}): "
                "the chip lowers its clock under sustained load (power or temperature limit), "
                "so a long job runs nearer the sustained rate",
                remedies=[
                    "watch clocks and their throttle reasons under load: nvidia-smi -q -d "
                    "PERFORMANCE,POWER,TEMPERATURE",
                    "check the power limit against the board's default: nvidia-smi -q -d POWER",
                ],
            )
        )
    return out


def host_link_check(
    caps: Capabilities, gbs_spec: float | None, pcie: str | None
) -> list[Diagnosis]:
    """Pinned host-to-device bandwidth below half of the link's spec."""
    fig = caps.h2d_gbs.pinned if caps.h2d_gbs else None
    if fig is None or not gbs_spec or fig.value >= 0.5 * gbs_spec:
        return []
    return [
        Diagnosis(
            code="slow-host-link",
            severity="warning",
            message=f"pinned host-to-device copies reach {fig.value:.1f} GB/s, "
            f"{fig.value / gbs_spec:.0%} of the {gbs_spec:g} GB/s the link should carry"
            + (f" (NVML: PCIe {pcie})" if pcie else ""),
            remedies=[
                "check the GPU's PCIe link: nvidia-smi -q | grep -A3 'Link'",
                "on a multi-socket host, pin the probe to the GPU's NUMA node: "
                "numactl --cpunodebind=N --membind=N",
            ],
        )
    ]
