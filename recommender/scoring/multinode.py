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
- context parallelism for long sequences (:mod:`.context_parallel`), its ring inside a node
  where the node has room for it;
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

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from recommender.scoring.calibration import Calibration
from recommender.scoring.context_parallel import Ring
from recommender.scoring.expert_parallel import all_to_all_s, state_with_experts
from recommender.scoring.hardware import Capabilities
from recommender.scoring.memory import StateBytes, usable_bytes
from recommender.scoring.multinode_grid import (
    HYBRID,
    ZERO1,
    ZERO3,
    ClusterHardware,
    Grid,
    layout_grid,
)
from recommender.scoring.plan import activation_bytes_per_sample, attention_speed, in_node_ring
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
class ClusterPlans:
    """The best layout per (configuration, node count): arrays of shape (configs, nodes)."""

    nodes: FloatArray  # the node counts searched (1-D)
    fits: BoolArray
    samples_per_s: FloatArray  # the whole cluster
    step_s: FloatArray
    tp: FloatArray
    pp: FloatArray
    dp: FloatArray  # model replicas (each of tp x pp x cp GPUs)
    cp: FloatArray  # context-parallel ranks per sequence
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


def _ring(n: FloatArray) -> FloatArray:
    return np.asarray(np.where(n > 1, (n - 1) / np.maximum(n, 1.0), 0.0))


def _memory(
    w: Workload, s: Shape, state: StateBytes, g: Grid, room: FloatArray
) -> tuple[Grid, FloatArray, FloatArray, FloatArray, BoolArray]:
    """(the grid with its checkpointing chosen, state bytes per GPU, activation bytes per
    sample per GPU, micro-batch, fits)."""
    model_split = g.tp * g.pp
    shard_over = np.where(g.shard == HYBRID, g.dp_in, g.dp)
    stage = np.where(g.shard == ZERO1, 1.0, 3.0)
    state_gpu = state_with_experts(state, s, model_split, shard_over, stage, g.ep)
    live = ZERO3_LIVE_LAYERS * state.weights / max(s.layers, 1.0) / g.tp
    state_gpu = state_gpu + np.where(stage >= 3, live, 0.0)
    per_replica = _per_replica(w, g.replicas)
    fused = np.full(g.tp.shape, w.training.attention != "eager")
    # 1F1B keeps up to ``pp`` micro-batches in flight on the first stage, each with 1/pp of
    # the layers: one micro-batch's activations of the whole model, split by tp and cp.
    split = g.tp * g.cp
    light = activation_bytes_per_sample(s, g.ckpt.astype(np.int64), fused, True) / split
    heavy = activation_bytes_per_sample(s, g.heavier.astype(np.int64), fused, True) / split
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
    state: StateBytes, g: Grid, intra: FloatArray, inter: FloatArray, m: FloatArray
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
    g, shape = layout_grid(w, s, hw, nodes)
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
    g: Grid,
    mb: FloatArray,
) -> dict[str, FloatArray]:
    """Step time and its parts per fitting cell."""
    per_replica = _per_replica(w, g.replicas)
    if w.training.micro_batch is None:  # a pipeline runs many small micro-batches
        mb = np.where(g.pp > 1, np.minimum(mb, PIPELINE_MICRO_BATCH), mb)
    m = np.ceil(per_replica / mb)
    mb = np.ceil(per_replica / m)
    intra = caps.interconnect[g.acc]
    inter = g.network / g.gpus
    fused = np.full(g.tp.shape, w.training.attention != "eager")
    cells = Cells(
        flop_per_s=caps.flops[g.acc],
        bytes_per_s=caps.bandwidth[g.acc],
        link_bytes_per_s=intra,
        host_link_bytes_per_s=caps.host_link[g.acc],
        allreduce_step_s=caps.allreduce_step_s[g.acc],
        fused_attention=fused,
        attention_speed=attention_speed(w, caps, g.acc, fused),
        attention_flop_per_s=caps.training_attention_flops[g.acc],
        fp8_linears=caps.linear_only[g.acc],
        tp=g.tp,
        dp=np.where(g.shard == HYBRID, g.dp_in, g.dp),
        stage=np.where(g.shard == ZERO1, 1.0, 3.0),
        ckpt=g.ckpt,
        offload=np.zeros(g.tp.shape),
        micro_batch=mb,
        accumulation=m,
        ring=_context_ring(caps, g, inter) if np.any(g.cp > 1) else None,
    )
    t = step_time(w, s, state, cells, cal, el)
    useful = (t.busy_s + t.issue_s + t.optimizer_s) / g.pp
    chunks = np.where(g.pp > 1, np.clip(np.floor(s.layers / g.pp), 1.0, INTERLEAVED_CHUNKS), 1.0)
    bubble = useful * (g.pp - 1.0) / (m * chunks)
    backward = t.busy_s / g.pp * 2.0 / 3.0
    hidden = cal.comm_overlap * backward * np.where(g.shard >= ZERO3, 1.0, 1.0 / m)
    dp_comm = np.maximum(_data_parallel_comm(state, g, intra, inter, m) - hidden, 0.0)
    message = mb * s.tokens * s.hidden * el / (g.tp * g.cp)
    p2p = np.where(g.pp > 1, 2.0 * m * chunks * (P2P_LATENCY_S + message / inter), 0.0)
    a2a_link = np.where(g.ep <= g.dp_in, intra, inter)
    a2a = all_to_all_s(s, g.ep, g.tp * g.cp, mb, m, g.ckpt, a2a_link, el) / g.pp
    comm = (t.tp_comm_s + t.cp_comm_s) / g.pp + dp_comm + p2p + a2a
    step = useful + bubble + comm
    return {
        "samples": per_replica * g.replicas / step,  # a last partial micro-batch is padding
        "step": step,
        "mb": mb,
        "m": m,
        "comm": comm,
        "bubble": bubble,
        "efficiency": np.clip(useful / step, 0.0, 1.0),
    }


def _context_ring(caps: Capabilities, g: Grid, inter: FloatArray) -> Ring:
    """The context-parallel ring of each cell: on the GPUs' own links while it stays in a
    node (the latency of NCCL's smallest ring), on the node's network share once it spans
    nodes (a point-to-point send's latency)."""
    inside = g.cp_nodes <= 1
    node = in_node_ring(caps, g.acc, g.cp)
    return Ring(
        cp=g.cp,
        link_bytes_per_s=np.where(inside, node.link_bytes_per_s, inter),
        latency_s=np.where(inside, node.latency_s, P2P_LATENCY_S),
    )


def _choose(
    shape: tuple[int, int, int],
    g: Grid,
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
        dp=pick(g.replicas),
        cp=pick(g.cp),
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
