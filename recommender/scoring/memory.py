"""Device memory per GPU: what a plan keeps there, and how much an accelerator offers.

Training keeps weights, gradients, the optimizer's state (and an fp32 master copy in mixed
precision) and the activations the backward pass needs; inference keeps weights, transient
activations and (LLMs) the KV cache. Sources for the constants:

- mixed-precision Adam: 16 bytes per parameter (2 weights + 2 gradients + 4 fp32 master +
  4 + 4 moments), Rajbhandari et al. 2020, "ZeRO", section 3.1; ZeRO stage 1 shards the
  optimizer state and master weights, stage 2 also the gradients, stage 3 the weights too
  (their Figure 1), each over the data-parallel GPUs;
- 8-bit Adam: two 1-byte moments (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
  Quantization"); SGD with momentum: one fp32 buffer; Adafactor: factored second moments,
  O(rows + columns) per matrix (Shazeer and Stern 2018), ~0 bytes per parameter;
- QLoRA: the frozen base in NF4 with double quantisation, 4.127 bits per parameter (Dettmers
  et al. 2023, section 3), adapters trained in 16-bit with Adam;
- tensor parallelism divides weights, gradients, optimizer state and activations by its
  degree (Megatron-LM with sequence parallelism, Korthikanti et al. 2022, section 4.2.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from recommender.recipe import Optimizer
from recommender.scoring.shape import BYTES_PER_ELEMENT, Shape
from recommender.workload import Workload

__all__ = [
    "GB",
    "GIB",
    "RUNTIME_OVERHEAD_BYTES",
    "StateBytes",
    "lora_parameters",
    "state_bytes",
    "usable_bytes",
]

FloatArray = npt.NDArray[np.float64]
GB = 1e9
# Accelerator memory is sold in binary units: an "80 GB" A100 has 80 GiB (nvidia-smi shows
# 81920 MiB); GDDR parts with ECC on show ~6 % less (L4: 23034 MiB of 24 GiB).
GIB = float(2**30)
# What a workload can allocate of the device: ECC/reserved memory and the caching allocator's
# fragmentation take ~7 % (PyTorch CUDA caching allocator notes).
USABLE_FRACTION = 0.93
# CUDA context, cuBLAS / cuDNN workspaces and NCCL buffers, per process.
RUNTIME_OVERHEAD_BYTES = 0.8 * GIB
OPTIMIZER_BYTES_PER_PARAMETER: dict[Optimizer, float] = {
    "adamw": 8.0,  # two fp32 moments
    "adamw-8bit": 2.0,  # two 8-bit moments
    "sgd-momentum": 4.0,  # one fp32 momentum buffer
    "adafactor": 0.0,  # factored second moments: O(rows + columns)
}
MASTER_WEIGHT_BYTES = 4.0  # fp32 copy kept by mixed-precision optimizers
NF4_BYTES_PER_PARAMETER = 4.127 / 8  # QLoRA NF4 + double quantisation
# LoRA adapters: rank x (d_in + d_out) per adapted matrix (Hu et al. 2021, section 4).
LORA_MATRICES_PER_LAYER = {"attention": 4, "all": 7}

N = TypeVar("N", float, FloatArray)


def usable_bytes(memory_gb: N) -> N:
    """Bytes a workload may use on a device with ``memory_gb`` (scalar or array)."""
    return memory_gb * GIB * USABLE_FRACTION - RUNTIME_OVERHEAD_BYTES


@dataclass(frozen=True, slots=True)
class StateBytes:
    """Training state in bytes over the whole model, split by what each ZeRO stage shards."""

    weights: float  # compute copy (the frozen base, for LoRA)
    gradients: float
    optimizer: float  # moments + fp32 master weights (ZeRO-1 shards these)
    trainable: float  # trainable parameters (all, or the LoRA adapters)

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer

    def per_gpu(
        self, tp: FloatArray, dp: FloatArray, stage: FloatArray, offload: FloatArray
    ) -> FloatArray:
        """Bytes per GPU for tensor-parallel degree ``tp``, ``dp`` data-parallel ranks, ZeRO
        ``stage`` (0-3) and optimizer ``offload`` (1: optimizer state in host memory)."""
        weights = self.weights / tp / np.where(stage >= 3, dp, 1.0)
        grads = self.gradients / tp / np.where(stage >= 2, dp, 1.0)
        optimizer = self.optimizer / tp / np.where(stage >= 1, dp, 1.0)
        return np.asarray(weights + grads + np.where(offload > 0, 0.0, optimizer))


def lora_parameters(w: Workload, s: Shape) -> float:
    """Trainable adapter parameters: rank x (d_in + d_out) per adapted matrix and layer."""
    lora = w.training.lora
    assert lora is not None
    per_matrix = lora.rank * 2.0 * s.hidden
    return per_matrix * LORA_MATRICES_PER_LAYER[lora.targets] * s.layers


def _mixed(w: Workload) -> bool:
    master = w.training.master_weights
    return master if master is not None else w.precision not in ("fp32", "tf32")


def state_bytes(w: Workload, s: Shape) -> StateBytes:
    """The training state of ``w`` (weights, gradients, optimizer), bytes for the model.

    Weights and gradients are 16-bit in mixed precision (fp8 training keeps 16-bit weights
    and casts in the GEMMs, as NVIDIA Transformer Engine does) and 32-bit otherwise."""
    if not w.training_job:
        return StateBytes(w.parameters * BYTES_PER_ELEMENT[w.precision], 0.0, 0.0, 0.0)
    el = 4.0 if w.precision in ("fp32", "tf32") else 2.0
    per_opt = OPTIMIZER_BYTES_PER_PARAMETER[w.training.optimizer] if w.model.optimizer_step else 0
    master = MASTER_WEIGHT_BYTES if _mixed(w) and w.model.optimizer_step else 0.0
    lora = w.training.lora
    if lora is None:
        trainable = w.parameters
        return StateBytes(trainable * el, trainable * el, trainable * (per_opt + master), trainable)
    trainable = lora_parameters(w, s)
    base_el = NF4_BYTES_PER_PARAMETER if lora.quantized_base else BYTES_PER_ELEMENT["bf16"]
    weights = w.parameters * base_el + trainable * el
    return StateBytes(weights, trainable * el, trainable * (per_opt + master), trainable)
