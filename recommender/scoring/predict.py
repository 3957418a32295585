"""The vectorised predictor: one workload on many (accelerator x count x host) rows at once.

Rows that share an accelerator and a GPU count share a plan (:mod:`.plan` for training and
batched inference, :mod:`.serving` for LLM serving), so the planner runs once per distinct
configuration and its device time is gathered onto every row. Each row then adds what its
host sets: the input pipeline (storage read, CPU decode) and the host-to-device copy, which
run alongside the device with prefetching; the slowest stage sets the step.

``scale`` is the baseline calibration: measured / modelled device time on the baseline
accelerator, as each row's accelerator takes it (``Calibrated.scale_at``), applied to the
device time of every row (Habitat-style scaling, to the power ``transfer`` gives each part).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator
from recommender.scoring.calibration import Calibration
from recommender.scoring.hardware import Capabilities
from recommender.scoring.memory import StateBytes
from recommender.scoring.pipeline import input_seconds
from recommender.scoring.plan import Hardware, Plans, plan_batched
from recommender.scoring.serving import Serving, plan_serving
from recommender.scoring.shape import Shape, activation_element_bytes
from recommender.workload import Workload

if TYPE_CHECKING:
    from recommender.scoring.clusters import Cluster

__all__ = ["BOTTLENECKS", "Bottleneck", "Predictions", "Rows", "predict_rows"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


class Bottleneck(StrEnum):
    """What bounds a step (the public ``predicted.bottleneck`` values)."""

    COMPUTE = "compute"
    MEMORY_BANDWIDTH = "memory-bandwidth"
    HOST_TRANSFER = "host-transfer"
    INPUT_PIPELINE = "input-pipeline"
    INTERCONNECT = "interconnect"


BOTTLENECKS = tuple(b.value for b in Bottleneck)
_COMPUTE, _MEMORY, _HOST, _INPUT, _LINK = range(5)
# Most GPUs of one kind per instance; a configuration key packs (accelerator, GPUs).
_GPU_KEY = 1024
# Host memory an offloaded optimizer may take (the rest runs the data loader and the OS).
HOST_MEMORY_FOR_OFFLOAD = 0.8
GIB = float(2**30)


@dataclass(frozen=True)
class Rows:
    """The hardware rows to predict on (offers, or a single accelerator x count)."""

    acc: npt.NDArray[np.int32]  # index into the Capabilities arrays
    gpus: FloatArray
    vcpus: FloatArray
    local_disk_gb: FloatArray
    host_memory_gib: FloatArray | None = None  # None: the host is not the limit


@dataclass(frozen=True)
class Predictions:
    throughput: FloatArray  # samples (training) or requests (inference) per s, per instance
    device_throughput: FloatArray  # the same if the host fed the devices at no cost
    step_s: FloatArray
    device_s: FloatArray  # the step as the devices alone would set it
    compute_s: FloatArray
    memory_s: FloatArray
    host_transfer_s: FloatArray
    input_s: FloatArray
    interconnect_s: FloatArray
    utilization: FloatArray
    bottleneck: IntArray  # index into BOTTLENECKS
    fits: BoolArray
    shards: FloatArray  # GPUs one model copy spans (tensor x pipeline x context x ZeRO-3)
    need_bytes: FloatArray  # per GPU under the plan
    scaling_efficiency: FloatArray
    tokens_per_s: FloatArray | None
    latency_s: FloatArray | None
    config: IntArray  # index of the row's configuration in ``plans`` / ``serving``
    plans: Plans | None
    serving: Serving | None
    cluster: Cluster | None = None  # multi-node layouts per row (recommend, predict --nodes)
    # LLM serving: whether the row's plan meets ttft_ms / tpot_ms (None: no such targets)
    meets_targets: BoolArray | None = None


def _factorize(keys: IntArray) -> tuple[IntArray, IntArray]:
    """``np.unique(keys, return_inverse=True)`` for small non-negative keys, by a presence
    table instead of a sort (the keys of the catalog's configurations stay below ~10^5)."""
    if len(keys) == 0:
        return keys, keys
    present = np.zeros(int(keys.max()) + 1, dtype=bool)
    present[keys] = True
    unique = np.flatnonzero(present)
    slot = np.cumsum(present) - 1  # slot[k]: the position of key k in ``unique``
    return unique, slot[keys]


def _hardware(r: Rows) -> tuple[Hardware, IntArray]:
    keys = r.acc.astype(np.int64) * _GPU_KEY + r.gpus.astype(np.int64)
    unique, inverse = _factorize(keys)
    hw = Hardware(
        acc=(unique // _GPU_KEY).astype(np.int32), gpus=(unique % _GPU_KEY).astype(np.float64)
    )
    return hw, inverse.astype(np.int64)


def _host_side(
    w: Workload, caps: Capabilities, r: Rows, samples: FloatArray, batch_per_gpu: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(input-pipeline seconds, host-to-device seconds) per step of each row."""
    inputs = input_seconds(w.data, samples, r.vcpus, r.gpus, r.local_disk_gb)
    device_bytes = (
        w.data.device_bytes_per_sample
        if w.data.device_bytes_per_sample is not None
        else w.data.bytes_per_sample
    )
    h2d = batch_per_gpu * device_bytes / caps.host_link[r.acc]
    return inputs, np.asarray(h2d)


def _combine(
    step_device: FloatArray,
    compute: FloatArray,
    memory: FloatArray,
    overlap: FloatArray,
    comm: FloatArray,
    inputs: FloatArray,
    h2d: FloatArray,
) -> tuple[FloatArray, IntArray, FloatArray]:
    """(step seconds, bottleneck index, utilisation) of each row; ``overlap`` is memory time
    spent inside compute (counted once in the utilisation)."""
    step = np.maximum.reduce([step_device, inputs, h2d])
    stages = np.stack([compute, memory, comm])
    device_stage = np.array([_COMPUTE, _MEMORY, _LINK])[np.argmax(stages, axis=0)]
    bottleneck = np.select([inputs >= step, h2d >= step], [_INPUT, _HOST], default=device_stage)
    with np.errstate(divide="ignore", invalid="ignore"):
        utilization = np.clip((compute + memory - overlap) / step, 0.0, 1.0)
    return step, bottleneck.astype(np.int64), np.nan_to_num(utilization)


def _batched(
    w: Workload,
    s: Shape,
    state: StateBytes,
    caps: Capabilities,
    r: Rows,
    cal: Calibration,
    scale: FloatArray | float,
) -> Predictions:
    hw, cfg = _hardware(r)
    el = activation_element_bytes(w.precision, w.model.execution)
    plans = plan_batched(w, s, state, caps, hw, cal, el)
    t = plans.time
    compute = (t.compute_s + t.issue_s + t.optimizer_s)[cfg] * scale
    memory = t.memory_s[cfg] * scale
    overlap = t.overlap_s[cfg] * scale
    comm = (t.tp_comm_s + t.cp_comm_s + t.dp_comm_s)[cfg] * scale
    step_device = t.total_s[cfg] * scale
    samples = plans.samples_per_step[cfg]
    batch_per_gpu = samples / r.gpus
    inputs, h2d = _host_side(w, caps, r, samples, batch_per_gpu)
    step, bottleneck, util = _combine(step_device, compute, memory, overlap, comm, inputs, h2d)
    with np.errstate(divide="ignore", invalid="ignore"):
        efficiency = np.where(step_device > 0, (step_device - comm) / step_device, 1.0)
    sharded = np.where(plans.stage >= 3, plans.dp, 1.0) * plans.tp * plans.cp
    latency = None if w.training_job else step_device
    fits = plans.fits[cfg]
    if r.host_memory_gib is not None:  # an offloaded optimizer lives in host memory
        copies = np.where(plans.stage >= 1, 1.0, plans.dp * plans.cp)[cfg]
        host_need = np.where(plans.offload[cfg], state.optimizer * copies, 0.0)
        fits = fits & (host_need <= r.host_memory_gib * GIB * HOST_MEMORY_FOR_OFFLOAD)
    return Predictions(
        throughput=samples / step,
        device_throughput=samples / step_device,
        step_s=step,
        device_s=step_device,
        compute_s=compute,
        memory_s=memory,
        host_transfer_s=h2d,
        input_s=inputs,
        interconnect_s=comm,
        utilization=util,
        bottleneck=bottleneck,
        fits=fits,
        shards=sharded[cfg],
        need_bytes=plans.need_bytes[cfg],
        scaling_efficiency=np.clip(efficiency, 0.0, 1.0),
        tokens_per_s=None,
        latency_s=latency,
        config=cfg,
        plans=plans,
        serving=None,
    )


def _llm(
    w: Workload,
    s: Shape,
    caps: Capabilities,
    accs: list[Accelerator],
    r: Rows,
    cal: Calibration,
    scale: FloatArray | float,
) -> Predictions:
    hw, cfg = _hardware(r)
    sv = plan_serving(w, s, caps, accs, hw, cal)
    spec = w.inference
    assert spec is not None
    cycle = sv.cycle_s[cfg] * scale
    requests = np.where(sv.fits, sv.requests_per_s, 0.0)[cfg] / scale
    samples = sv.in_flight[cfg]  # requests in flight per instance
    inputs, h2d = _host_side(w, caps, r, samples, samples / r.gpus)
    comm = overlap = np.zeros_like(cycle)
    memory_bound = sv.memory_bound[cfg]
    compute = np.where(memory_bound, 0.0, cycle)
    memory = np.where(memory_bound, cycle, 0.0)
    step, bottleneck, util = _combine(cycle, compute, memory, overlap, comm, inputs, h2d)
    # The engine's host loop between decode steps leaves the GPU idle (Serving.host_share).
    util = util * (1.0 - sv.host_share[cfg])
    with np.errstate(divide="ignore", invalid="ignore"):
        throughput = np.where(requests > 0, requests * cycle / step, 0.0)
    return Predictions(
        throughput=throughput,
        device_throughput=requests,
        step_s=step,
        device_s=cycle,
        compute_s=compute,
        memory_s=memory,
        host_transfer_s=h2d,
        input_s=inputs,
        interconnect_s=comm,
        utilization=util,
        bottleneck=bottleneck,
        fits=sv.fits[cfg],
        shards=sv.tp[cfg] * spec.pipeline_parallel,
        need_bytes=sv.need_bytes[cfg],
        scaling_efficiency=np.ones_like(cycle),
        tokens_per_s=throughput * spec.output_tokens,
        latency_s=sv.latency_s[cfg] * scale,
        config=cfg,
        plans=None,
        serving=sv,
        meets_targets=sv.meets[cfg] if (w.targets.ttft_ms or w.targets.tpot_ms) else None,
    )


def predict_rows(
    w: Workload,
    s: Shape,
    state: StateBytes,
    caps: Capabilities,
    accs: list[Accelerator],
    r: Rows,
    cal: Calibration,
    scale: FloatArray | float = 1.0,
) -> Predictions:
    """Plan and predict ``w`` on every row of ``r``."""
    if w.is_llm_serving and s.transformer:
        return _llm(w, s, caps, accs, r, cal, scale)
    return _batched(w, s, state, caps, r, cal, scale)
