"""Achievable capabilities per accelerator for one precision, as numpy arrays.

One entry per accelerator of the catalog (about two dozen), gathered onto offers by the
offers table's ``acc`` codes, so the per-request work is tiny. A precision an accelerator
lacks falls back to what a framework would run instead (bf16 -> fp16 on Volta/Turing,
tf32 -> fp32 before Ampere, fp8 -> bf16/fp16, int8 -> fp16) and the fallback is reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator, Precision
from recommender.scoring.achievable import Measured, full_power_dies, measured
from recommender.scoring.calibration import MEASURED_SHARE, Calibration
from recommender.scoring.step_time import (
    ALLREDUCE_STEP_LATENCY_NVLINK_S,
    ALLREDUCE_STEP_LATENCY_PCIE_S,
    ALLREDUCE_STEP_LATENCY_XGMI_S,
)

__all__ = [
    "FALLBACKS",
    "FLASH_ARCHITECTURES",
    "Capabilities",
    "MeasuredOverride",
    "achievable_bandwidth",
    "capabilities",
    "datasheet_peak_tflops",
    "effective_precision",
    "has_precision",
    "tf32_convolutions",
]

FloatArray = npt.NDArray[np.float64]

FALLBACKS: dict[Precision, tuple[Precision, ...]] = {
    "fp32": ("fp32",),
    "tf32": ("tf32", "fp32"),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp16": ("fp16", "bf16", "fp32"),
    "fp8": ("fp8", "bf16", "fp16", "fp32"),
    "int8": ("int8", "fp8", "fp16", "bf16", "fp32"),
}
# Precisions whose training recipes convert the linear layers only: torchao's float8 training
# swaps each ``nn.Linear`` for a ``Float8Linear`` (pytorch/ao, torchao/float8/README.md) and
# Transformer Engine runs ``DotProductAttention`` in 16 bits unless FP8 attention is asked for
# (``fp8_dpa``); the attention kernels (FlashAttention / cuDNN SDPA) stay at the 16-bit rate.
LINEAR_ONLY_PRECISIONS: dict[Precision, Precision] = {"fp8": "bf16"}
# An fp32 convolution runs on the TF32 tensor cores of an NVIDIA GPU that has them unless the
# user opts out: PyTorch's ``torch.backends.cudnn.allow_tf32`` "defaults to True" (PyTorch
# docs, notes/cuda.rst, "TensorFloat-32 (TF32) on Ampere (and later) devices"), while its fp32
# matmuls stay fp32 (``torch.backends.cuda.matmul.allow_tf32`` defaults to False since 1.12,
# pytorch/pytorch#76509). So a convolutional model (family ``cnn``) stated in fp32 is predicted
# at the TF32 rate where the part has one (ResNet-50 training on an A100: 399 img/s at the
# fp32 rate against the 938 DeepLearningExamples measures in TF32); other models, and AMD
# parts (ROCm's MIOpen has no such default), stay at fp32.
TF32_CONVOLUTION_VENDORS = frozenset({"nvidia"})
# PCIe traffic between GPUs goes through the host bridge: roughly half the link per direction.
PCIE_PEER_FACTOR = 0.5
# FlashAttention-2 runs on Ampere and newer NVIDIA GPUs (sm80+; Dao 2023, README) and on AMD
# CDNA3 through ROCm's composable-kernel port; older GPUs get PyTorch SDPA's memory-efficient
# kernel (no score matrix stored either, but slower).
FLASH_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell", "cdna3"})
# Memory-efficient SDPA (xFormers' kernel) on pre-Ampere GPUs: attention FLOPs run at about
# half FlashAttention's rate (Dao et al. 2022, Figure 1 comparisons on A100 and T4).
MEM_EFFICIENT_ATTENTION_SPEED = 0.5
# FlashAttention-2 (the flash-attn package, or PyTorch SDPA's flash backend: ``attention:
# flash``) is written for Ampere: on Hopper it uses neither the warp-group MMA nor the TMA,
# and runs at about half the rate of Hopper-native kernels (FlashAttention-3, cuDNN's fused
# attention): 329.5 against 631.3 TFLOP/s, bf16 forward, batch 1, 24 heads, 4,608 tokens,
# head dim 128 on an H100 (tritonbench, in pytorch/pytorch issue #142132); "FlashAttention-2
# achieving only 35% utilization on the H100 GPU" against FlashAttention-3's 75% (Shah et al.
# 2024, abstract). SDPA's own dispatch (``auto`` / ``sdpa``) picks cuDNN attention on sm90 /
# sm100 once the bundled cuDNN passes ``check_prefer_cudnn_attention`` (> 9.15, PyTorch 2.11
# on; opt-in from 2.5.1 after pytorch/pytorch#138522: huggingface/transformers#48163 reads
# sdp_utils.cpp), so it runs at the native rate. Elsewhere FlashAttention-2 is the
# architecture's own kernel (1.0); Blackwell's FlashAttention-2 rate is not measured here.
FLASH_ATTENTION_2_SPEED = {"hopper": 329.5 / 631.3}


# Calibration key of the share a model's GEMMs (real layer shapes) reach of a *measured*
# best-shape matmul sweep; streaming kernels vs triad: ``Calibration.triad_share``.
MEASURED_KEY = "measured:tensor"


def has_precision(acc: Accelerator, precision: str) -> bool:
    """Whether ``acc`` has matrix units for ``precision`` (``fp4``: Blackwell's FP4)."""
    return getattr(acc.peak_tflops, precision, None) is not None


def tf32_convolutions(precision: str, family: str) -> bool:
    """Whether a model of ``family`` stated in ``precision`` runs its convolutions as TF32
    where the GPU has TF32 units (``TF32_CONVOLUTION_VENDORS`` says why)."""
    return precision == "fp32" and family == "cnn"


def effective_precision(
    acc: Accelerator, precision: Precision, tf32_convs: bool = False
) -> Precision:
    """The precision ``acc``'s matrix units run ``precision`` at (``FALLBACKS``); with
    ``tf32_convs``, fp32 convolutions at TF32 on the parts that have it."""
    if tf32_convs and acc.vendor in TF32_CONVOLUTION_VENDORS and acc.peak_tflops.get("tf32"):
        return "tf32"
    for p in FALLBACKS[precision]:
        if acc.peak_tflops.get(p) is not None:
            return p
    return "fp32"


def datasheet_peak_tflops(acc: Accelerator, precision: Precision) -> float:
    """``acc``'s datasheet peak TFLOP/s at the precision its matrix units run ``precision`` at
    (``effective_precision``); its FP32 peak where the catalog gives none for that one."""
    return float(acc.peak_tflops.get(effective_precision(acc, precision)) or acc.peak_tflops.fp32)


@dataclass(frozen=True)
class Capabilities:
    """Per-accelerator achievable figures (index = accelerator position in the catalog)."""

    flops: FloatArray  # FLOP/s per device
    bandwidth: FloatArray  # device-memory bytes/s
    host_link: FloatArray  # host <-> device bytes/s per direction
    interconnect: FloatArray  # GPU <-> GPU bytes/s per direction (all-reduce bus bandwidth)
    allreduce_step_s: npt.NDArray[np.float64]  # one small all-reduce ring step in a node
    memory_gb: FloatArray
    precision_used: tuple[Precision, ...]
    flash: npt.NDArray[np.bool_]  # FlashAttention-class fused attention available
    # Rate of FlashAttention-2 against the architecture's native kernel
    # (``FLASH_ATTENTION_2_SPEED``).
    flash2_speed: FloatArray
    peak_flops: FloatArray  # datasheet FLOP/s at the precision used (for MFU)
    # FLOP/s of the attention kernels in training: the 16-bit rate where the recipe converts
    # only the linear layers (``LINEAR_ONLY_PRECISIONS``), else ``flops``.
    training_attention_flops: FloatArray
    # The precision used is one whose training recipe converts the linear layers only.
    linear_only: npt.NDArray[np.bool_]


# Dynamic power of CMOS logic is ~ C V^2 f, and along a GPU's voltage-frequency curve the
# voltage falls with the clock, so power goes ~ f^3 (Hennessy & Patterson, "Computer
# Architecture: A Quantitative Approach", 6th ed., section 1.5): a board capped at a share s of
# the power its die needs at the boost clock sustains ~ s^(1/3) of that clock.
POWER_TO_CLOCK_EXPONENT = 1.0 / 3.0


def allreduce_step_latency_s(acc: Accelerator) -> float:
    """Latency of one step of a small ring all-reduce between ``acc``'s GPUs in a node: over
    NVLink, over AMD's xGMI (both carried by the catalog's ``nvlink_gbs``), or through PCIe."""
    if not acc.nvlink_gbs:
        return ALLREDUCE_STEP_LATENCY_PCIE_S
    return ALLREDUCE_STEP_LATENCY_XGMI_S if acc.vendor == "amd" else ALLREDUCE_STEP_LATENCY_NVLINK_S


def sustained_clock_share(acc: Accelerator) -> float:
    """Share of its datasheet boost clock, so of its datasheet compute rates, a power-capped
    board sustains under a dense load: its watts per FP32 TFLOP/s (the clock-bound rate every
    board of a die states alike) against those of the full-power board of the same die
    (``full_power_dies`` in achievable.yaml), to the 1/3 power. 1 for full-power boards and
    dies with no reference."""
    ref = full_power_dies().get(acc.chip or "")
    if ref is None or acc.tdp_w is None or not acc.peak_tflops.fp32:
        return 1.0
    share = (acc.tdp_w / acc.peak_tflops.fp32) / (ref.tdp_w / ref.fp32_tflops)
    return float(min(1.0, share) ** POWER_TO_CLOCK_EXPONENT)


# Measured figures that replace ``achievable.yaml``'s for some accelerators in one request (a
# probe profile's, :func:`recommender.scoring.profile_use.profile_measured`), by accelerator id.
MeasuredOverride = Mapping[str, Measured]


def _measured_for(acc: Accelerator, override: MeasuredOverride | None) -> Measured | None:
    """``acc``'s measured figures: the request's own where it brings some, else the shipped."""
    if override is not None and acc.id in override:
        return override[acc.id]
    return measured().get(acc.id)


def _flops(
    acc: Accelerator, p: Precision, cal: Calibration, override: MeasuredOverride | None = None
) -> float:
    """Achievable FLOP/s: the measured matmul rate x the share a model's GEMMs reach of it,
    else the datasheet peak x the fitted efficiency of its class x the clock a power-capped
    board sustains (``sustained_clock_share``: its CUDA cores and its tensor cores run on the
    one clock, and a dense tensor-core load draws at least the power per clock an FP32 one
    does, so the FP32-derived share is the least a tensor load loses). A measured rate
    already carries its board's clock."""
    m = _measured_for(acc, override)
    rate = m.matmul(p) if m is not None and p != "fp32" else None
    if rate is not None:
        return rate * 1e12 * cal.compute.get(MEASURED_KEY, MEASURED_SHARE)
    used = p if acc.peak_tflops.get(p) else "fp32"
    peak = float(acc.peak_tflops.get(used) or acc.peak_tflops.fp32)
    return peak * 1e12 * cal.compute_efficiency(acc, p) * sustained_clock_share(acc)


def achievable_bandwidth(
    acc: Accelerator, cal: Calibration, override: MeasuredOverride | None = None
) -> float:
    """Device-memory bytes/s a model's streaming kernels reach on ``acc`` under ``cal``: a
    share of its measured triad where one is published (or the request's profile measured
    one), else of its datasheet."""
    m = _measured_for(acc, override)
    if m is not None and m.memory_bandwidth_gbs is not None:
        return m.memory_bandwidth_gbs * 1e9 * cal.triad_share
    return acc.memory_bandwidth_gbs * 1e9 * cal.memory_efficiency(acc)


def _link(acc: Accelerator, cal: Calibration) -> float:
    """All-reduce bus bandwidth between the GPUs of one instance (bytes/s): measured where
    published, else NVLink per direction (or half the PCIe link, through the host bridge)
    times the fitted interconnect efficiency."""
    m = measured().get(acc.id)
    if m is not None and m.allreduce_busbw_gbs is not None:
        return m.allreduce_busbw_gbs * 1e9
    per_direction = (
        acc.nvlink_gbs / 2 if acc.nvlink_gbs else acc.host_link.gbs_per_direction * PCIE_PEER_FACTOR
    )
    return per_direction * 1e9 * cal.interconnect_efficiency


# Recently computed capabilities, keyed by the identity of their inputs (kept alive by the
# entry itself, so an id cannot be reused while cached).
_CACHE: dict[tuple[int, int, str, bool, int], tuple[object, object, object, Capabilities]] = {}
_CACHE_SIZE = 32


def capabilities(
    accs: Sequence[Accelerator],
    precision: Precision,
    cal: Calibration,
    family: str = "",
    override: MeasuredOverride | None = None,
) -> Capabilities:
    """Achievable figures of ``accs`` at ``precision`` under ``cal`` for a model of ``family``,
    with ``override``'s measured figures in place of ``achievable.yaml``'s for the parts it
    names (cached per request inputs: a catalog, a calibration and an override are not
    changed once made; the family only decides :func:`tf32_convolutions`)."""
    tf32_convs = tf32_convolutions(precision, family)
    key = (id(accs), id(cal), precision, tf32_convs, id(override))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is accs and hit[1] is cal and hit[2] is override:
        return hit[3]
    caps = _capabilities(accs, precision, cal, tf32_convs, override)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (accs, cal, override, caps)
    return caps


def _capabilities(
    accs: Sequence[Accelerator],
    precision: Precision,
    cal: Calibration,
    tf32_convs: bool,
    override: MeasuredOverride | None,
) -> Capabilities:
    used = tuple(effective_precision(a, precision, tf32_convs) for a in accs)
    pairs = list(zip(accs, used, strict=True))
    flops = [_flops(a, p, cal, override) for a, p in pairs]
    bandwidth = [achievable_bandwidth(a, cal, override) for a in accs]
    return Capabilities(
        flops=np.asarray(flops, dtype=np.float64),
        bandwidth=np.asarray(bandwidth, dtype=np.float64),
        host_link=np.asarray(
            [a.host_link.gbs_per_direction * 1e9 * cal.host_link_efficiency for a in accs]
        ),
        interconnect=np.asarray([_link(a, cal) for a in accs], dtype=np.float64),
        allreduce_step_s=np.asarray([allreduce_step_latency_s(a) for a in accs]),
        memory_gb=np.asarray([a.memory_gb for a in accs], dtype=np.float64),
        precision_used=used,
        flash=np.asarray([a.architecture in FLASH_ARCHITECTURES for a in accs]),
        flash2_speed=np.asarray(
            [FLASH_ATTENTION_2_SPEED.get(a.architecture, 1.0) for a in accs], dtype=np.float64
        ),
        peak_flops=np.asarray(
            [(a.peak_tflops.get(p) or a.peak_tflops.fp32) * 1e12 for a, p in pairs]
        ),
        training_attention_flops=np.asarray(
            [
                _attention_flops(a, p, f, cal, override)
                for (a, p), f in zip(pairs, flops, strict=True)
            ],
            dtype=np.float64,
        ),
        linear_only=np.asarray([p in LINEAR_ONLY_PRECISIONS for p in used]),
    )


def _attention_flops(
    acc: Accelerator,
    used: Precision,
    flops: float,
    cal: Calibration,
    override: MeasuredOverride | None = None,
) -> float:
    """The attention kernels' rate: ``flops`` (the matrices' rate), or the 16-bit rate where
    the recipe converts the linear layers only."""
    attention = LINEAR_ONLY_PRECISIONS.get(used)
    if attention is None:
        return flops
    return _flops(acc, effective_precision(acc, attention), cal, override)
