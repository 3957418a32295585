"""Device time of one step under a plan, vectorised over (candidate recipe x hardware) cells.

Per GPU a micro-step costs compute (FLOPs / achievable FLOP/s), memory traffic (bytes /
achievable bandwidth) and a small per-kernel cost; eager kernels run back to back, so these
add up (a per-kernel roofline). The host issues kernels in parallel with the device, so a
step is never shorter than its issue time. On top come, per optimizer step:

- recomputation: full checkpointing runs the forward again (+1 forward, i.e. 4/3 of the
  training FLOPs), selective checkpointing only the attention core (Korthikanti et al. 2022,
  section 5: 2.7 % overhead on GPT-3 scale models);
- tensor parallelism: two all-reduces of the layer's activations per layer in the forward
  and two in the backward (Shoeybi et al. 2019, "Megatron-LM", section 3), not overlapped;
- context parallelism (:mod:`.context_parallel`): each rank runs ``1 / cp`` of a sequence's
  tokens (FLOPs and activation traffic, not the weights) and sends K/V chunks around a ring,
  behind its attention compute where that is long enough;
- data parallelism: the gradient all-reduce once per optimizer step (gradient accumulation
  skips it on the other micro-steps), ``2 (n-1)/n`` times the gradient bytes per GPU for a
  ring (Patarasuk and Yuan 2009), partly hidden behind the backward pass (bucketed overlap);
  ZeRO-1/2 replace it by a reduce-scatter plus an all-gather of the same volume, ZeRO-3 adds
  the parameter all-gathers of every forward and backward, ``3 (n-1)/n`` in all
  (Rajbhandari et al. 2020, section 7);
- the optimizer update streams its state through memory once per step (or, offloaded, the
  gradients and weights cross PCIe and the update runs on the host's cores: ZeRO-Offload,
  Ren et al. 2021);
- float8 training runs the weight matrices at the fp8 rate but its attention at the 16-bit
  rate (``Cells.attention_flop_per_s``), and casts every linear layer's operands each step
  (``FP8_CAST_BYTES_PER_ELEMENT``).

An inference engine's build (``execution: engine``: TensorRT) streams each CNN activation
twice (``cnn_passes.engine``: batch norm folded, activation and residual add fused into the
convolution), keeps int8 / fp8 activations in 8 bits (``activation_element_bytes``) and moves
them from inside its compute-bound convolutions, so their traffic overlaps the compute
(``StepTime.overlap_s``); where a table has no ``engine`` entry the compiled one stands for
it (``by_execution``).

An attention kernel that materialises the score matrix (``attention: eager``) streams it
``attention_passes`` times per forward in either execution mode: a compiler fuses the
softmax, not the two GEMMs around it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.models.arch import GivenArch
from recommender.scoring.calibration import Calibration, by_execution
from recommender.scoring.context_parallel import Ring, ring_exposed_s, ring_kernels_per_forward
from recommender.scoring.memory import StateBytes
from recommender.scoring.shape import Shape
from recommender.workload import Workload

__all__ = ["Cells", "StepTime", "allreduce_latency_s", "step_time"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# Kernels launched per transformer layer in one forward pass (QKV, attention, projection,
# two norms, the MLP's matrices and activation, residual adds, dropout): eager PyTorch vs a
# compiled graph that fuses the element-wise kernels.
KERNELS_PER_TRANSFORMER_LAYER = {"eager": 22.0, "compiled": 8.0}
# Kernels of one eager forward pass of a CNN whose registry entry counts none: ResNet-50's
# 174 (benchmarks/data/cnn_kernels.py on timm's definition: 53 convolutions, 53 batch norms,
# 49 ReLUs, 16 residual adds, pooling and the classifier). Entries that count their own
# (``forward_kernels``) use it: SE-ResNeXt101 launches 542, EfficientNet-B4 475.
KERNELS_CNN_FORWARD = 174.0
KERNELS_GENERIC_FORWARD = 100.0
COMPILED_KERNEL_SHARE = 0.4  # a compiled CNN launches ~40 % of the eager kernels
# Eager mixed precision (torch.autocast, fp16 / bf16) adds a cast kernel per weighted layer
# each forward: autocast caches the lower-precision copies of fp32 weights only inside one
# autocast region and clears the cache on leaving the outermost one (pytorch
# aten/src/ATen/autocast_mode.cpp, cached_cast and clear_cache), so every step casts them
# again. ResNet-50 has 54 weighted layers (53 convolutions and the classifier) among its 174
# kernels (benchmarks/data/cnn_kernels.py); a compiled graph folds the casts.
AUTOCAST_CASTS_PER_CNN_KERNEL = 54.0 / 174.0
AUTOCAST_PRECISIONS = frozenset({"fp16", "bf16"})
# Activation elements per forward FLOP of a CNN that states none: ResNet-50 at 224 px writes
# 11.11 M activations for 8.22 GFLOPs (timm results CSV at aa4b5850, infer_macts and
# infer_gmacs x 2). Depthwise nets write several times more per FLOP (EfficientNet-B0:
# 6.75 M for 0.80 GFLOPs), so registry CNNs carry their own ``forward_activations``.
CNN_ACTIVATIONS_PER_FLOP = 11.11e6 / 8.22e9
# FLOPs per byte of activation traffic for a model with no shape, by family. Not sourced, and
# for a diffusion UNet known to be off: SDXL's count (benchmarks/data/diffusion_activations.py)
# is 1.78 G activation elements per 6.76 TFLOP evaluation, so even 10 passes of 2 bytes are
# a sixth of the 45 GB 150 FLOPs/byte gives, which makes SDXL bandwidth-bound. Counted
# (tried in stop 29 with cnn_passes), every MLPerf SDXL part becomes compute-bound, the H100
# and H200 agree as measured, but the prediction is 1.5-2.6x too fast: the fitted matrix
# efficiencies are those of LLM GEMMs and CNNs, and an fp8 UNet build reaches 24-33 % of fp8
# peak (its attention, norms and GEGLU at 16 bits); leave-one-source-out error without a
# baseline rose 40.8 -> 45.2 %. Tried again in stop 59 (the count as SDXL's registry
# ``forward_activations``): MLPerf held out 13.9 -> 21.2 % with a baseline, 16.5 -> 27.5 %
# without, its SDXL rows 1.97-2.17x too fast. Until a UNet's transformer blocks are modelled
# as transformers, the guess stays.
GENERIC_FLOPS_PER_BYTE = {"transformer": 200.0, "recsys": 20.0}
DEFAULT_FLOPS_PER_BYTE = 150.0
# float8 training with dynamic tensorwise scaling (torchao's Float8Linear, pytorch/ao
# torchao/float8/README.md) casts every linear layer's operands each step: the input and the
# output gradient each get an amax pass (read 2 B), a scaled cast (read 2 B, write 1 B) and,
# for the weight-gradient GEMM, a transposed fp8 copy (read 2 B, write 1 B): ~8 B of extra
# traffic per element entering or leaving a weight matrix (``Shape.linear_io_elements``).
FP8_CAST_BYTES_PER_ELEMENT = 8.0
# Adam's update reads weights, gradients and both moments and writes weights and moments:
# 7 fp32 streams per trainable parameter.
OPTIMIZER_TRAFFIC_BYTES_PER_PARAMETER = 28.0
# Latency of one small all-reduce inside a node over ``n`` ranks: NCCL's own tuning model
# (NVIDIA/nccl src/graph/tuning.cc, ring / LL protocol) is a base latency plus a per-hop one
# for each of the ring's 2 (n-1) steps: 3.6 us + 0.4 us a step over NVLink (9.2 us at 8
# ranks). Over PCIe its 1.0 us a step (17.6 us at 8) is below what nccl-tests measure through
# host memory: 42.6 us for 8 B on 8 x RTX 4090 (NVIDIA/nccl issue #1530; 54.2 us on 8 x RTX
# 3090 across two sockets, #1439), so the PCIe step is that 8-rank measurement spread over
# its 14 steps: 2.8 us (9.2 us at 2 ranks, 20 us at 4).
ALLREDUCE_BASE_LATENCY_S = 3.6e-6
ALLREDUCE_STEP_LATENCY_NVLINK_S = 0.4e-6
ALLREDUCE_PCIE_MEASURED_S, ALLREDUCE_PCIE_MEASURED_RANKS = 42.6e-6, 8
ALLREDUCE_STEP_LATENCY_PCIE_S = (ALLREDUCE_PCIE_MEASURED_S - ALLREDUCE_BASE_LATENCY_S) / (
    2.0 * (ALLREDUCE_PCIE_MEASURED_RANKS - 1)
)
# AMD's Infinity Fabric (xGMI) links, as rccl-tests measure them on 8 x MI300X
# (hisohara/ai-scripts@0780bb3c, training/01_rccl-smoketest/README.md, all_reduce_perf): 1-8 KB
# in 13.3-14.9 us (8 B in 17.2-19.3 us), against the 9.2 us NCCL's model gives NVLink at 8
# ranks; 13.6 us over the ring's 14 steps is 0.71 us a step.
ALLREDUCE_XGMI_MEASURED_S, ALLREDUCE_XGMI_MEASURED_RANKS = 13.6e-6, 8
ALLREDUCE_STEP_LATENCY_XGMI_S = (ALLREDUCE_XGMI_MEASURED_S - ALLREDUCE_BASE_LATENCY_S) / (
    2.0 * (ALLREDUCE_XGMI_MEASURED_RANKS - 1)
)


def allreduce_latency_s(ranks: npt.ArrayLike, step_s: npt.ArrayLike) -> FloatArray:
    """Seconds of latency of one small ring all-reduce over ``ranks`` GPUs of one node whose
    links take ``step_s`` a ring step (``hardware.allreduce_step_latency_s``)."""
    steps = 2.0 * np.maximum(np.asarray(ranks, dtype=np.float64) - 1.0, 0.0)
    return np.asarray(ALLREDUCE_BASE_LATENCY_S + steps * np.asarray(step_s, dtype=np.float64))


# Tensor-parallel all-reduces per layer: 2 in the forward, 2 in the backward (Megatron-LM).
TP_ALLREDUCES_FORWARD = 2.0
# DeepSpeed's CPU Adam updates ~1e8 parameters per second per core (AVX-512; Ren et al.
# 2021, ZeRO-Offload, section 5: "CPU-Adam" runs a 1 B-parameter step in ~1 s on ~10 cores).
CPU_ADAM_PARAMETERS_PER_S_PER_CORE = 1e8
HOST_CORES_FOR_OPTIMIZER = 8.0


@dataclass(frozen=True)
class Cells:
    """Hardware and recipe per cell (all arrays broadcast to one shape)."""

    flop_per_s: FloatArray  # achievable, at the precision used
    bytes_per_s: FloatArray  # achievable device-memory bandwidth
    link_bytes_per_s: FloatArray  # GPU <-> GPU per direction (all-reduce bus bandwidth)
    host_link_bytes_per_s: FloatArray
    allreduce_step_s: FloatArray  # latency of one small all-reduce ring step over the links
    fused_attention: BoolArray  # flash / memory-efficient kernel (no score matrix)
    attention_speed: FloatArray  # attention-kernel rate relative to FlashAttention
    attention_flop_per_s: FloatArray  # achievable rate of the attention matrices' precision
    fp8_linears: BoolArray  # training whose linear layers run in float8 (casts each step)
    tp: FloatArray
    dp: FloatArray  # ranks the gradients are reduced and sharded over (replicas x cp)
    stage: FloatArray  # ZeRO stage 0-3
    ckpt: FloatArray  # 0 none, 1 selective, 2 full
    offload: FloatArray
    micro_batch: FloatArray  # sequences, each split over ``ring.cp`` ranks
    accumulation: FloatArray
    ring: Ring | None = None  # context parallelism (None: one rank per sequence)

    @property
    def cp(self) -> FloatArray:
        return self.ring.cp if self.ring is not None else np.ones_like(self.tp)


@dataclass(frozen=True)
class StepTime:
    """Seconds per optimizer step (training) or per batch (inference), per GPU."""

    compute_s: FloatArray
    memory_s: FloatArray
    overlap_s: FloatArray  # memory time spent inside compute-bound fused kernels
    issue_s: FloatArray  # host kernel-issue time not hidden by the device
    tp_comm_s: FloatArray
    cp_comm_s: FloatArray  # context-parallel K/V sends not hidden behind attention
    dp_comm_s: FloatArray  # exposed data-parallel communication
    optimizer_s: FloatArray
    recompute_flops_share: FloatArray  # extra FLOPs of recomputation / model FLOPs

    @property
    def busy_s(self) -> FloatArray:
        """Compute and memory time, the traffic hidden inside compute counted once."""
        return np.asarray(self.compute_s + self.memory_s - self.overlap_s)

    @property
    def device_s(self) -> FloatArray:
        return np.asarray(
            self.busy_s + self.issue_s + self.tp_comm_s + self.cp_comm_s + self.optimizer_s
        )

    @property
    def total_s(self) -> FloatArray:
        return np.asarray(self.device_s + self.dp_comm_s)


def _kernels_per_forward(w: Workload, s: Shape) -> float:
    mode = w.model.execution
    if w.model.kernels_per_forward is not None:
        return float(w.model.kernels_per_forward)
    if s.transformer:
        return s.layers * by_execution(KERNELS_PER_TRANSFORMER_LAYER, mode) + 10.0
    if w.model.resolved_family == "cnn":
        arch = w.model.architecture
        given = arch.forward_kernels if isinstance(arch, GivenArch) else None
        eager = float(given) if given is not None else KERNELS_CNN_FORWARD
        if mode != "eager":
            return eager * COMPILED_KERNEL_SHARE
        autocast = w.precision in AUTOCAST_PRECISIONS
        return eager * (1.0 + (AUTOCAST_CASTS_PER_CNN_KERNEL if autocast else 0.0))
    return KERNELS_GENERIC_FORWARD


def activation_traffic_bytes(
    w: Workload, s: Shape, cal: Calibration, fused: BoolArray, el: float
) -> FloatArray:
    """Bytes of element-wise activation traffic per sample for one forward pass: a
    transformer's from its shape; a model whose registry entry counts its activation elements
    (``forward_activations``, timm's infer_macts: the CNNs, and Swin, whose windowed attention
    no transformer shape describes; ``traffic_activations`` instead where a net's element-wise
    chain is not a ResNet's, its ResNet-equivalent count, benchmarks/data/cnn_traffic.py)
    streams them ``cnn_passes`` times, and a CNN with no count ``CNN_ACTIVATIONS_PER_FLOP`` of
    them; any other model ``GENERIC_FLOPS_PER_BYTE``. Swin by that flat guess (150 FLOPs a byte)
    streamed a third of its infer_macts traffic, and timm's Swin-B rows ran 0.75-1.85x too
    fast; counted, 0.61-0.92x, as its CNNs on the same cards, and 0.68-1.12x since its count
    is its own chain's."""
    mode = w.model.execution
    if w.model.memory_bytes_per_sample is not None:
        flat = w.model.memory_bytes_per_sample / (3.0 if w.training_job else 1.0)
        return np.full(fused.shape, flat)
    if s.transformer:
        elementwise = s.layers * s.tokens * s.hidden * by_execution(cal.transformer_passes, mode)
        scores = s.layers * s.heads * s.tokens**2 * by_execution(cal.attention_passes, mode)
        elementwise, scores = elementwise * el, scores * el
        return np.asarray(elementwise + np.where(fused, 0.0, scores))
    forward = s.matmul_flops
    arch = w.model.architecture
    given = None
    if isinstance(arch, GivenArch):
        given = arch.traffic_activations or arch.forward_activations
    if w.model.resolved_family == "cnn" or given is not None:
        elements = given if given is not None else forward * CNN_ACTIVATIONS_PER_FLOP
        if w.model.activation_bytes_per_sample is not None:
            elements = w.model.activation_bytes_per_sample / el
        return np.full(fused.shape, by_execution(cal.cnn_passes, mode) * elements * el)
    per_byte = GENERIC_FLOPS_PER_BYTE.get(w.model.resolved_family, DEFAULT_FLOPS_PER_BYTE)
    return np.full(fused.shape, forward / per_byte)


def _ring(n: FloatArray) -> FloatArray:
    return np.asarray(np.where(n > 1, (n - 1) / np.maximum(n, 1.0), 0.0))


def _compute(
    w: Workload, s: Shape, c: Cells, cal: Calibration
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(compute seconds per micro-step per GPU, recompute FLOPs share, the attention's part
    of those seconds)."""
    passes = w.training_flops_factor if w.training_job else 1.0
    attention = s.attention_flops * np.where(c.fused_attention & s.causal, 0.5, 1.0)
    recompute = np.where(c.ckpt >= 2, s.matmul_flops + attention, 0.0)
    recompute = recompute + np.where(c.ckpt == 1, attention, 0.0)
    dense = s.matmul_flops * passes + np.where(c.ckpt >= 2, s.matmul_flops, 0.0)
    attn_total = attention * passes + np.where(c.ckpt >= 1, attention, 0.0)
    attention_rate = c.attention_flop_per_s * cal.attention_gemm_efficiency * c.attention_speed
    split = c.micro_batch / (c.tp * c.cp)
    attention_s = split * attn_total / attention_rate
    seconds = split * dense / c.flop_per_s + attention_s
    model = (s.matmul_flops + s.attention_flops) * passes
    return np.asarray(seconds), np.asarray(recompute / model), np.asarray(attention_s)


def step_time(
    w: Workload, s: Shape, state: StateBytes, c: Cells, cal: Calibration, el: float
) -> StepTime:
    """Device time per optimizer step (training) or per batch (inference), per GPU."""
    training = w.training_job
    passes = 3.0 if training else 1.0
    compute_micro, recompute_share, attention_micro = _compute(w, s, c, cal)
    recompute_passes = passes + np.where(c.ckpt >= 2, 1.0, 0.0)
    traffic = activation_traffic_bytes(w, s, cal, c.fused_attention, el) * recompute_passes
    weight_reads = passes if training else 1.0
    casts = np.where(c.fp8_linears, s.linear_io_elements * FP8_CAST_BYTES_PER_ELEMENT, 0.0)
    traffic = traffic + casts
    activations = c.micro_batch * traffic / c.cp
    memory_micro = (activations + weight_reads * state.weights) / c.bytes_per_s / c.tp
    kernels = (_kernels_per_forward(w, s) + ring_kernels_per_forward(s, c.cp)) * recompute_passes
    gpu_kernels = kernels * cal.kernel_gpu_s
    compute_micro = compute_micro + gpu_kernels
    overlap_micro = np.zeros_like(memory_micro)
    if _fused_kernels_stream_their_operands(w, s):
        overlap_micro = np.minimum(memory_micro, compute_micro)
    host = kernels * by_execution(cal.kernel_cpu_s, w.model.execution)
    busy_micro = compute_micro + memory_micro - overlap_micro
    issue_micro = np.maximum(host - busy_micro, 0.0)
    tp_passes = 2.0 + np.where(c.ckpt >= 2, 1.0, 0.0) if training else np.ones_like(c.tp)
    tp_comm_micro = _tp_comm(s, c, el, np.asarray(tp_passes))
    cp_comm_micro = np.zeros_like(c.tp)
    if c.ring is not None:
        repeats = np.where(c.ckpt >= 1, 1.0, 0.0)  # selective and full both redo attention
        cp_comm_micro = ring_exposed_s(s, c.ring, c.micro_batch, c.tp, repeats, attention_micro, el)
    acc = c.accumulation
    optimizer = _optimizer(w, state, c) if training else np.zeros_like(c.tp)
    dp_comm = _dp_comm(state, c, busy_micro * 2.0 / 3.0, cal)
    dp_comm = dp_comm if training else np.zeros_like(c.tp)
    return StepTime(
        compute_s=np.asarray(acc * compute_micro),
        memory_s=np.asarray(acc * memory_micro),
        overlap_s=np.asarray(acc * overlap_micro),
        issue_s=np.asarray(acc * issue_micro),
        tp_comm_s=np.asarray(acc * tp_comm_micro),
        cp_comm_s=np.asarray(acc * cp_comm_micro),
        dp_comm_s=np.asarray(dp_comm),
        optimizer_s=np.asarray(optimizer),
        recompute_flops_share=np.asarray(recompute_share * (c.ckpt > 0)),
    )


def _fused_kernels_stream_their_operands(w: Workload, s: Shape) -> bool:
    """An engine's build of a network of convolutions (TensorRT: no separate element-wise
    kernels left, each convolution with its fused epilogue) loads and stores its activations
    from inside the kernel while the matrix units run (implicit GEMM with multi-stage
    asynchronous copies: NVIDIA CUTLASS, "Efficient GEMM in CUDA", software pipelining), so a
    kernel takes the larger of its compute and memory times, not their sum (the per-kernel
    roofline, Williams et al. 2009). Summed over the network this is ``max(compute, memory)``,
    the bound the sum is the other side of. Transformers keep the sum: attention, norms and
    the serving step stay separate kernels. A diffusion UNet's engine build (convolutions with
    attention blocks between them) is treated as a CNN: restricting the overlap to CNNs
    measured worse (leave-one-source-out inference 27.5 -> 28.7 %)."""
    return w.model.execution == "engine" and not s.transformer


def _tp_comm(s: Shape, c: Cells, el: float, passes: FloatArray) -> FloatArray:
    """Tensor-parallel all-reduces of one micro-step: two per layer and pass (forward,
    backward, and the forward that full recomputation repeats)."""
    latency = allreduce_latency_s(c.tp, c.allreduce_step_s)
    message = c.micro_batch * s.tokens / c.cp * s.hidden * el
    per_allreduce = latency + 2.0 * _ring(c.tp) * message / c.link_bytes_per_s
    count = TP_ALLREDUCES_FORWARD * s.layers * passes
    return np.asarray(np.where(c.tp > 1, count * per_allreduce, 0.0))


def _dp_comm(state: StateBytes, c: Cells, backward_s: FloatArray, cal: Calibration) -> FloatArray:
    """Data-parallel communication per optimizer step not hidden behind the backward."""
    gradient_bytes = state.gradients / c.tp
    reduce = 2.0 * _ring(c.dp) * gradient_bytes / c.link_bytes_per_s
    gathers = np.where(c.stage >= 3, 2.0 * _ring(c.dp) * state.weights / c.tp, 0.0)
    gathers = gathers * c.accumulation / c.link_bytes_per_s
    hidden = cal.comm_overlap * backward_s * np.where(c.stage >= 3, c.accumulation, 1.0)
    return np.asarray(np.maximum(reduce + gathers - hidden, 0.0))


def _optimizer(w: Workload, state: StateBytes, c: Cells) -> FloatArray:
    """The optimizer update per step: on the device, or offloaded to the host."""
    if not w.model.optimizer_step:
        return np.zeros_like(c.tp)
    shard = c.tp * np.where(c.stage >= 1, c.dp, 1.0)
    trainable = state.trainable / shard
    on_device = trainable * OPTIMIZER_TRAFFIC_BYTES_PER_PARAMETER / c.bytes_per_s
    transfer = 2.0 * state.gradients / shard / c.host_link_bytes_per_s  # grads out, weights in
    host = trainable / (CPU_ADAM_PARAMETERS_PER_S_PER_CORE * HOST_CORES_FOR_OPTIMIZER)
    return np.asarray(np.where(c.offload > 0, transfer + host, on_device))
