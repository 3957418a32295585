"""What a workload asks of the hardware, per sample: FLOPs, memory traffic, kernels, data.

Everything here depends on the workload and the calibration constants only (not on any
accelerator), so it is computed once per request and then applied to every offer at once.

Memory traffic follows the per-kernel roofline view of eager PyTorch: GEMMs are bounded by
FLOP/s, while the element-wise kernels around them (normalisation, activation, residual adds,
softmax over the attention scores) stream activations through device memory. Their time adds
up because eager kernels run one after another. ``execution: compiled`` fuses most of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recommender.scoring.calibration import Calibration
from recommender.workload import Workload

__all__ = [
    "BYTES_PER_ELEMENT",
    "Demand",
    "demand_of",
    "estimated_shape",
    "kv_bytes_per_token",
]

BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
}
# ResNet-50 at 224 px: ~22 M activation elements for 4.1 GFLOPs forward (He et al. 2016,
# torchvision's feature-map sizes); used when a CNN gives no activation size.
CNN_ACTIVATIONS_PER_FLOP = 22e6 / 4.1e9
# A model with no shape: FLOPs per byte of activation traffic by family. A transformer's
# eager layer (BERT-Large at 512 tokens) moves ~1.9 GB for 3.7e11 FLOPs (~200 FLOP/B);
# recommenders are dominated by embedding lookups (low intensity).
GENERIC_FLOPS_PER_BYTE = {"transformer": 200.0, "recsys": 20.0, "other": 150.0, "cnn": 150.0}
# Kernels launched per forward pass, when nothing better is known.
KERNELS_PER_TRANSFORMER_LAYER = {"eager": 22, "compiled": 8}
KERNELS_CNN_FORWARD = 230  # ResNet-50 in eager PyTorch (conv + bn + relu + adds)
KERNELS_GENERIC_FORWARD = 100


@dataclass(frozen=True, slots=True)
class Demand:
    """Per-sample (one training sample, or one inference request) hardware demand."""

    flops: float  # FLOPs per sample
    attention_flops: float  # the part of ``flops`` in attention's batched small GEMMs
    memory_bytes: float  # device-memory traffic per sample, activations only
    weight_bytes_per_step: float  # weight and gradient traffic per step (per GPU)
    optimizer_bytes_per_step: float  # optimizer update traffic per step (sharded by FSDP)
    kernels_per_step: float  # kernels launched per step
    batch: int  # samples per step per GPU
    gradient_bytes: float  # bytes all-reduced per step in data parallel (0 for inference)
    input_bytes: float  # bytes read from storage per sample
    device_bytes: float  # bytes copied host -> device per sample
    decode_cpu_s: float  # CPU-seconds of decode per sample
    training: bool
    # LLM serving: a request is prefill + output_tokens decode steps of the whole batch.
    decode_steps: int = 0
    decode_flops_per_step: float = 0.0
    decode_bytes_per_step: float = 0.0

    @property
    def is_llm(self) -> bool:
        return self.decode_steps > 0


def _activation_traffic(w: Workload, cal: Calibration) -> float:
    """Bytes of activation traffic per sample for one forward pass."""
    bytes_el = BYTES_PER_ELEMENT[w.precision]
    mode = w.model.execution
    if w.model.memory_bytes_per_sample is not None:
        return w.model.memory_bytes_per_sample / (3.0 if w.kind == "training" else 1.0)
    arch = w.model.architecture
    if arch is not None:
        layers = arch.layers * arch.stacks
        heads = arch.heads or max(1, arch.hidden_size // 64)
        elementwise = layers * arch.sequence_length * arch.hidden_size
        scores = layers * heads * arch.sequence_length**2
        passes = cal.transformer_passes[mode]
        return (passes * elementwise + cal.attention_passes[mode] * scores) * bytes_el
    forward_flops = w.flops_per_sample / (3.0 if w.kind == "training" else 1.0)
    if w.model.resolved_family == "cnn":
        if w.model.activation_bytes_per_sample is not None:
            elements = w.model.activation_bytes_per_sample / bytes_el
        else:
            elements = forward_flops * CNN_ACTIVATIONS_PER_FLOP
        return cal.cnn_passes[mode] * elements * bytes_el
    return forward_flops / GENERIC_FLOPS_PER_BYTE[w.model.resolved_family]


def _kernels_per_forward(w: Workload) -> float:
    mode = w.model.execution
    if w.model.kernels_per_forward is not None:
        return float(w.model.kernels_per_forward)
    arch = w.model.architecture
    if arch is not None:
        layers = arch.layers * arch.stacks
        return float(layers * KERNELS_PER_TRANSFORMER_LAYER[mode] + 10)
    if w.model.resolved_family == "cnn":
        return KERNELS_CNN_FORWARD * (1.0 if mode == "eager" else 0.4)
    return float(KERNELS_GENERIC_FORWARD)


def _weight_traffic(w: Workload) -> tuple[float, float]:
    """(weight and gradient, optimizer) bytes of traffic per step on one GPU."""
    params = w.parameters
    wbytes = params * BYTES_PER_ELEMENT[w.precision]
    if w.kind != "training":
        return wbytes, 0.0
    # forward read + backward read + gradient write/accumulate; optimizer (Adam, fp32 master
    # weights and two moments: read p, g, m, v and write p, m, v) when the step includes one.
    optimizer = params * 4.0 * 7 if w.model.optimizer_step else 0.0
    return 3.0 * wbytes, optimizer


def estimated_shape(parameters: float) -> tuple[float, float]:
    """(layers, d_model) of a decoder with ``parameters`` and no given shape: layers ~
    (N / 1.2e7)^(1/3) and N ~ 12 L d^2 (GQA-free, d_ff = 4 d)."""
    layers = max(1.0, float(round((parameters / 1.2e7) ** (1 / 3))))
    return layers, math.sqrt(parameters / (12 * layers))


def kv_bytes_per_token(w: Workload) -> float:
    """Bytes of K and V cached per token of one sequence."""
    arch = w.model.architecture
    if arch is not None:
        layers, d_model = float(arch.layers), float(arch.hidden_size)
    else:
        layers, d_model = estimated_shape(w.parameters)
    return 2.0 * layers * d_model * BYTES_PER_ELEMENT[w.precision]


def _llm_decode(w: Workload) -> tuple[int, float, float]:
    """(decode steps per request, FLOPs per decode step per sequence, bytes per step)."""
    spec = w.inference
    assert spec is not None
    context = spec.prompt_tokens + spec.output_tokens / 2
    return spec.output_tokens, 2.0 * w.parameters, kv_bytes_per_token(w) * context


def demand_of(w: Workload, cal: Calibration) -> Demand:
    """The per-sample demand of ``w`` under calibration ``cal``."""
    training = w.kind == "training"
    passes_mult = 3.0 if training else 1.0
    flops = w.flops_per_sample
    activation = _activation_traffic(w, cal) * passes_mult
    kernels = _kernels_per_forward(w) * passes_mult
    grad_bytes = w.parameters * BYTES_PER_ELEMENT[w.precision] if training else 0.0
    device_bytes = (
        w.data.device_bytes_per_sample
        if w.data.device_bytes_per_sample is not None
        else w.data.bytes_per_sample
    )
    arch = w.model.architecture
    attention = 0.0
    if arch is not None and w.model.flops_per_sample is None:
        attention = arch.attention_flops_per_token() * arch.sequence_length * passes_mult
    weights, optimizer = _weight_traffic(w)
    base = Demand(
        flops=flops,
        attention_flops=attention,
        memory_bytes=activation,
        weight_bytes_per_step=weights,
        optimizer_bytes_per_step=optimizer,
        kernels_per_step=kernels,
        batch=w.batch_size,
        gradient_bytes=grad_bytes,
        input_bytes=w.data.bytes_per_sample,
        device_bytes=device_bytes,
        decode_cpu_s=w.data.decode_cpu_seconds_per_sample,
        training=training,
    )
    if not w.is_llm_serving:
        return base
    steps, flops_tok, kv = _llm_decode(w)
    spec = w.inference
    assert spec is not None
    # Prefill: one forward over the prompt (compute-bound), counted as the sample's FLOPs.
    prefill_flops = 2.0 * w.parameters * spec.prompt_tokens
    return Demand(
        flops=prefill_flops,
        attention_flops=0.0,
        memory_bytes=0.0,
        weight_bytes_per_step=w.parameters * BYTES_PER_ELEMENT[w.precision],
        optimizer_bytes_per_step=0.0,
        kernels_per_step=kernels,
        batch=w.batch_size,
        gradient_bytes=0.0,
        input_bytes=base.input_bytes,
        device_bytes=base.device_bytes,
        decode_cpu_s=base.decode_cpu_s,
        training=False,
        decode_steps=steps,
        decode_flops_per_step=flops_tok,
        decode_bytes_per_step=kv,
    )
