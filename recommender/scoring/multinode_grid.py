"""The layouts the multi-node planner (:mod:`.multinode`) costs: every (tensor, pipeline,
context, expert parallel, sharding, checkpointing) choice on every (configuration, node
count), kept where the GPUs divide evenly among them.

Ranks are laid out as torchtitan's device mesh orders them, innermost first (``[pp, dp, cp,
tp]``): tensor-parallel ranks share a node, context-parallel ranks fill the rest of it before
they span nodes, and pipeline stages split the nodes. The data-parallel group that reduces
and shards the gradients is every rank outside tensor and pipeline parallelism, context
ranks included (torchtitan's FSDP mesh ``dp_shard_cp``); the model replicas that split the
global batch are that group over the context-parallel degree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.scoring.context_parallel import context_choices
from recommender.scoring.expert_parallel import expert_choices
from recommender.scoring.shape import Shape
from recommender.workload import Workload

__all__ = [
    "CHECKPOINTING",
    "HYBRID",
    "SHARDING_NAMES",
    "ZERO1",
    "ZERO3",
    "ClusterHardware",
    "Grid",
    "layout_grid",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16)
# Sharding codes: ZeRO-1, ZeRO-3 (FSDP), and hybrid (ZeRO-3 in the node, replicas across).
ZERO1, ZERO3, HYBRID = 1, 3, 4
SHARDINGS = (ZERO1, ZERO3, HYBRID)
SHARDING_NAMES = {ZERO1: "zero1", ZERO3: "zero3", HYBRID: "hybrid"}
CHECKPOINTING = {"none": 0, "selective": 1, "full": 2}


@dataclass(frozen=True)
class ClusterHardware:
    """Distinct configurations: accelerator, GPUs per node, node network (bytes/s, achieved)."""

    acc: npt.NDArray[np.int32]
    gpus: FloatArray
    network_bytes_per_s: FloatArray


def _layouts(w: Workload, s: Shape) -> npt.NDArray[np.float64]:
    """(tp, pp, sharding, ckpt, fallback ckpt, ep, cp) rows: the pinned value of each
    dimension, else every choice; checkpointing is the lighter mode, the heavier where it does
    not fit."""
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
    grid = itertools.product(tps, pps, shard, ckpts, expert_choices(s), context_choices(w, s))
    rows = [(t, p, z, *c, e, x) for t, p, z, c, e, x in grid]
    return np.asarray(rows, dtype=np.float64)


@dataclass(frozen=True)
class Grid:
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
    dp: FloatArray  # the gradients' data-parallel group (replicas x context ranks)
    dp_in: FloatArray  # ranks of that group inside one node
    dp_out: FloatArray  # nodes per pipeline stage
    ep: FloatArray  # expert-parallel ranks (1 for a dense model)
    cp: FloatArray  # context-parallel ranks per sequence

    @property
    def cp_nodes(self) -> FloatArray:
        """Nodes one context-parallel ring spans: it fills its node's non-tensor-parallel
        ranks first."""
        return _ring_nodes(self.cp, self.dp_in)

    @property
    def replicas(self) -> FloatArray:
        """Model replicas, each splitting its sequences over ``cp`` ranks."""
        return np.asarray(self.dp / self.cp)

    def take(self, keep: npt.NDArray[np.bool_]) -> Grid:
        return Grid(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))


def _divides(d: FloatArray, x: FloatArray | float) -> npt.NDArray[np.bool_]:
    """Whether ``d`` divides ``x`` (whole numbers held as floats): the quotient is whole. A
    rounded quotient of two whole numbers below 2**26 is whole only when the division is exact,
    and it costs a ninth of ``np.mod`` on floats."""
    q = x / d
    return np.asarray(q == np.floor(q))


def _ring_nodes(cp: FloatArray, per_node: FloatArray) -> FloatArray:
    return np.asarray(cp / np.minimum(cp, per_node))


def layout_grid(
    w: Workload, s: Shape, hw: ClusterHardware, nodes: FloatArray
) -> tuple[Grid, tuple[int, int, int]]:
    """The valid (layout, configuration, node count) cells, flattened in C order, and the full
    shape. The tests that need one pair of dimensions are applied on that pair first, so the
    tests that need all three run only on the cells both pairs leave (a few thousand of tens of
    thousands; ``benchmarks/bench_recommend.py`` times the search this is part of)."""
    lay = _layouts(w, s)
    shape = (len(lay), len(hw.acc), len(nodes))
    tp, pp, cp, ep = (lay[:, i] for i in (0, 1, 6, 5))
    # (layout, configuration): tensor-parallel ranks share a node, and a context-parallel
    # ring fills its node's non-tensor-parallel ranks before it spans nodes.
    gpus = hw.gpus.reshape(1, -1)
    per_node_lc = np.maximum(gpus / tp[:, None], 1.0)
    cp_in_lc = np.minimum(cp[:, None], per_node_lc)
    fits_node = (tp[:, None] <= gpus) & _divides(tp[:, None], gpus)
    fits_node &= _divides(cp_in_lc, per_node_lc) & _divides(cp_in_lc, cp[:, None])
    # (layout, node count): pipeline stages split the nodes, at most one per layer.
    n = nodes.reshape(1, -1)
    splits = (pp[:, None] <= n) & _divides(pp[:, None], n)
    splits &= (pp <= max(s.layers, 1.0))[:, None]
    li, ci, ki = np.nonzero(fits_node[:, :, None] & splits[:, None, :])
    # (layout, configuration, node count), on the cells left; a rule whose dimension never
    # leaves 1 (no context ring, no experts) holds everywhere and is skipped.
    per_node, stage_nodes = per_node_lc[li, ci], nodes[ki] / pp[li]
    group = per_node * stage_nodes
    keep = np.ones(li.shape, dtype=np.bool_)
    if np.any(cp > 1):
        keep &= _divides(_ring_nodes(cp[li], per_node), stage_nodes)
    if w.training.global_batch:  # the replicas split the global batch evenly
        keep &= _divides(group / cp[li], float(w.training.global_batch))
    if np.any(ep > 1):
        keep &= _divides(ep[li], group)
    li, ci, ki = li[keep], ci[keep], ki[keep]
    rows, g_gpus, g_n = lay[li], hw.gpus[ci], nodes[ki]
    g_tp, g_pp = rows[:, 0], rows[:, 1]
    dp_in = np.maximum(g_gpus / g_tp, 1.0)
    dp_out = np.maximum(g_n / g_pp, 1.0)
    cell = (li * shape[1] + ci) * shape[2] + ki  # C-order flat index
    g = Grid(
        cell, hw.acc[ci], g_tp, g_pp, rows[:, 2], rows[:, 3], rows[:, 4], g_gpus,
        hw.network_bytes_per_s[ci], g_n, dp_in * dp_out, dp_in, dp_out, rows[:, 5], rows[:, 6],
    )  # fmt: skip
    return g, shape
