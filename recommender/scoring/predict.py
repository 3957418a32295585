"""The vectorised predictor: one workload on many (accelerator x count x host) rows at once.

Per GPU, a step costs compute (FLOPs / achievable FLOP/s), memory traffic (bytes /
achievable bandwidth) and a small per-kernel cost; eager kernels run back to back, so these
add up (a per-kernel roofline). The host issues kernels in parallel with the device, so a
step is never shorter than the host's issue time. Multi-GPU rows add exposed gradient
all-reduce (training) or tensor-parallel all-reduces (inference too big for one GPU). The
input pipeline and the host-to-device copy run alongside; the slowest stage sets the step.

``scale`` is the baseline calibration: measured / modelled device time on the baseline
accelerator, applied to the device time of every row (Habitat-style scaling: the measured
time is split by the model into compute and memory parts, each scaled by its own ratio).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.scoring.calibration import Calibration
from recommender.scoring.demand import BYTES_PER_ELEMENT, Demand, estimated_shape
from recommender.scoring.hardware import Capabilities
from recommender.scoring.memory import Footprint, usable_bytes
from recommender.scoring.pipeline import input_seconds
from recommender.scoring.scaling import exposed_comm, tensor_parallel_comm
from recommender.workload import Workload

__all__ = ["BOTTLENECKS", "Predictions", "Rows", "predict_rows"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

BOTTLENECKS = ("compute", "memory-bandwidth", "host-transfer", "input-pipeline", "interconnect")


@dataclass(frozen=True)
class Rows:
    """The hardware rows to predict on (offers, or a single accelerator x count)."""

    acc: npt.NDArray[np.int32]  # index into the Capabilities arrays
    gpus: FloatArray
    vcpus: FloatArray
    local_disk_gb: FloatArray


@dataclass(frozen=True)
class Predictions:
    throughput: FloatArray  # samples (training) or requests (inference) per s, per instance
    step_s: FloatArray
    device_s: FloatArray  # the step as the devices alone would set it
    compute_s: FloatArray
    memory_s: FloatArray
    host_transfer_s: FloatArray
    input_s: FloatArray
    interconnect_s: FloatArray
    utilization: FloatArray
    bottleneck: npt.NDArray[np.int64]  # index into BOTTLENECKS
    fits: BoolArray
    shards: FloatArray  # GPUs one model copy spans (1: data parallel / replicas)
    need_bytes: FloatArray  # per GPU at that sharding
    scaling_efficiency: FloatArray
    tokens_per_s: FloatArray | None
    latency_s: FloatArray | None


def _shards(w: Workload, fp: Footprint, room: FloatArray, gpus: FloatArray) -> FloatArray:
    """GPUs per model copy: 1 when it fits, else the fewest (power of two) that hold it.

    Training shards with FSDP over the whole instance; inference with tensor parallelism
    over the fewest GPUs that hold the weights (the rest serve as more replicas).
    """
    shards = np.ones_like(gpus)
    if w.kind == "training":
        sharded_fits = fp.shardable / gpus + fp.activations <= room
        return np.where((fp.per_gpu(1) > room) & sharded_fits & (gpus > 1), gpus, shards)
    for n in (16.0, 8.0, 4.0, 2.0):  # descending: the last that fits is the fewest
        fits_n = (fp.shardable / n + fp.activations <= room) & (gpus >= n)
        shards = np.where((fp.per_gpu(1) > room) & fits_n, n, shards)
    return shards


def _device_time(
    w: Workload, d: Demand, caps: Capabilities, r: Rows, shards: FloatArray, cal: Calibration
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(compute, memory, kernel-issue, tensor-parallel comm) seconds per step per GPU."""
    flops, bw = caps.flops[r.acc], caps.bandwidth[r.acc]
    tp = np.where(w.kind == "training", 1.0, shards)
    b = float(d.batch)
    dense = d.flops - d.attention_flops
    attention_rate = flops * cal.attention_gemm_efficiency
    compute = b * (dense / flops + d.attention_flops / attention_rate) / tp
    fsdp = np.where(w.kind == "training", shards, 1.0)
    weights = d.weight_bytes_per_step + d.optimizer_bytes_per_step / fsdp
    memory = (b * d.memory_bytes + weights) / bw / tp
    if d.is_llm:
        steps = float(d.decode_steps)
        compute = compute + steps * b * d.decode_flops_per_step / flops / tp
        memory = memory + steps * (d.weight_bytes_per_step + b * d.decode_bytes_per_step) / bw / tp
    issue_steps = 1.0 + float(d.decode_steps)
    kernels = d.kernels_per_step * issue_steps
    gpu_k = kernels * cal.kernel_gpu_s
    host = kernels * cal.kernel_cpu_s[w.model.execution]
    compute = compute + gpu_k
    issue = np.maximum(host - compute - memory, 0.0)  # host-bound launch gap
    layers = _layers(w)
    act = b * _hidden(w) * BYTES_PER_ELEMENT[w.precision]
    tp_comm = tensor_parallel_comm(
        tp, layers * issue_steps, act, caps.interconnect[r.acc], caps.has_nvlink[r.acc]
    )
    return compute, memory, issue, tp_comm


def _layers(w: Workload) -> float:
    arch = w.model.architecture
    if arch is not None:
        return float(arch.layers * arch.stacks)
    return estimated_shape(w.parameters)[0]


def _hidden(w: Workload) -> float:
    arch = w.model.architecture
    if arch is not None:
        return float(arch.hidden_size * (arch.sequence_length if w.inference is None else 1))
    return estimated_shape(w.parameters)[1]


def predict_rows(
    w: Workload,
    d: Demand,
    fp: Footprint,
    caps: Capabilities,
    r: Rows,
    cal: Calibration,
    scale: float = 1.0,
) -> Predictions:
    room = usable_bytes(caps.memory_gb[r.acc])
    shards = _shards(w, fp, room, r.gpus)
    need = fp.shardable / shards + fp.activations
    fits = need <= room
    compute, memory, issue, tp_comm = _device_time(w, d, caps, r, shards, cal)
    compute, memory, issue, tp_comm = (x * scale for x in (compute, memory, issue, tp_comm))
    device = compute + memory + issue + tp_comm
    if d.training:
        comm = exposed_comm(
            r.gpus,
            shards,
            d.gradient_bytes,
            caps.interconnect[r.acc],
            device * 2.0 / 3.0,
            cal.comm_overlap,
        )
        samples = float(d.batch) * r.gpus
        step_device = device + comm
    else:
        comm = tp_comm
        samples = float(d.batch) * np.floor(r.gpus / shards)
        step_device = device
    inputs = input_seconds(w.data, samples, r.vcpus, r.gpus, r.local_disk_gb)
    h2d = np.full_like(step_device, float(d.batch) * d.device_bytes) / caps.host_link[r.acc]
    step = np.maximum.reduce([step_device, inputs, h2d])
    stages = np.stack([compute + issue, memory, comm])
    device_stage = np.array([0, 1, 4])[np.argmax(stages, axis=0)]
    bottleneck = np.select([inputs >= step, h2d >= step], [3, 2], default=device_stage)
    scaling = np.where(step_device > 0, (step_device - comm) / step_device, 1.0)
    tokens = latency = None
    if d.is_llm:
        tokens = samples * float(d.decode_steps) / step
        latency = step_device
    elif not d.training:
        latency = step_device
    return Predictions(
        throughput=samples / step,
        step_s=step,
        device_s=step_device,
        compute_s=compute + issue,
        memory_s=memory,
        host_transfer_s=h2d,
        input_s=inputs,
        interconnect_s=comm,
        utilization=np.clip((compute + memory) / step, 0.0, 1.0),
        bottleneck=bottleneck.astype(np.int64),
        fits=fits,
        shards=shards,
        need_bytes=need,
        scaling_efficiency=np.clip(scaling, 0.0, 1.0),
        tokens_per_s=tokens,
        latency_s=latency,
    )
