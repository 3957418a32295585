"""Multi-node placements: the offers one instance cannot serve become clusters of them.

When no single instance of the search can hold the job, or (training) meet
``targets.deadline_hours`` within ``targets.budget_usd``, the offers are planned again over 2
to ``constraints.max_nodes`` instances by :mod:`.multinode` (training) or
:mod:`.multinode_serving` (LLM serving). Where one instance is enough anywhere, the answer
is exactly the single-instance one. Only families with a fast inter-node
network (the catalog's ``network.inter_node``: EFA, InfiniBand, GPUDirect) qualify, unless
``constraints.network: ethernet``; spot rows only with ``constraints.multi_node_spot``.

Node counts searched: every count up to 8, then those with three significant bits (10, 12,
14, 16, 20, 24, ...) and ``max_nodes`` itself. For each offer the cheapest count that meets
the deadline (and budget) is kept, else the fastest under the budget, else the cheapest
that fits; when no count meets the deadline the fastest is kept, so the answer can name it.

Training hours on N nodes carry checkpoint and restart overheads that grow with N
(:func:`resilience_overhead`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from recommender.catalog.offers import OffersTable
from recommender.scoring.cluster_layout import (
    Cluster,
    cluster_configs,
    empty_cluster,
    node_counts,
    put,
)
from recommender.scoring.cluster_network import (
    FABRIC_EFFICIENCY,
    FABRICS,
    NetworkColumns,
    network_columns,
)
from recommender.scoring.cost import Costs
from recommender.scoring.engine import Context
from recommender.scoring.multinode import plan_clusters
from recommender.scoring.multinode_serving import serve_on_clusters
from recommender.scoring.pipeline import OBJECT_STORE_BPS, input_seconds
from recommender.scoring.predict import Bottleneck, Predictions
from recommender.scoring.shape import activation_element_bytes

__all__ = [
    "FABRICS",
    "Cluster",
    "NetworkColumns",
    "extend_to_clusters",
    "network_columns",
    "node_counts",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
A = TypeVar("A", bound=npt.NDArray[Any])

# Unplanned interruptions of a large training job: 419 in 54 days on 16,384 H100 GPUs in
# 8-GPU hosts (Dubey et al. 2024, "The Llama 3 Herd of Models", section 3.3.4, Table 5).
FAILURES_PER_NODE_HOUR = 419.0 / (54.0 * 24.0) / (16_384 / 8)
# Spot reclaims: the AWS Spot Instance Advisor's highest band, "> 20 %" of instances
# interrupted per month, which most GPU types sit in (aws.amazon.com/ec2/spot/instance-advisor).
SPOT_RECLAIMS_PER_NODE_HOUR = 0.20 / 730.0
# Each node writes its shard of the checkpoint to object storage (pipeline.py's figure).
CHECKPOINT_BYTES_PER_S_PER_NODE = OBJECT_STORE_BPS


def resilience_overhead(
    state_bytes: float, nodes: FloatArray, spot: BoolArray, restart_s: float
) -> FloatArray:
    """Share of compute time lost to checkpoints and restarts on ``nodes`` instances.

    Young's optimal interval (Young 1974; Daly 2006): with checkpoint time ``C`` and job
    interruption rate ``l`` (``nodes`` x the per-node failure rate, plus spot reclaims),
    checkpoint every ``sqrt(2 C / l)``; the loss is ``C / tau + l (tau / 2 + R)``, ``R`` the
    restart (start-up plus reading the checkpoint back)."""
    write_s = state_bytes / (nodes * CHECKPOINT_BYTES_PER_S_PER_NODE)
    rate = nodes * (FAILURES_PER_NODE_HOUR + np.where(spot, SPOT_RECLAIMS_PER_NODE_HOUR, 0.0))
    rate_s = rate / 3600.0
    tau = np.sqrt(2.0 * write_s / rate_s)
    loss = write_s / tau + rate_s * (tau / 2.0 + restart_s + write_s)
    return np.asarray(np.minimum(loss, 1.0))


def _candidates(
    ctx: Context, t: OffersTable, p: Predictions, c: Costs
) -> tuple[IntArray, NetworkColumns | None, list[str]]:
    """Rows to plan on several nodes, their network, and notes on what was left out."""
    w = ctx.workload
    k = w.constraints
    if k.max_nodes < 2 or not (w.training_job or w.is_llm_serving):
        return np.zeros(0, dtype=np.int64), None, []
    single = p.fits & (p.throughput > 0)
    if w.training_job and w.targets.deadline_hours is not None:
        single &= c.hours <= w.targets.deadline_hours
    if w.training_job and w.targets.budget_usd is not None:
        single &= c.total_usd <= w.targets.budget_usd
    if np.any(single):  # one instance is enough somewhere: the answer stays single-node
        return np.zeros(0, dtype=np.int64), None, []
    need = ~single & (t.gpu_fraction >= 1.0)
    rows = np.flatnonzero(need)
    if len(rows) == 0:
        return rows, None, []
    net = network_columns(ctx.catalog, t, rows)
    ok = net.fast | (k.network == "ethernet")
    notes = []
    slow = int(np.count_nonzero(~ok))
    if slow:
        notes.append(
            f"{slow} offers would need several instances but have no fast inter-node network "
            "(plain Ethernet): not planned across nodes (constraints.network: ethernet allows it)"
        )
    spot_ok = ~t.spot[rows] | k.multi_node_spot
    if np.any(ok & ~spot_ok):
        notes.append(
            "multi-node plans on spot capacity are left out (any reclaimed node stops the "
            "whole job): constraints.multi_node_spot: true allows them"
        )
    keep = ok & spot_ok
    sub = NetworkColumns(
        net.bytes_per_s[keep], net.fabric[keep], net.fast[keep], net.placement[keep]
    )
    return rows[keep], sub, notes


def _choose_nodes(ctx: Context, fits: BoolArray, hours: FloatArray, cost: FloatArray) -> IntArray:
    """Per row, the index of the node count kept (see the module's docstring)."""
    t = ctx.workload.targets
    inf = np.inf
    within = fits.copy()
    if t.budget_usd is not None:
        within &= cost <= t.budget_usd
    if t.deadline_hours is not None:
        meets = within & (hours <= t.deadline_hours)
        cheapest = np.argmin(np.where(meets, cost, inf), axis=1)
        fastest = np.argmin(np.where(fits, hours, inf), axis=1)
        return np.asarray(np.where(np.any(meets, axis=1), cheapest, fastest), dtype=np.int64)
    if t.budget_usd is not None:
        fastest = np.argmin(np.where(within, hours, inf), axis=1)
        cheapest = np.argmin(np.where(fits, cost, inf), axis=1)
        return np.asarray(np.where(np.any(within, axis=1), fastest, cheapest), dtype=np.int64)
    return np.asarray(np.argmin(np.where(fits, cost, inf), axis=1), dtype=np.int64)


def extend_to_clusters(
    ctx: Context, t: OffersTable, p: Predictions, c: Costs
) -> tuple[Predictions, Costs, Cluster | None]:
    """``p`` and ``c`` with the offers that need several nodes planned as clusters."""
    rows, net, notes = _candidates(ctx, t, p, c)
    if net is None or len(rows) == 0:
        cluster = empty_cluster(t, notes) if notes else None
        return replace(p, cluster=cluster), c, cluster
    if ctx.workload.training_job:
        return _training(ctx, t, p, c, rows, net, notes)
    return serve_on_clusters(ctx, t, p, c, rows, net, notes)


def _training(
    ctx: Context,
    t: OffersTable,
    p: Predictions,
    c: Costs,
    rows: IntArray,
    net: NetworkColumns,
    notes: list[str],
) -> tuple[Predictions, Costs, Cluster]:
    w = ctx.workload
    hw, cfg = cluster_configs(t, rows, net)
    nodes = node_counts(w.constraints.max_nodes)
    el = activation_element_bytes(w.precision, w.model.execution)
    plans = plan_clusters(w, ctx.shape, ctx.state, ctx.caps, hw, nodes, ctx.calibration, el)
    scale = ctx.calibrated.scale_at(t.acc[rows])  # a cluster is never the measured config
    step = plans.step_s[cfg] * scale[:, None]  # (rows, counts)
    per_step = plans.samples_per_s[cfg] * plans.step_s[cfg]  # samples per optimizer step
    feed = input_seconds(  # each node reads and decodes its share of the step
        w.data,
        per_step / nodes[None, :],
        t.vcpus[rows][:, None],
        t.gpus[rows][:, None].astype(np.float64),
        t.local_disk_gb[rows][:, None],
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(step > 0, per_step / np.maximum(step, feed), 0.0)
    spot = t.spot[rows][:, None]
    overhead = resilience_overhead(
        ctx.state.total, nodes[None, :], spot, w.targets.startup_minutes * 60.0
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        compute_h = w.total_samples / rate / 3600.0
    hours = compute_h * (1.0 + overhead) + w.targets.startup_minutes / 60.0
    cost = hours * t.price[rows][:, None] * nodes[None, :]
    fits = plans.fits[cfg] & (rate > 0)
    some = np.any(fits, axis=1)  # rows no node count fits keep their single-node figures
    rows, cfg, rate, overhead, feed = rows[some], cfg[some], rate[some], overhead[some], feed[some]
    hours, cost, fits, scale = hours[some], cost[some], fits[some], scale[some]
    net = NetworkColumns(
        net.bytes_per_s[some], net.fabric[some], net.fast[some], net.placement[some]
    )
    k = _choose_nodes(ctx, fits, hours, cost)
    r = np.arange(len(rows))
    chosen = (cfg, k)

    def at(name: str) -> FloatArray:
        return np.asarray(getattr(plans, name)[chosen], dtype=np.float64)

    cluster = _cluster_columns(t, rows, nodes[k], at, overhead[r, k], net, notes)
    figures = _training_figures(at, scale, rate[r, k], fits[r, k], feed[r, k])
    p2 = replace(_apply(p, rows, figures), cluster=cluster)
    c2 = replace(
        c, hours=put(c.hours, rows, hours[r, k]), total_usd=put(c.total_usd, rows, cost[r, k])
    )
    return p2, c2, cluster


_COMPUTE = list(Bottleneck).index(Bottleneck.COMPUTE)


def _training_figures(
    at: Callable[[str], FloatArray],
    scale: FloatArray,
    rate: FloatArray,
    fits: BoolArray,
    feed: FloatArray,
) -> dict[str, object]:
    """The prediction columns of the chosen cluster plans (per row); ``feed``: each node's
    input-pipeline seconds per step."""
    device = at("step_s") * scale
    comm = (at("comm_s") + at("bubble_s")) * scale
    zeros = np.zeros(len(rate))
    device_bound = np.where(comm > device - comm, _LINK, _COMPUTE)
    return {
        "throughput": rate,
        "device_throughput": at("samples_per_s") / scale,
        "step_s": np.maximum(device, feed),
        "device_s": device,
        "compute_s": device - comm,
        "memory_s": zeros,
        "interconnect_s": comm,
        "input_s": feed,
        "host_transfer_s": zeros,
        "utilization": at("efficiency"),
        "scaling_efficiency": at("efficiency"),
        "need_bytes": at("need_bytes"),
        "shards": at("tp") * at("pp") * at("cp"),
        "fits": fits,
        "bottleneck": np.where(feed >= device, _INPUT, device_bound),
    }


_LINK = list(Bottleneck).index(Bottleneck.INTERCONNECT)
_INPUT = list(Bottleneck).index(Bottleneck.INPUT_PIPELINE)


def _apply(p: Predictions, rows: IntArray, figures: Mapping[str, object]) -> Predictions:
    """``p`` with ``figures`` (field -> values for ``rows``) put on ``rows``."""
    changes = {name: put(getattr(p, name), rows, v) for name, v in figures.items()}
    return replace(p, **changes)


def _cluster_columns(
    t: OffersTable,
    rows: IntArray,
    n: FloatArray,
    at: Callable[[str], FloatArray],
    overhead: FloatArray,
    net: NetworkColumns,
    notes: list[str],
) -> Cluster:
    base = empty_cluster(t, notes)
    line_gbps = (
        net.bytes_per_s
        * 8.0
        / 1e9
        / np.asarray([FABRIC_EFFICIENCY[FABRICS[f]] for f in net.fabric])
    )
    return Cluster(
        multi=put(base.multi, rows, True),
        nodes=put(base.nodes, rows, n),
        tp=put(base.tp, rows, at("tp")),
        pp=put(base.pp, rows, at("pp")),
        cp=put(base.cp, rows, at("cp")),
        dp=put(base.dp, rows, at("dp")),
        ep=put(base.ep, rows, at("ep")),
        sharding=put(base.sharding, rows, at("sharding")),
        ckpt=put(base.ckpt, rows, at("ckpt")),
        micro_batch=put(base.micro_batch, rows, at("micro_batch")),
        micro_batches=put(base.micro_batches, rows, at("micro_batches")),
        efficiency=put(base.efficiency, rows, at("efficiency")),
        state_bytes=put(base.state_bytes, rows, at("state_bytes")),
        activation_bytes=put(base.activation_bytes, rows, at("activation_bytes")),
        overhead=put(base.overhead, rows, overhead),
        fabric=put(base.fabric, rows, net.fabric),
        gbps=put(base.gbps, rows, line_gbps),
        notes=tuple(notes),
    )
