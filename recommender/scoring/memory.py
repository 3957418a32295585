"""Device-memory footprint of a workload, and what would make it fit.

Training holds weights, gradients, optimizer state and activations; inference holds weights,
transient activations and (LLMs) the KV cache. Sources for the constants:
- mixed-precision Adam: 16 bytes per parameter (2 weights + 2 gradients + 12 fp32 master
  weights and moments), Rajbhandari et al. 2020, "ZeRO", section 3.1;
- transformer activations without recomputation: s*b*h*(34 + 5*a*s/h) bytes per layer for
  16-bit activations, Korthikanti et al. 2022, "Reducing Activation Recomputation", eq. 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from recommender.scoring.demand import BYTES_PER_ELEMENT, kv_bytes_per_token
from recommender.workload import Workload

__all__ = ["RUNTIME_OVERHEAD_BYTES", "Footprint", "footprint", "remedies", "usable_bytes"]

GB = 1e9
# Activation bytes kept for the backward pass per forward FLOP, at
# 16-bit, when the model gives no shape: a transformer from Korthikanti's formula (BERT-Large
# at 512 tokens: ~0.93 GB for 2.6e11 FLOPs); a CNN from ResNet-50 mixed-precision training
# fitting batch 256 in a 16 GB V100 (NVIDIA DeepLearningExamples): ~53 MB per 4.1 GFLOPs.
ACTIVATION_BYTES_PER_FLOP = {"transformer": 3.6e-3, "cnn": 1.3e-2, "recsys": 1e-2, "other": 1e-2}
# CUDA context, cuBLAS/cuDNN workspaces and allocator fragmentation.
RUNTIME_OVERHEAD_BYTES = 1.5 * GB
USABLE_FRACTION = 0.95


N = TypeVar("N", float, npt.NDArray[np.float64])


def usable_bytes(memory_gb: N) -> N:
    """Bytes a workload may use on a device with ``memory_gb`` (scalar or array)."""
    return memory_gb * GB * USABLE_FRACTION - RUNTIME_OVERHEAD_BYTES


@dataclass(frozen=True, slots=True)
class Footprint:
    """Bytes per GPU, split into what shards across GPUs and what each GPU keeps whole."""

    weights: float
    gradients: float
    optimizer: float
    activations: float  # per GPU at the workload's batch
    kv_cache: float

    @property
    def shardable(self) -> float:
        """State FSDP/ZeRO-3 (training) or tensor parallelism (inference) divides."""
        return self.weights + self.gradients + self.optimizer + self.kv_cache

    def per_gpu(self, shards: int) -> float:
        return self.shardable / shards + self.activations

    def components_gb(self, shards: int = 1) -> dict[str, float]:
        """GB per GPU of each part when the shardable state is split over ``shards`` GPUs."""
        parts = {
            "weights": self.weights / shards,
            "gradients": self.gradients / shards,
            "optimizer": self.optimizer / shards,
            "activations": self.activations,
            "kv_cache": self.kv_cache / shards,
        }
        return {k: round(v / GB, 2) for k, v in parts.items() if v > 0}


def _activations(w: Workload) -> float:
    """Activation bytes per GPU for one step at the workload's batch."""
    b = w.batch_size
    el = BYTES_PER_ELEMENT[w.precision]
    if w.model.activation_bytes_per_sample is not None:
        per_sample = w.model.activation_bytes_per_sample
    elif w.model.architecture is not None:
        a = w.model.architecture
        heads = a.heads or max(1, a.hidden_size // 64)
        layers = a.layers * a.stacks
        # LLM serving runs the prompt through (prefill); other work the whole sequence.
        s = w.inference.prompt_tokens if w.inference is not None else a.sequence_length
        h = a.hidden_size
        per_layer = s * h * 34 + 5 * heads * s * s  # bytes at 16-bit
        per_sample = layers * per_layer * (el / 2)
        if w.kind != "training":
            per_sample = per_sample / layers * 2  # inference keeps ~2 layers live
    else:
        forward_flops = w.flops_per_sample / (3.0 if w.kind == "training" else 1.0)
        ratio = ACTIVATION_BYTES_PER_FLOP[w.model.resolved_family]
        per_sample = forward_flops * ratio * (el / 2) * (1.0 if w.kind == "training" else 0.1)
    return per_sample * b


def _kv_cache(w: Workload) -> float:
    spec = w.inference
    if spec is None:
        return 0.0
    context = spec.prompt_tokens + spec.output_tokens
    return kv_bytes_per_token(w) * context * w.batch_size


def footprint(w: Workload) -> Footprint:
    params = w.parameters
    el = BYTES_PER_ELEMENT[w.precision]
    if w.kind == "training":
        mixed = w.precision in ("bf16", "fp16", "fp8")
        optimizer = (12.0 if mixed else 8.0) * params if w.model.optimizer_step else 0.0
        return Footprint(params * el, params * el, optimizer, _activations(w), 0.0)
    return Footprint(params * el, 0.0, 0.0, _activations(w), _kv_cache(w))


def _shards_with_remedies(fp: Footprint, memory_gb: float) -> int | None:
    """GPUs to shard the state over, if activations are first brought under half the memory
    (micro-batching, checkpointing); ``None`` when sharding is not what is missing."""
    room = usable_bytes(memory_gb)
    if room <= 0 or fp.shardable <= 0.25 * room:
        return None
    kept = min(fp.activations, 0.5 * room)
    return max(1, math.ceil(fp.shardable / (room - kept)))


def remedies(
    w: Workload, fp: Footprint, memory_gb: float, bigger: list[tuple[str, float]]
) -> list[str]:
    """What would make ``w`` fit on a GPU with ``memory_gb``; ``bigger``: (id, GB) options."""
    out: list[str] = []
    need = fp.per_gpu(1)
    if w.kind == "training" and w.precision in ("fp32", "tf32"):
        out.append(
            "train in mixed precision (bf16/fp16): weights and gradients take half "
            "the memory and tensor cores run 2-8x faster"
        )
    if fp.activations > 0.25 * need and w.batch_size > 1:
        half = max(1, w.batch_size // 2)
        out.append(
            f"use gradient accumulation: micro-batch {half} x 2 steps halves "
            f"activation memory ({fp.activations / 2 / GB:.1f} GB saved per GPU)"
            if w.kind == "training"
            else f"lower the batch to {half} (activations and KV cache shrink with it)"
        )
    if w.kind == "training" and fp.activations > 0.25 * need:
        out.append(
            "enable activation checkpointing (recompute activations in the backward "
            "pass: ~30 % more compute for most of the activation memory)"
        )
    n = _shards_with_remedies(fp, memory_gb)
    if n is not None and n > 1:
        how = "FSDP / ZeRO-3" if w.kind == "training" else "tensor parallelism"
        out.append(f"shard over at least {n} GPUs of {memory_gb:g} GB with {how}")
    if w.kind != "training" and w.precision in ("fp32", "bf16", "fp16"):
        out.append("quantise weights to int8 or fp8 (half the weight memory of 16-bit)")
    fitting = [(name, gb) for name, gb in bigger if usable_bytes(gb) >= need]
    if fitting:
        name, gb = min(fitting, key=lambda x: x[1])
        out.append(f"use a bigger GPU: {name} ({gb:g} GB) holds it whole")
    return out
