"""Achievable capabilities per accelerator for one precision, as numpy arrays.

One entry per accelerator of the catalog (about two dozen), gathered onto offers by the
offers table's ``acc`` codes, so the per-request work is tiny. A precision an accelerator
lacks falls back to what a framework would run instead (bf16 -> fp16 on Volta/Turing,
tf32 -> fp32 before Ampere, fp8 -> bf16/fp16, int8 -> fp16) and the fallback is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator, Precision
from recommender.scoring.calibration import Calibration

__all__ = [
    "FALLBACKS",
    "FLASH_ARCHITECTURES",
    "Capabilities",
    "capabilities",
    "effective_precision",
    "has_precision",
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
# PCIe traffic between GPUs goes through the host bridge: roughly half the link per direction.
PCIE_PEER_FACTOR = 0.5
# FlashAttention-2 runs on Ampere and newer NVIDIA GPUs (sm80+; Dao 2023, README) and on AMD
# CDNA3 through ROCm's composable-kernel port; older GPUs get PyTorch SDPA's memory-efficient
# kernel (no score matrix stored either, but slower).
FLASH_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell", "cdna3"})
# Memory-efficient SDPA (xFormers' kernel) on pre-Ampere GPUs: attention FLOPs run at about
# half FlashAttention's rate (Dao et al. 2022, Figure 1 comparisons on A100 and T4).
MEM_EFFICIENT_ATTENTION_SPEED = 0.5


def has_precision(acc: Accelerator, precision: str) -> bool:
    """Whether ``acc`` has matrix units for ``precision`` (``fp4``: Blackwell's FP4)."""
    return getattr(acc.peak_tflops, precision, None) is not None


def effective_precision(acc: Accelerator, precision: Precision) -> Precision:
    for p in FALLBACKS[precision]:
        if acc.peak_tflops.get(p) is not None:
            return p
    return "fp32"


@dataclass(frozen=True)
class Capabilities:
    """Per-accelerator achievable figures (index = accelerator position in the catalog)."""

    flops: FloatArray  # FLOP/s per device
    bandwidth: FloatArray  # device-memory bytes/s
    host_link: FloatArray  # host <-> device bytes/s per direction
    interconnect: FloatArray  # GPU <-> GPU bytes/s per direction (all-reduce bus bandwidth)
    has_nvlink: npt.NDArray[np.bool_]
    memory_gb: FloatArray
    precision_used: tuple[Precision, ...]
    flash: npt.NDArray[np.bool_]  # FlashAttention-class fused attention available
    peak_flops: FloatArray  # datasheet FLOP/s at the precision used (for MFU)


def capabilities(
    accs: Sequence[Accelerator], precision: Precision, cal: Calibration
) -> Capabilities:
    used = tuple(effective_precision(a, precision) for a in accs)
    flops = [
        (a.peak_tflops.get(p) or a.peak_tflops.fp32) * 1e12 * cal.compute_efficiency(a, p)
        for a, p in zip(accs, used, strict=True)
    ]
    bw = [a.memory_bandwidth_gbs * 1e9 * cal.memory_efficiency(a) for a in accs]
    host = [a.host_link.gbs_per_direction * 1e9 * cal.host_link_efficiency for a in accs]
    link = [
        (a.nvlink_gbs / 2 if a.nvlink_gbs else a.host_link.gbs_per_direction * PCIE_PEER_FACTOR)
        * 1e9
        * cal.interconnect_efficiency
        for a in accs
    ]
    return Capabilities(
        flops=np.asarray(flops, dtype=np.float64),
        bandwidth=np.asarray(bw, dtype=np.float64),
        host_link=np.asarray(host, dtype=np.float64),
        interconnect=np.asarray(link, dtype=np.float64),
        has_nvlink=np.asarray([bool(a.nvlink_gbs) for a in accs]),
        memory_gb=np.asarray([a.memory_gb for a in accs], dtype=np.float64),
        precision_used=used,
        flash=np.asarray([a.architecture in FLASH_ARCHITECTURES for a in accs]),
        peak_flops=np.asarray(
            [
                (a.peak_tflops.get(p) or a.peak_tflops.fp32) * 1e12
                for a, p in zip(accs, used, strict=True)
            ]
        ),
    )
