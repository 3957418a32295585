"""The parallelism planner over nodes x GPUs: how a job too big or too slow for one instance
runs on a cluster of them.

For each hardware configuration (accelerator, GPUs per node, network per node) and node
count it enumerates the layouts a practitioner uses (Narayanan et al. 2021, "Efficient
Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"):

- tensor parallelism inside a node only (its all-reduces need NVLink-class links);
- pipeline parallelism across nodes, ``pp`` stages of ``N / pp`` nodes each, with the 1F1B
  schedule's bubble ``(pp - 1) / m`` for ``m`` micro-batches per step (section 2.2.1),
  interleaved over ``v`` model chunks per GPU: ``(pp - 1) / (m v)`` for ``v`` times the
  stage-to-stage sends (section 2.2.2);
- data parallelism over the rest, with ZeRO-1 (optimizer sharded over every data-parallel
  rank), ZeRO-3 / FSDP (everything sharded over every rank) or hybrid sharding (ZeRO-3
  inside a node, replicas across nodes: PyTorch FSDP ``HYBRID_SHARD``, Zhao et al. 2023,
  section 3.2.2);
- expert parallelism for mixture-of-experts models (:mod:`.expert_parallel`);
- activation checkpointing, selective or full.

Collectives are hierarchical (NCCL): the intra-node part runs on the GPUs' own link (the
accelerator's measured or spec all-reduce bandwidth), the inter-node part on the node's
network share per GPU, ``node Gbps x fabric efficiency / GPUs``. A ring all-reduce of ``B``
bytes over ``g`` GPUs in a node and ``n`` nodes moves ``2 (g-1)/g B`` inside and
``2 (n-1)/n B / g`` per GPU across (Patarasuk and Yuan 2009; Jeaugey 2019, "Massively scale
your deep learning training with NCCL 2.4"). The device time of a micro-step comes from
:func:`recommender.scoring.step_time.step_time`, the same model the single-node planner uses.

Everything is one numpy pass over (layout x configuration x node count) cells.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from recommender.scoring.calibration import Calibration
from recommender.scoring.expert_parallel import all_to_all_s, expert_choices, state_with_experts
from recommender.scoring.hardware import MEM_EFFICIENT_ATTENTION_SPEED, Capabilities
from recommender.scoring.memory import StateBytes, usable_bytes
from recommender.scoring.plan import activation_bytes_per_sample
from recommender.scoring.shape import Shape
from recommender.scoring.step_time import Cells, step_time
from recommender.workload import Workload

__all__ = [
    "FABRIC_EFFICIENCY",
    "HYBRID",
    "ClusterHardware",
    "ClusterPlans",
    "plan_clusters",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

# Share of the line rate NCCL's inter-node collectives reach, by fabric. EFA: 2 x p4d.24xlarge
# (4 x 100 Gbps) all-reduce 1 GiB at 30.5 GB/s algbw, 0.61 of the 50 GB/s the hierarchical
# ring allows (NVIDIA/nccl issue #527). The others are assumptions, not fitted: RDMA fabrics
# with GPUDirect (InfiniBand, GCP's RoCE) ~0.8; Google's TCPX / TCPXO (GPUDirect over TCP,
# header split) between EFA and RDMA; plain TCP through host memory ~0.3.
FABRIC_EFFICIENCY = {
    "infiniband": 0.8,
    "gpudirect-rdma": 0.8,
    "gpudirect-tcpxo": 0.7,
    "gpudirect-tcpx": 0.6,
    "efa": 0.6,
    "ethernet": 0.3,
}
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16)
# Sharding codes: ZeRO-1, ZeRO-3 (FSDP), and hybrid (ZeRO-3 in the node, replicas across).
ZERO1, ZERO3, HYBRID = 1, 3, 4
SHARDINGS = (ZERO1, ZERO3, HYBRID)
SHARDING_NAMES = {ZERO1: "zero1", ZERO3: "zero3", HYBRID: "hybrid"}
CHECKPOINTING = {"none": 0, "selective": 1, "full": 2}
# ZeRO-3 keeps the parameters of the layers being gathered (as the single-node planner).
ZERO3_LIVE_LAYERS = 2.0
# With pipeline stages the micro-batch is kept small so that the 1F1B bubble (p - 1) / m
# shrinks with many micro-batches: NeMo's GPT-3 175B and Llama 2 70B pretraining recipes
# set micro_batch_size 1 (recalled - verify); Narayanan et al. 2021, section 3.3.
PIPELINE_MICRO_BATCH = 1.0
# Model chunks per GPU of the interleaved 1F1B schedule (Megatron-LM's virtual pipeline
# stages, ``--num-layers-per-virtual-pipeline-stage``); at most one layer per chunk.
INTERLEAVED_CHUNKS = 4.0
# A point-to-point message between pipeline stages: per-message latency across nodes (EFA
# and InfiniBand send/recv are ~10-20 us; Jeaugey 2019).
P2P_LATENCY_S = 20e-6


@dataclass(frozen=True)
class ClusterHardware:
    """Distinct configurations: accelerator, GPUs per node, node network (bytes/s, achieved)."""

    acc: npt.NDArray[np.int32]
    gpus: FloatArray
    network_bytes_per_s: FloatArray


@dataclass(frozen=True)
class ClusterPlans:
    """The best layout per (configuration, node count): arrays of shape (configs, nodes)."""

    nodes: FloatArray  # the node counts searched (1-D)
    fits: BoolArray
    samples_per_s: FloatArray  # the whole cluster
    step_s: FloatArray
    tp: FloatArray
    pp: FloatArray
    dp: FloatArray
    ep: FloatArray
    sharding: FloatArray  # ZERO1 / ZERO3 / HYBRID
    ckpt: FloatArray
    micro_batch: FloatArray
    micro_batches: FloatArray  # per pipeline per optimizer step
    need_bytes: FloatArray
    state_bytes: FloatArray  # per GPU: weights, gradients, optimizer (and gathered layers)
    activation_bytes: FloatArray  # per GPU
    comm_s: FloatArray  # exposed: tensor parallel, data parallel, pipeline sends
    bubble_s: FloatArray
    efficiency: FloatArray  # useful device time / step


def _layouts(w: Workload, s: Shape) -> npt.NDArray[np.float64]:
    """(tp, pp, sharding, ckpt, fallback ckpt, ep) rows: the pinned value of each dimension, else
    every choice; checkpointing is the lighter mode, the heavier where it does not fit."""
    r = w.training
    if isinstance(r.tensor_parallel, int):
        tps: list[int] = [r.tensor_parallel]
    elif s.transformer:
        tps = [t for t in TENSOR_PARALLEL if s.heads % t == 0 and s.kv_heads % t == 0]
    else:
        tps = [1]
    pps = [r.pipeline_parallel] if isinstance(r.pipeline_parallel, int) else PIPELINE_PARALLEL
    if not s.transformer:
        pps = [1]
    shard = {"zero1": [ZERO1], "zero2": [ZERO1], "zero3": [ZERO3]}.get(r.sharding, SHARDINGS)
    if r.checkpointing != "auto":
        ckpts = [(CHECKPOINTING[r.checkpointing],) * 2]
    else:
        ckpts = [(1, 2)] if s.transformer else [(0, 2)]
    grid = itertools.product(tps, pps, shard, ckpts, expert_choices(s))
    rows = [(t, p, z, *c, e) for t, p, z, c, e in grid]
    return np.asarray(rows, dtype=np.float64)


def _ring(n: FloatArray) -> FloatArray:
    return np.asarray(np.where(n > 1, (n - 1) / np.maximum(n, 1.0), 0.0))


@dataclass(frozen=True)
class _Grid:
    """Layout cells kept for costing, flattened (one entry per valid cell)."""

    cell: IntArray  # flat index into (layouts, configurations, node counts)
    acc: npt.NDArray[np.int32]
    tp: FloatArray
    pp: FloatArray
    shard: FloatArray
    ckpt: FloatArray
    heavier: FloatArray  # the checkpointing mode used where ``ckpt`` does not fit
    gpus: FloatArray
    network: FloatArray  # the node's inter-node bytes/s (achieved)
    nodes: FloatArray
    dp: FloatArray
    dp_in: FloatArray  # data-parallel ranks inside one node
    dp_out: FloatArray  # nodes per pipeline stage
    ep: FloatArray  # expert-parallel ranks (1 for a dense model)

    def take(self, keep: npt.NDArray[np.bool_]) -> _Grid:
        return _Grid(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))


def _grid(
    w: Workload, s: Shape, hw: ClusterHardware, nodes: FloatArray
) -> tuple[_Grid, tuple[int, int, int]]:
    """The valid (layout, configuration, node count) cells, flattened, and the full shape."""
    lay = _layouts(w, s)
    shape = (len(lay), len(hw.acc), len(nodes))
    tp, pp = lay[:, 0].reshape(-1, 1, 1), lay[:, 1].reshape(-1, 1, 1)
    gpus, n = hw.gpus.reshape(1, -1, 1), nodes.reshape(1, 1, -1)
    valid = (tp <= gpus) & (np.mod(gpus, tp) == 0) & (pp <= n) & (np.mod(n, pp) == 0)
    valid = valid & (pp <= max(s.layers, 1.0))
    if w.training.global_batch:  # the replicas split the global batch evenly
        valid &= np.mod(w.training.global_batch, (gpus / tp) * (n / pp)) == 0
    ep = lay[:, 5].reshape(-1, 1, 1)
    valid &= np.mod((gpus / tp) * (n / pp), ep) == 0
    li, ci, ki = np.nonzero(valid)
    g_tp, g_pp, g_gpus, g_n = lay[li, 0], lay[li, 1], hw.gpus[ci], nodes[ki]
    dp_in = np.maximum(g_gpus / g_tp, 1.0)
    dp_out = np.maximum(g_n / g_pp, 1.0)
    cell = np.ravel_multi_index((li, ci, ki), shape)
    g = _Grid(
        cell, hw.acc[ci], g_tp, g_pp, lay[li, 2], lay[li, 3], lay[li, 4], g_gpus,
        hw.network_bytes_per_s[ci], g_n, dp_in * dp_out, dp_in, dp_out, lay[li, 5],
    )  # fmt: skip
    return g, shape


def _memory(
    w: Workload, s: Shape, state: StateBytes, g: _Grid, room: FloatArray
) -> tuple[_Grid, FloatArray, FloatArray, FloatArray, BoolArray]:
    """(the grid with its checkpointing chosen, state bytes per GPU, activation bytes per
    sample per GPU, micro-batch, fits)."""
    model_split = g.tp * g.pp
    shard_over = np.where(g.shard == HYBRID, g.dp_in, g.dp)
    stage = np.where(g.shard == ZERO1, 1.0, 3.0)
    state_gpu = state_with_experts(state, s, model_split, shard_over, stage, g.ep)
    live = ZERO3_LIVE_LAYERS * state.weights / max(s.layers, 1.0) / g.tp
    state_gpu = state_gpu + np.where(stage >= 3, live, 0.0)
    per_replica = _per_replica(w, g.dp)
    fused = np.full(g.tp.shape, w.training.attention != "eager")
    # 1F1B keeps up to ``pp`` micro-batches in flight on the first stage, each with 1/pp of
    # the layers: one micro-batch's activations of the whole model, split by tp.
    light = activation_bytes_per_sample(s, g.ckpt.astype(np.int64), fused, True) / g.tp
    heavy = activation_bytes_per_sample(s, g.heavier.astype(np.int64), fused, True) / g.tp
    mb_light, fits_light = _micro_batch(w, room, state_gpu, light, per_replica)
    mb_heavy, fits_heavy = _micro_batch(w, room, state_gpu, heavy, per_replica)
    use_light = fits_light | ~fits_heavy
    g = replace(g, ckpt=np.where(use_light, g.ckpt, g.heavier))
    act = np.where(use_light, light, heavy)
    mb = np.where(use_light, mb_light, mb_heavy)
    return g, state_gpu, act, mb, fits_light | fits_heavy


def _micro_batch(
    w: Workload, room: FloatArray, state_gpu: FloatArray, act: FloatArray, per: FloatArray
) -> tuple[FloatArray, BoolArray]:
    pinned = w.training.micro_batch
    if pinned is not None:
        mb = np.minimum(np.full(state_gpu.shape, float(pinned)), per)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            mb = np.clip(np.floor((room - state_gpu) / act), 0.0, per)
    fits = (mb >= 1) & (state_gpu + np.maximum(mb, 1.0) * act <= room)
    return np.maximum(mb, 1.0), fits


def _per_replica(w: Workload, dp: FloatArray) -> FloatArray:
    """Samples per data-parallel replica per step: the global batch over the replicas, else
    the workload's ``batch_size`` (per GPU as written, per replica here)."""
    global_batch = w.training.global_batch
    per = global_batch / dp if global_batch else np.full_like(dp, float(w.batch_size))
    return np.asarray(np.maximum(np.ceil(per), 1.0))


def _data_parallel_comm(
    state: StateBytes, g: _Grid, intra: FloatArray, inter: FloatArray, m: FloatArray
) -> FloatArray:
    """Seconds per step of the data-parallel collectives of one GPU, before overlap."""
    grads = state.gradients / (g.tp * g.pp)
    weights = state.weights / (g.tp * g.pp)
    inside = 2.0 * _ring(g.dp_in) * grads / intra
    across = 2.0 * _ring(g.dp_out) * grads / g.dp_in / inter
    zero3_inter = np.where(g.shard == ZERO3, _ring(g.dp_out) * weights / g.dp_in / inter, 0.0)
    gathers = np.where(g.shard >= ZERO3, 2.0 * _ring(g.dp_in) * weights / intra, 0.0)
    gathers = (gathers + 2.0 * zero3_inter) * m
    return np.asarray(inside + across + gathers)


def plan_clusters(
    w: Workload,
    s: Shape,
    state: StateBytes,
    caps: Capabilities,
    hw: ClusterHardware,
    nodes: FloatArray,
    cal: Calibration,
    el: float,
) -> ClusterPlans:
    """The fastest fitting layout per (configuration, node count) for a training job.

    Only valid cells are costed, and the step time only for the cells that fit."""
    g, shape = _grid(w, s, hw, nodes)
    g, state_gpu, act, mb, fits = _memory(w, s, state, g, usable_bytes(caps.memory_gb[g.acc]))
    need = state_gpu + mb * act
    short = np.full(int(np.prod(shape)), np.inf)
    short[g.cell] = need - usable_bytes(caps.memory_gb[g.acc])
    f = g.take(fits)
    cost = _step(w, s, state, caps, cal, el, f, mb[fits])
    cost["state"] = state_gpu[fits]
    cost["activations"] = cost["mb"] * act[fits]  # the micro-batch the step runs
    cost["need"] = cost["state"] + cost["activations"]
    return _choose(shape, f, cost, short, nodes)


def _step(
    w: Workload,
    s: Shape,
    state: StateBytes,
    caps: Capabilities,
    cal: Calibration,
    el: float,
    g: _Grid,
    mb: FloatArray,
) -> dict[str, FloatArray]:
    """Step time and its parts per fitting cell."""
    per_replica = _per_replica(w, g.dp)
    if w.training.micro_batch is None:  # a pipeline runs many small micro-batches
        mb = np.where(g.pp > 1, np.minimum(mb, PIPELINE_MICRO_BATCH), mb)
    m = np.ceil(per_replica / mb)
    mb = np.ceil(per_replica / m)
    intra = caps.interconnect[g.acc]
    inter = g.network / g.gpus
    cells = Cells(
        flop_per_s=caps.flops[g.acc],
        bytes_per_s=caps.bandwidth[g.acc],
        link_bytes_per_s=intra,
        host_link_bytes_per_s=caps.host_link[g.acc],
        nvlink=caps.has_nvlink[g.acc],
        fused_attention=np.full(g.tp.shape, w.training.attention != "eager"),
        attention_speed=np.where(caps.flash[g.acc], 1.0, MEM_EFFICIENT_ATTENTION_SPEED),
        attention_flop_per_s=caps.training_attention_flops[g.acc],
        fp8_linears=caps.linear_only[g.acc],
        tp=g.tp,
        dp=np.where(g.shard == HYBRID, g.dp_in, g.dp),
        stage=np.where(g.shard == ZERO1, 1.0, 3.0),
        ckpt=g.ckpt,
        offload=np.zeros(g.tp.shape),
        micro_batch=mb,
        accumulation=m,
    )
    t = step_time(w, s, state, cells, cal, el)
    useful = (t.busy_s + t.issue_s + t.optimizer_s) / g.pp
    chunks = np.where(g.pp > 1, np.clip(np.floor(s.layers / g.pp), 1.0, INTERLEAVED_CHUNKS), 1.0)
    bubble = useful * (g.pp - 1.0) / (m * chunks)
    backward = t.busy_s / g.pp * 2.0 / 3.0
    hidden = cal.comm_overlap * backward * np.where(g.shard >= ZERO3, 1.0, 1.0 / m)
    dp_comm = np.maximum(_data_parallel_comm(state, g, intra, inter, m) - hidden, 0.0)
    message = mb * s.tokens * s.hidden * el / g.tp
    p2p = np.where(g.pp > 1, 2.0 * m * chunks * (P2P_LATENCY_S + message / inter), 0.0)
    a2a_link = np.where(g.ep <= g.dp_in, intra, inter)
    a2a = all_to_all_s(s, g.ep, g.tp, mb, m, g.ckpt, a2a_link, el) / g.pp
    comm = t.tp_comm_s / g.pp + dp_comm + p2p + a2a
    step = useful + bubble + comm
    return {
        "samples": per_replica * g.dp / step,  # a last partial micro-batch is padding
        "step": step,
        "mb": mb,
        "m": m,
        "comm": comm,
        "bubble": bubble,
        "efficiency": np.clip(useful / step, 0.0, 1.0),
    }


def _choose(
    shape: tuple[int, int, int],
    g: _Grid,
    cost: dict[str, FloatArray],
    short: FloatArray,
    nodes: FloatArray,
) -> ClusterPlans:
    """The fastest fitting layout per (configuration, node count); when none fits, the
    least-short layout (its figures are then zeros)."""
    n_l, n_c, n_k = shape
    score = np.full(n_l * n_c * n_k, -np.inf)
    score[g.cell] = cost["samples"]
    grid = score.reshape(n_l, n_c * n_k)
    any_fit = np.isfinite(grid.max(axis=0))
    best = np.where(any_fit, grid.argmax(axis=0), short.reshape(n_l, -1).argmin(axis=0))
    flat = best * (n_c * n_k) + np.arange(n_c * n_k)
    pos = np.full(n_l * n_c * n_k, -1)
    pos[g.cell] = np.arange(g.cell.size)
    at = pos[flat]
    ok = at >= 0

    def pick(x: FloatArray) -> FloatArray:
        out = np.where(ok, x[np.maximum(at, 0)] if x.size else 0.0, 0.0)
        return np.asarray(out, dtype=np.float64).reshape(n_c, n_k)

    return ClusterPlans(
        nodes=nodes,
        fits=ok.reshape(n_c, n_k),
        samples_per_s=pick(cost["samples"]),
        step_s=pick(cost["step"]),
        tp=pick(g.tp),
        pp=pick(g.pp),
        dp=pick(g.dp),
        ep=pick(g.ep),
        sharding=pick(g.shard),
        ckpt=pick(g.ckpt),
        micro_batch=pick(cost["mb"]),
        micro_batches=pick(cost["m"]),
        need_bytes=pick(cost["need"]),
        state_bytes=pick(cost["state"]),
        activation_bytes=pick(cost["activations"]),
        comm_s=pick(cost["comm"]),
        bubble_s=pick(cost["bubble"]),
        efficiency=pick(cost["efficiency"]),
    )
