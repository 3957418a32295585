"""Achievable (not datasheet) efficiency per accelerator, and the demand-model constants.

Datasheet rooflines are 20-50 % optimistic, worst on power-limited cards (T4, L4). The
predictor multiplies each peak by an efficiency looked up along a chain from the most to the
least specific key: the accelerator id, ``chip-form`` (e.g. ``GA100-pcie``), the chip, the
architecture, then ``*`` (the shipped fit sets one per architecture: see
``calibrate._parameters``; a calibration may still pin a single part). Precisions fall in
two classes: ``simt`` (fp32 on CUDA cores) and ``tensor`` (tf32, bf16, fp16, fp8, int8 on
matrix units).

Two files ship next to this module: ``priors.json`` (set by hand, with the reasoning in its
notes) and ``calibration.json``, the priors refined on the published throughput development
set by :mod:`recommender.scoring.calibrate` (regenerate with ``benchmarks/accuracy.py
--write``). Cross-validation starts from the priors, never from the fitted file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any, Literal

from recommender.catalog.schema import Accelerator, Precision
from recommender.scoring.transfer import HABITAT

__all__ = [
    "Calibration",
    "PrecisionClass",
    "by_execution",
    "default_calibration",
    "precision_class",
    "prior_calibration",
]

PrecisionClass = Literal["simt", "tensor"]
Execution = Literal["eager", "compiled", "engine"]

# A STREAM-like triad reaches this share of the datasheet bandwidth: the median over the
# chips whose triad ``achievable.yaml`` carries (A100 SXM 0.834, H100 SXM 0.887, H100 PCIe
# 0.916, H200 SXM 0.865, MI300X 0.772, all HBM; the test recomputes it). An HBM chip with no
# triad of its own is taken to reach it, times the share of a triad a model reaches
# (``memory.measured``), so one fitted constant moves the bandwidth of every chip: a fit
# cannot trade the datasheet-only chips (consumer and PCIe cards) against the measured ones.
DATASHEET_TRIAD_SHARE = 0.865
# A GDDR board's triad reaches more of its datasheet: the median over the GDDR boards whose
# gpu-stream triad ``achievable.yaml`` carries (L40 768 / 864 = 0.889, A40 653 / 696 = 0.938;
# the test recomputes it); ``Accelerator.memory_type`` says which share a part takes. One
# share for both under-rated every GDDR card (held out, ``benchmarks/accuracy.py``: all
# classes 13.6 -> 12.8 % with a baseline; the fitted ``memory.measured`` still moves both).
GDDR_TRIAD_SHARE = 0.9135
MEASURED_MEMORY_KEY = "measured"
# The share of a measured capability a model reaches where a calibration names none.
MEASURED_SHARE = 0.8


def by_execution(table: Mapping[str, float], mode: str) -> float:
    """``table[mode]``. An inference engine's build (``engine``: TensorRT, FasterTransformer)
    fuses at least what a compiler fuses, so a table with no ``engine`` entry gives it the
    ``compiled`` one."""
    if mode == "engine" and mode not in table:
        return table["compiled"]
    return table[mode]


def precision_class(precision: Precision) -> PrecisionClass:
    return "simt" if precision == "fp32" else "tensor"


def efficiency_keys(acc: Accelerator) -> list[str]:
    """Lookup chain for ``acc``, most specific first."""
    keys = [acc.id]
    if acc.chip:
        keys += [f"{acc.chip}-{acc.form_factor}", acc.chip]
    return [*keys, acc.architecture, "*"]


@dataclass(frozen=True)
class Calibration:
    """Efficiencies and demand constants; immutable, cheap to copy with overrides."""

    compute: dict[str, float]  # "<key>:<class>" -> achievable fraction of dense peak
    memory: dict[str, float]  # "<key>" -> achievable fraction of datasheet bandwidth
    transformer_passes: dict[str, float]  # activation passes per layer-token-channel
    attention_passes: dict[str, float]  # passes over the attention score matrix
    cnn_passes: dict[str, float]  # passes over each activation element
    kernel_gpu_s: float  # device time per kernel beyond its roofline (launch, tail)
    kernel_cpu_s: dict[str, float]  # host time to issue one kernel (eager Python, compiled)
    attention_gemm_efficiency: float = 0.6  # attention's batched head-dim GEMMs vs big GEMMs
    host_link_efficiency: float = 0.8  # pinned H2D achieved / PCIe per-direction spec
    interconnect_efficiency: float = 0.7  # all-reduce bus bandwidth / link spec
    comm_overlap: float = 0.6  # share of gradient all-reduce hidden behind backward
    serving_step_s: dict[str, float] = field(  # host time per decode iteration, by execution
        default_factory=lambda: {"eager": 20e-3, "compiled": 1e-3}
    )
    # Host time per sequence per decode iteration of a serving engine (scheduling, sampling
    # and output handling loop over the batch's sequences): fitted, ``calibrate._parameters``.
    serving_sequence_s: float = 1e-5
    # Bytes a serving runtime's decode kernels stream per SM-cycle at most (``issue_rate``),
    # by ``inference.runtime``; a runtime with no entry streams at the memory's rate.
    decode_bytes_per_sm_cycle: dict[str, float] = field(default_factory=dict)
    # Exponent of a baseline's gap to the model on other parts, by how they relate to the
    # measured one, and its decay with their roofline distance (``transfer``): exponents 1
    # and no decay carry the whole gap over (Habitat-style scaling).
    baseline_transfer: dict[str, float] = field(default_factory=lambda: dict(HABITAT))
    notes: dict[str, str] = field(default_factory=dict)

    def compute_efficiency(self, acc: Accelerator, precision: Precision) -> float:
        cls = precision_class(precision)
        for key in efficiency_keys(acc):
            value = self.compute.get(f"{key}:{cls}")
            if value is not None:
                return value
        raise KeyError(f"calibration has no '*:{cls}' default")

    def memory_efficiency(self, acc: Accelerator) -> float:
        """Achievable share of ``acc``'s datasheet bandwidth: its own entry along the lookup
        chain (a calibration may pin one), else the triad's typical share of the datasheet
        times the share of a triad a model reaches."""
        for key in efficiency_keys(acc):
            value = self.memory.get(key)
            if value is not None:
                return value
        share = GDDR_TRIAD_SHARE if acc.memory_type == "gddr" else DATASHEET_TRIAD_SHARE
        return share * self.triad_share

    @property
    def triad_share(self) -> float:
        """The share of a measured triad a model's streaming kernels reach."""
        return self.memory.get(MEASURED_MEMORY_KEY, MEASURED_SHARE)

    def with_values(self, **changes: Any) -> Calibration:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "compute": dict(sorted(self.compute.items())),
            "memory": dict(sorted(self.memory.items())),
            "transformer_passes": self.transformer_passes,
            "attention_passes": self.attention_passes,
            "cnn_passes": self.cnn_passes,
            "kernel_gpu_s": self.kernel_gpu_s,
            "kernel_cpu_s": self.kernel_cpu_s,
            "attention_gemm_efficiency": self.attention_gemm_efficiency,
            "host_link_efficiency": self.host_link_efficiency,
            "interconnect_efficiency": self.interconnect_efficiency,
            "comm_overlap": self.comm_overlap,
            "serving_step_s": self.serving_step_s,
            "serving_sequence_s": self.serving_sequence_s,
            "decode_bytes_per_sm_cycle": self.decode_bytes_per_sm_cycle,
            "baseline_transfer": self.baseline_transfer,
            "notes": self.notes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        return cls(**data)


def _load(name: str) -> Calibration:
    text = resources.files("recommender.scoring").joinpath(name).read_text(encoding="utf-8")
    return Calibration.from_json(json.loads(text))


@cache
def prior_calibration() -> Calibration:
    """The hand-set priors (``priors.json``): the starting point of every fit."""
    return _load("priors.json")


@cache
def default_calibration() -> Calibration:
    """The shipped calibration (``calibration.json``, fitted), else the priors."""
    try:
        return _load("calibration.json")
    except FileNotFoundError:
        return prior_calibration()
