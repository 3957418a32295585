"""Run the whole probe within its time budget and assemble the profile.

Order: environment checks and device choice, machine facts, then the phases in order of
value: the workload (what the scoring engine calibrates with), matmul, device memory,
host<->device copies, peer copies, storage, decode. Each phase gets a weighted share of
the time still left (so time a phase leaves unused flows to the next), a reserve is kept
for writing the report, and a CUDA out-of-memory error in any phase becomes a diagnosis,
never a crash.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from probes import doctor
from probes.classify import classify
from probes.decode import decode_mbs_per_core
from probes.device import machine_facts
from probes.matmul import MATMUL_PRECISIONS, matmul_tflops
from probes.memory import memory_bandwidth_gbs
from probes.profiler import WorkloadRun, prepare_flop_counter, profile_workload
from probes.spec import SpecIndex, SpecSheet
from probes.storage import storage_read_mbs
from probes.timing import Budget, Deadline
from probes.transfer import host_device_bandwidth, peer_bandwidth_gbs
from probes.workloads import LoadedWorkload, WorkloadLoadError, load_workload
from recommender import __version__
from recommender.profile import Capabilities, Diagnosis, Machine, Profile

__all__ = ["DEFAULT_WORKLOAD", "PHASES", "DeviceUnavailableError", "ProbeOptions", "run_probe"]

DEFAULT_WORKLOAD = "reference:transformer-train"
# Counting FLOPs costs a one-off start-up of a second or two: not worth it in tiny budgets.
MIN_SECONDS_FOR_FLOPS = 8.0
# Relative shares of the budget; phases that do not apply give their share to the others.
PHASES: dict[str, float] = {
    "workload": 0.40,
    "matmul": 0.22,
    "memory": 0.06,
    "transfer": 0.10,
    "peer": 0.05,
    "storage": 0.10,
    "decode": 0.07,
}


class DeviceUnavailableError(RuntimeError):
    """``--device cuda`` was asked for and CUDA cannot run; ``diagnoses`` say why."""

    def __init__(self, diagnoses: list[Diagnosis]) -> None:
        self.diagnoses = diagnoses
        super().__init__("; ".join(d.message for d in diagnoses if d.severity == "error"))


@dataclass
class ProbeOptions:
    device: str = "auto"
    workload: str = DEFAULT_WORKLOAD
    seconds: float = 60.0
    scratch_dir: Path | None = None
    phases: tuple[str, ...] = tuple(PHASES)
    on_phase: Callable[[str], None] = field(default=lambda _name: None)
    # The spec sheets to compare figures with, from the caller (probes reads no catalog).
    accelerators: Sequence[SpecSheet] = ()
    names: SpecIndex | None = None


@dataclass
class _Run:
    """What the phases share: the device, the spec sheet, and the findings so far."""

    opts: ProbeOptions
    device: torch.device
    machine: Machine
    spec: SpecSheet | None
    accelerators: Sequence[SpecSheet]
    caps: Capabilities = field(default_factory=Capabilities)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    workload: LoadedWorkload | None = None
    workload_run: WorkloadRun | None = None
    count_flops: bool = False


def _choose_device(requested: str) -> tuple[torch.device, list[Diagnosis]]:
    diagnoses = doctor.environment_checks(requested)
    if requested == "cpu":
        return torch.device("cpu"), diagnoses
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device()), diagnoses
    if requested == "cuda":
        raise DeviceUnavailableError(diagnoses)
    return torch.device("cpu"), diagnoses


def _spec_sheets(opts: ProbeOptions, diagnoses: list[Diagnosis]) -> Sequence[SpecSheet]:
    """The caller's spec sheets; without them, figures carry no fraction of peak."""
    if not opts.accelerators:
        diagnoses.append(
            Diagnosis(
                code="catalog-unavailable",
                severity="warning",
                message="no accelerator spec sheets were given; figures are reported "
                "without spec-sheet peaks",
            )
        )
    return opts.accelerators


def _bigger_gpus(run: _Run) -> list[str]:
    """Up to three catalog GPUs with more memory than this one (for OOM remedies)."""
    gpus = run.machine.gpus
    have = gpus[0].memory_total_bytes if gpus else None
    if have is None:
        return []
    bigger = sorted(
        (a for a in run.accelerators if a.vendor == "nvidia" and a.memory_gb * 1e9 > have),
        key=lambda a: a.memory_gb,
    )
    return [a.id for a in bigger[:3]]


def _phase_workload(run: _Run, deadline: Deadline) -> None:
    if run.workload is None:
        return
    run.workload_run = profile_workload(run.workload, run.device, deadline, flops=run.count_flops)
    if run.device.type == "cuda":
        run.diagnoses += doctor.gpu_unused(run.workload_run)


def _phase_matmul(run: _Run, deadline: Deadline) -> None:
    spec = run.spec
    peaks = {p: spec.peak_tflops.get(p) for p in MATMUL_PRECISIONS} if spec else None
    result = matmul_tflops(run.device, deadline, peaks=peaks)
    run.caps.matmul_tflops.update(result.figures)
    run.caps.matmul_sustained_tflops.update(result.sustained)
    if run.device.type == "cuda":  # a shared VM's CPU cores swing with its neighbours' load
        run.diagnoses += doctor.throttle_check(run.caps)
    run.caps.skipped += result.skipped


def _phase_memory(run: _Run, deadline: Deadline) -> None:
    peak = run.spec.memory_bandwidth_gbs if run.spec else None
    run.caps.memory_bandwidth_gbs = memory_bandwidth_gbs(run.device, deadline, spec_peak=peak)


def _pcie(run: _Run) -> str | None:
    g = run.machine.gpus[0] if run.machine.gpus else None
    if g is None or g.pcie_gen_max is None:
        return None
    now = f"gen {g.pcie_gen_current} x{g.pcie_width_current}"
    return f"{now} of max gen {g.pcie_gen_max} x{g.pcie_width_max}"


def _phase_transfer(run: _Run, deadline: Deadline) -> None:
    peak = run.spec.host_link.gbs_per_direction if run.spec else None
    result = host_device_bandwidth(run.device, deadline, spec_peak=peak)
    run.caps.h2d_gbs, run.caps.d2h_gbs = result.h2d, result.d2h
    run.caps.skipped += result.skipped
    run.diagnoses += doctor.host_link_check(run.caps, peak, _pcie(run))


def _phase_peer(run: _Run, deadline: Deadline) -> None:
    spec = run.spec
    # One direction of a GPU's NVLink is half the catalog's both-directions figure.
    peak = (
        (spec.nvlink_gbs / 2 if spec.nvlink_gbs else spec.host_link.gbs_per_direction)
        if spec
        else None
    )
    run.caps.peer_gbs = peer_bandwidth_gbs(deadline, spec_peak=peak)


def _phase_storage(run: _Run, deadline: Deadline) -> None:
    run.caps.storage_read_mbs = storage_read_mbs(run.opts.scratch_dir, deadline)


def _phase_decode(run: _Run, deadline: Deadline) -> None:
    figures, skipped = decode_mbs_per_core(deadline)
    run.caps.decode_mbs_per_core = figures
    run.caps.skipped += skipped


_PHASE_FUNCS: dict[str, Callable[[_Run, Deadline], None]] = {
    "workload": _phase_workload,
    "matmul": _phase_matmul,
    "memory": _phase_memory,
    "transfer": _phase_transfer,
    "peer": _phase_peer,
    "storage": _phase_storage,
    "decode": _phase_decode,
}


def _applies(name: str, run: _Run) -> str | None:
    """Why phase ``name`` does not apply here, or ``None`` when it does."""
    if name not in run.opts.phases:
        return "not requested"
    if name == "transfer" and run.device.type != "cuda":
        return "no accelerator (--device cpu)"
    if name == "peer" and (run.device.type != "cuda" or torch.cuda.device_count() < 2):
        return "fewer than two GPUs"
    return None


def _run_phase(run: _Run, name: str, deadline: Deadline) -> None:
    """One phase; CUDA OOM, a failing workload or benchmark become diagnoses, not crashes."""
    try:
        _PHASE_FUNCS[name](run, deadline)
    except torch.cuda.OutOfMemoryError as exc:
        if run.device.type == "cuda":
            torch.cuda.empty_cache()
        size = None
        if name == "workload" and run.workload is not None:
            size = run.workload.batch_size
        gpus = run.machine.gpus
        run.diagnoses.append(
            doctor.oom_diagnosis(
                exc,
                where=f"the {name} phase"
                + (f" ({run.opts.workload})" if name == "workload" else ""),
                batch_size=size,
                memory_bytes=gpus[0].memory_total_bytes if gpus else None,
                bigger=_bigger_gpus(run),
            )
        )
    except Exception as exc:
        if name == "workload":
            run.diagnoses.append(doctor.workload_failed(exc, run.opts.workload))
            return
        # A benchmark that breaks (a full disk, an op the driver lacks) costs its figure only.
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        run.caps.skipped.append(f"{name}: failed ({reason})")
        run.diagnoses.append(
            Diagnosis(
                code="benchmark-failed",
                severity="warning",
                message=f"the {name} benchmark failed: {reason}",
                remedies=["the other figures stand; report this with the profile attached"]
                + (["pass --scratch-dir on a disk with 1 GiB free"] if name == "storage" else []),
            )
        )


def _run_phases(run: _Run, budget: Budget, on_phase: Callable[[str], None]) -> None:
    todo = []
    for name in PHASES:
        why = _applies(name, run)
        if why is None:
            todo.append(name)
        elif why != "not requested":
            run.caps.skipped.append(f"{name}: {why}")
    weights_left = sum(PHASES[n] for n in todo)
    for name in todo:
        on_phase(name)
        deadline = budget.phase(PHASES[name], weights_left)
        weights_left -= PHASES[name]
        if deadline.remaining() <= 0.05:
            run.caps.skipped.append(f"{name}: over the time budget")
            continue
        _run_phase(run, name, deadline)


def run_probe(opts: ProbeOptions, *, budget: Budget | None = None) -> Profile:
    """Measure this machine (and the workload) within ``opts.seconds``; return the profile.

    Raises :class:`DeviceUnavailableError` for ``--device cuda`` without usable CUDA and
    :class:`~probes.workloads.WorkloadLoadError` for a ``--workload`` that cannot load.
    """
    budget = budget or Budget(opts.seconds, reserve_s=0.5 + 0.03 * opts.seconds)
    opts.on_phase("setup")
    device, diagnoses = _choose_device(opts.device)
    accelerators = _spec_sheets(opts, diagnoses)
    machine, spec = machine_facts("cuda" if device.type == "cuda" else "cpu", opts.names)
    run = _Run(opts, device, machine, spec, accelerators, diagnoses=diagnoses)
    if "workload" in opts.phases:
        run.workload = _load_workload(run)
        if run.workload is not None and opts.seconds >= MIN_SECONDS_FOR_FLOPS:
            prepare_flop_counter()
            run.count_flops = True
        elif run.workload is not None:
            run.caps.skipped.append(
                f"workload FLOPs: not counted in a budget under {MIN_SECONDS_FOR_FLOPS:g} s"
            )
    _run_phases(run, budget, opts.on_phase)
    opts.on_phase("report")
    return _assemble(run, budget)


def _load_workload(run: _Run) -> LoadedWorkload | None:
    """Build the workload up front, so a bad ``--workload`` fails before any benchmark."""
    try:
        return load_workload(run.opts.workload, run.device)
    except WorkloadLoadError:
        raise
    except torch.cuda.OutOfMemoryError as exc:
        if run.device.type == "cuda":
            torch.cuda.empty_cache()
        gpus = run.machine.gpus
        run.diagnoses.append(
            doctor.oom_diagnosis(
                exc,
                where=f"building the workload {run.opts.workload}",
                memory_bytes=gpus[0].memory_total_bytes if gpus else None,
                bigger=_bigger_gpus(run),
            )
        )
    except Exception as exc:
        run.diagnoses.append(doctor.workload_failed(exc, run.opts.workload))
    return None


def _assemble(run: _Run, budget: Budget) -> Profile:
    wr = run.workload_run
    classification = (
        classify(wr.profile, run.caps, vcpus=run.machine.vcpus) if wr is not None else None
    )
    return Profile(
        created_at=dt.datetime.now(dt.UTC),
        probe_version=__version__,
        budget_s=run.opts.seconds,
        elapsed_s=budget.elapsed(),
        machine=run.machine,
        capabilities=run.caps,
        workload=wr.profile if wr is not None else None,
        classification=classification,
        diagnoses=run.diagnoses,
    )
