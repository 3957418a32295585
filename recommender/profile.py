"""What the probe measured on a machine: the versioned profile schema (the probe's JSON output).

A :class:`Profile` is the contract between ``probes/`` (which writes it on a candidate VM),
the scoring engine (which calibrates predictions with it) and the service (which stores it).
It holds the machine's identity, the measured hardware capabilities (each beside the
spec-sheet peak from the catalog), the workload's demand per step, the classification
(compute-bound, transfer-bound or balanced, and which stage is the bound) and the doctor's
diagnoses. Fields are only ever added; readers ignore fields they do not know, so a newer
probe can post to an older service. Units are in the field names (``_s``, ``_bytes``,
``_gbs`` = 10^9 bytes/s, ``_mbs`` = 10^6 bytes/s, ``_tflops`` = 10^12 FLOP/s).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recommender.catalog.schema import Precision
from recommender.errors import ProfileError

__all__ = [
    "PROFILE_SCHEMA_VERSION",
    "Bound",
    "Capabilities",
    "Classification",
    "CopyBandwidth",
    "DeviceKind",
    "Diagnosis",
    "Figure",
    "GpuFacts",
    "LimitingStage",
    "Machine",
    "Profile",
    "ProfileError",
    "Severity",
    "StageTiming",
    "Utilization",
    "WorkloadProfile",
    "load_profile",
]

PROFILE_SCHEMA_VERSION: Literal[1] = 1

DeviceKind = Literal["cuda", "cpu"]
Bound = Literal["compute-bound", "transfer-bound", "balanced"]
LimitingStage = Literal["compute", "data-loading", "host-to-device", "host-overhead"]
Severity = Literal["error", "warning", "info"]
NonNegative = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]


class _Model(BaseModel):
    """Unknown keys are ignored so that profiles from newer probes still load."""

    model_config = ConfigDict(extra="ignore")


class Figure(_Model):
    """One measured capability: the median of ``repeats`` samples, beside the spec sheet."""

    value: NonNegative = Field(description="Median of the repeats, in ``unit``.")
    unit: str
    repeats: int = Field(ge=1)
    min: NonNegative | None = None
    max: NonNegative | None = None
    spec_peak: NonNegative | None = Field(
        default=None, description="The accelerator's datasheet figure, in the same unit."
    )
    fraction_of_peak: NonNegative | None = Field(
        default=None, description="value / spec_peak, where the peak is known."
    )
    method: str = Field(default="", description="How it was measured (shape, buffer, timer).")


class CopyBandwidth(_Model):
    """A host<->device copy direction, from pinned and from pageable host memory."""

    pinned: Figure | None = None
    pageable: Figure | None = None


class Capabilities(_Model):
    """Hardware micro-benchmarks; a figure is ``None`` when skipped (see ``skipped``)."""

    matmul_tflops: dict[Precision, Figure] = Field(default_factory=dict)
    matmul_sustained_tflops: dict[Precision, Figure] = Field(
        default_factory=dict,
        description="One precision's best matmul shape run back to back for seconds: the rate "
        "the chip holds under its power and clock limits (min / max: its slowest and fastest "
        "tenth), against the burst figures of ``matmul_tflops``.",
    )
    memory_bandwidth_gbs: Figure | None = Field(
        default=None, description="Device memory copy bandwidth, read + write bytes counted."
    )
    h2d_gbs: CopyBandwidth | None = None
    d2h_gbs: CopyBandwidth | None = None
    peer_gbs: Figure | None = Field(
        default=None, description="GPU 0 -> GPU 1 copy bandwidth (machines with several GPUs)."
    )
    storage_read_mbs: Figure | None = Field(
        default=None, description="Sequential read of a scratch file, page cache defeated."
    )
    decode_mbs_per_core: dict[str, Figure] = Field(
        default_factory=dict,
        description="Single-core decode throughput per codec, in MB of encoded input per second.",
    )
    skipped: list[str] = Field(
        default_factory=list, description="Benchmarks not run, each with the reason."
    )


class GpuFacts(_Model):
    """What NVML (or torch, without NVML) says about one GPU."""

    index: int = Field(ge=0)
    name: str
    memory_total_bytes: int | None = Field(default=None, ge=0)
    compute_capability: str | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    power_limit_w: float | None = None
    sm_clock_max_mhz: int | None = None
    memory_clock_max_mhz: int | None = None


class Machine(_Model):
    """The machine's identity. ``gpu_count`` is every visible GPU, used or not."""

    hostname: str
    cloud: Literal["aws", "gcp", "azure"] | None = None
    instance_type: str | None = Field(
        default=None, description="From the environment or DMI, never a metadata endpoint."
    )
    os: str = ""
    cpu_model: str | None = None
    vcpus: int = Field(ge=1)
    memory_bytes: int | None = Field(default=None, ge=0)
    device: DeviceKind
    accelerator: str | None = Field(
        default=None,
        description="Canonical catalog id when the GPU name resolves, else the raw name.",
    )
    accelerator_name_raw: str | None = None
    gpu_count: int = Field(default=0, ge=0)
    gpus: list[GpuFacts] = Field(default_factory=list)
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    cuda_version: str | None = Field(default=None, description="CUDA runtime torch was built for.")
    torch_version: str | None = None
    python_version: str = ""


class StageTiming(_Model):
    """Seconds one stage of a step took, over the measured steps."""

    mean: NonNegative
    median: NonNegative
    p90: NonNegative


class Utilization(_Model):
    """GPU utilisation (percent of time a kernel ran) sampled with NVML while the workload ran."""

    mean_percent: Annotated[float, Field(ge=0, le=100)]
    samples: list[Annotated[float, Field(ge=0, le=100)]] = Field(default_factory=list)
    interval_s: NonNegative


class WorkloadProfile(_Model):
    """What the workload demanded per step, measured over ``steps_measured`` steps."""

    name: str
    kind: Literal["training", "inference"] | None = None
    precision: str | None = None
    batch_size: int = Field(ge=1, description="Samples per step (first dimension of the batch).")
    devices_used: int = Field(
        ge=0, description="Accelerators the workload ran on (0 = CPU); the throughput is theirs."
    )
    warmup_steps: int = Field(ge=0)
    steps_measured: int = Field(ge=1)
    wall_s: NonNegative = Field(description="Wall time of the measured steps, device synced.")
    throughput_samples_per_s: NonNegative
    data_wait_s: StageTiming = Field(description="Host time in next(batches).")
    h2d_s: StageTiming = Field(description="Host-to-device copy of the batch.")
    compute_s: StageTiming = Field(description="Device time running step(batch).")
    idle_s: StageTiming = Field(description="Device idle time per step (waiting for the host).")
    step_s: StageTiming = Field(description="Wall time per step.")
    flops_per_step: NonNegative | None = None
    flops_per_sample: NonNegative | None = None
    achieved_tflops: NonNegative | None = None
    bytes_to_device_per_step: NonNegative
    bytes_to_device_per_sample: NonNegative
    batches_pinned: bool = False
    peak_memory_bytes: int | None = Field(default=None, ge=0)
    peak_memory_kind: Literal["device-allocated", "host-rss"] | None = None
    gpu_utilization: Utilization | None = None


class Classification(_Model):
    """Which resource bounds the workload, and the evidence."""

    bound: Bound
    limiting_stage: LimitingStage
    gpu_busy_fraction: Fraction = Field(
        description="Share of wall time the device (the CPU under --device cpu) computed."
    )
    reasons: list[str] = Field(default_factory=list)


class Diagnosis(_Model):
    """A doctor finding: a stable code, how bad it is, what happened and what to do."""

    code: str = Field(min_length=1, pattern=r"^[a-z0-9-]+$")
    severity: Severity
    message: str
    remedies: list[str] = Field(default_factory=list)


class Profile(_Model):
    """One probe run: the machine, its capabilities, the workload and the verdict."""

    schema_version: Literal[1] = PROFILE_SCHEMA_VERSION
    created_at: dt.datetime
    probe_version: str
    budget_s: NonNegative | None = None
    elapsed_s: NonNegative | None = None
    machine: Machine
    capabilities: Capabilities = Field(default_factory=Capabilities)
    workload: WorkloadProfile | None = None
    classification: Classification | None = None
    diagnoses: list[Diagnosis] = Field(default_factory=list)

    def compute_fraction(self) -> float | None:
        """Share of a step that is device compute (``None`` without a workload measurement)."""
        w = self.workload
        if w is None or w.step_s.mean <= 0:
            return None
        return min(1.0, w.compute_s.mean / w.step_s.mean)

    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnoses)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def load_profile(path: Path) -> Profile:
    """Read and validate a profile JSON file, naming the file and field on failure."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read the profile: {exc.strerror or exc}") from exc
    try:
        return Profile.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        if first["type"] == "json_invalid":
            try:
                json.loads(text)
            except json.JSONDecodeError as jexc:
                raise ProfileError(
                    f"{path}:{jexc.lineno}: not valid JSON: {jexc.msg}; "
                    "re-run `recommender probe --output FILE`"
                ) from exc
        raise ProfileError(
            f"{path}: field {where}: {first['msg']}{more}; was it written by `recommender probe`?"
        ) from exc
