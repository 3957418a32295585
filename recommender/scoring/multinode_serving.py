"""LLM serving across nodes, for models one instance cannot hold: tensor parallel over the
GPUs of each node, pipeline parallel across nodes (vLLM's ``--tensor-parallel-size`` x
``--pipeline-parallel-size``; SGLang and TensorRT-LLM alike), replicas of the whole
deployment for the request rate.

A deployment of ``N`` nodes x ``G`` GPUs holds ``1 / (N G)`` of the weights and of each
sequence's KV cache per GPU. A token still passes every layer in turn, so one decode step of
a micro-batch takes the full model's step on ``G``-way tensor parallelism plus ``N - 1``
stage hand-offs; the pipeline keeps ``N`` micro-batches in flight, so a deployment decodes
``B`` sequences in micro-batches of ``B / N`` (Narayanan et al. 2021; vLLM's pipeline-parallel
scheduler keeps one micro-batch per stage). The decode and prefill step models are
:mod:`.serving_step`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recommender.scoring.cluster_layout import (
    Cluster,
    cluster_configs,
    empty_cluster,
    node_counts,
    put,
)
from recommender.scoring.cost import HOURS_PER_MONTH, Costs
from recommender.scoring.memory import GIB, RUNTIME_OVERHEAD_BYTES
from recommender.scoring.multinode import P2P_LATENCY_S
from recommender.scoring.plan import Hardware
from recommender.scoring.predict import Predictions
from recommender.scoring.serving import (
    _batch_choices,
    _decode_steps,
    _meets_targets,
    memory_utilization,
    occupancy,
    request_timing,
)
from recommender.scoring.serving_formats import serving_formats, serving_rates, weight_bytes
from recommender.scoring.serving_step import (
    Rates,
    decode_step,
    decoder_prompt,
    kv_bytes_per_sequence,
    prefill,
    uncaptured_decode_s,
)
from recommender.scoring.shape import BYTES_PER_ELEMENT

if TYPE_CHECKING:
    from recommender.catalog.offers import OffersTable
    from recommender.catalog.schema import Accelerator
    from recommender.scoring.cluster_network import NetworkColumns
    from recommender.scoring.engine import Context
    from recommender.scoring.results import Prediction

__all__ = ["serve_on_clusters"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def _deployments(ctx: Context, hw: Hardware, nodes: FloatArray) -> dict[str, FloatArray]:
    """Per (batch, configuration, node count): fits, requests/s, latencies, memory."""
    w, s = ctx.workload, ctx.shape
    spec = w.inference
    assert spec is not None
    fmt, kv_fmt = serving_formats(w)
    wb, kvb = weight_bytes(w, fmt), BYTES_PER_ELEMENT[kv_fmt]
    accs = list(ctx.catalog.accelerators)
    r = serving_rates(ctx.caps, accs, hw, w, ctx.calibration)
    batches = np.asarray(_batch_choices(w), dtype=np.float64)
    n_b, n_c, n_k = len(batches), len(hw.acc), len(nodes)
    shape = (n_b, n_c, n_k)
    b = np.broadcast_to(batches.reshape(n_b, 1, 1), shape)
    g = np.broadcast_to(hw.gpus.reshape(1, n_c, 1), shape)
    n = np.broadcast_to(nodes.reshape(1, 1, n_k), shape)
    room = ctx.caps.memory_gb[hw.acc].reshape(1, n_c, 1) * GIB * memory_utilization(w)
    room = room - RUNTIME_OVERHEAD_BYTES
    weights = s.parameters * wb / (g * n)
    _, steps = _decode_steps(w)
    sequence = kv_bytes_per_sequence(s, spec.prompt_tokens, int(steps), kvb)
    replication = np.maximum(g / max(s.kv_heads, 1.0), 1.0)
    kv = b * sequence * replication / (g * n)
    supported = r.supported.reshape(1, n_c, 1)
    fits = (weights + kv <= room) & supported & (s.heads % g == 0) & (b >= n)
    on_grid = _on_grid(r, shape)
    mb = np.maximum(b / n, 1.0)
    context = decoder_prompt(s, spec.prompt_tokens) + steps / 2.0
    decode, memory_bound, _ = decode_step(w, s, on_grid, g, mb, context, wb, kvb, ctx.calibration)
    launches = uncaptured_decode_s(w, s, n, accs, hw.acc.reshape(1, n_c, 1))
    token = decode + (n - 1.0) * P2P_LATENCY_S + launches
    prefill_time = prefill(s, on_grid, g, float(spec.prompt_tokens), ctx.calibration)
    cycle, tpot, ttft, latency = request_timing(w, token, prefill_time, mb)
    busy, held = occupancy(w, b, cycle, ttft)
    ok = fits & _meets_targets(w, tpot, ttft, latency) & held
    return {
        "fits": fits, "ok": ok, "requests": b * busy / cycle, "latency": latency, "cycle": cycle,
        "need": weights + kv + RUNTIME_OVERHEAD_BYTES, "batch": b, "memory_bound": memory_bound,
    }  # fmt: skip


def _on_grid(r: Rates, shape: tuple[int, int, int]) -> Rates:
    """Serving rates (one per configuration) broadcast to the (batch, configuration, node
    count) grid."""

    def grid(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return np.broadcast_to(x.reshape(1, -1, 1), shape)

    return Rates(
        flops=grid(r.flops),
        bandwidth=grid(r.bandwidth),
        link=grid(r.link),
        allreduce_step_s=grid(r.allreduce_step_s),
        supported=grid(r.supported),
        kernel_s=grid(np.broadcast_to(r.kernel_s, r.flops.shape)),
    )


def _best(d: dict[str, npt.NDArray[Any]]) -> Callable[[str], FloatArray]:
    """Per (configuration, node count), the concurrency with the most requests/s meeting
    the targets (else the lowest latency that fits): a getter of its figures."""
    score = np.where(d["ok"], d["requests"], -np.inf)
    fallback = np.argmin(np.where(d["fits"], d["latency"], np.inf), axis=0)
    best = np.where(np.any(d["ok"], axis=0), np.argmax(score, axis=0), fallback)
    ci, ki = np.indices(best.shape)

    def at(name: str) -> FloatArray:
        return np.asarray(np.broadcast_to(d[name], d["fits"].shape)[best, ci, ki], dtype=np.float64)

    return at


def _fleet(
    ctx: Context, price: FloatArray, tokens: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
    """(replicas, monthly USD, USD per million tokens, whether a rate is targeted)."""
    w = ctx.workload
    out = float(w.inference.output_tokens if w.inference else 1)
    target = w.targets.tokens_per_s or (
        w.targets.requests_per_s * out if w.targets.requests_per_s else None
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        replicas = np.maximum(np.ceil(target / tokens), 1.0) if target else np.ones_like(tokens)
        monthly = replicas * price * HOURS_PER_MONTH
        per_million = price / 3600.0 / tokens * 1e6
    return replicas, monthly, per_million, bool(target)


def serve_on_clusters(
    ctx: Context,
    t: OffersTable,
    p: Predictions,
    c: Costs,
    rows: IntArray,
    net: NetworkColumns,
    notes: list[str],
) -> tuple[Predictions, Costs, Cluster]:
    """``p`` and ``c`` with ``rows`` (models one instance cannot hold) served across nodes;
    each row keeps the node count with the cheapest fleet (or cost per million tokens)."""

    w = ctx.workload
    hw_c, cfg = cluster_configs(t, rows, net)
    hw = Hardware(acc=hw_c.acc, gpus=hw_c.gpus)
    nodes = node_counts(w.constraints.max_nodes)
    at = _best(_deployments(ctx, hw, nodes))
    scale = ctx.calibrated.scale_at(t.acc[rows])  # a cluster is never the measured config
    fits = (at("fits") > 0)[cfg]
    requests = np.where(fits, at("requests")[cfg] / scale[:, None], 0.0)  # (rows, counts)
    tokens = requests * float(w.inference.output_tokens if w.inference else 1)
    price = t.price[rows][:, None] * nodes[None, :]
    replicas, monthly, per_million, targeted = _fleet(ctx, price, tokens)
    measure = monthly if targeted else per_million
    k = np.argmin(np.where(fits & np.isfinite(measure), measure, np.inf), axis=1)
    r = np.arange(len(rows))
    figures = {
        "throughput": requests[r, k],
        "device_throughput": requests[r, k],
        "tokens_per_s": tokens[r, k],
        "latency_s": at("latency")[cfg][r, k] * scale,
        "step_s": at("cycle")[cfg][r, k] * scale,
        "device_s": at("cycle")[cfg][r, k] * scale,
        "fits": fits[r, k],
        "meets_targets": (at("ok") > 0)[cfg][r, k],
        "need_bytes": at("need")[cfg][r, k],
        "shards": hw.gpus[cfg] * nodes[k],
    }
    changes = {
        f: put(getattr(p, f), rows, v) for f, v in figures.items() if getattr(p, f) is not None
    }
    base = empty_cluster(t, notes)
    cluster = replace(
        base,
        multi=put(base.multi, rows, True),
        nodes=put(base.nodes, rows, nodes[k]),
        tp=put(base.tp, rows, hw.gpus[cfg]),
        pp=put(base.pp, rows, nodes[k]),
        micro_batch=put(base.micro_batch, rows, at("batch")[cfg][r, k]),
        fabric=put(base.fabric, rows, net.fabric),
    )
    costs = {"replicas": replicas, "monthly_usd": monthly, "total_usd": monthly}
    costs["per_million_usd"] = per_million
    c2 = replace(c, **{f: put(getattr(c, f), rows, v[r, k]) for f, v in costs.items()})
    return replace(p, cluster=cluster, **changes), c2, cluster


def predict_serving_on_nodes(
    ctx: Context, acc: Accelerator, index: int, gpus: int, nodes: int
) -> Prediction:
    """``predict`` for LLM serving on ``nodes`` x ``gpus``: TP inside, PP across."""
    from recommender.scoring.memory import GB, usable_bytes
    from recommender.scoring.results import Breakdown, MemoryFit, Plan, Prediction

    hw = Hardware(acc=np.array([index], dtype=np.int32), gpus=np.array([float(gpus)]))
    d = _deployments(ctx, hw, np.array([float(nodes)]))
    score = np.where(d["ok"], d["requests"], -np.inf)[:, 0, 0]
    fits_any = bool(np.any(d["fits"][:, 0, 0]))
    latency = np.where(d["fits"], d["latency"], np.inf)[:, 0, 0]
    i = int(np.argmax(score)) if np.isfinite(score.max()) else int(np.argmin(latency))
    scale = float(ctx.calibrated.scale_at(index))  # a cluster is never the measured config
    spec = ctx.workload.inference
    out = float(spec.output_tokens if spec else 1)
    requests = float(d["requests"][i, 0, 0]) / scale if fits_any else 0.0
    cycle = float(d["cycle"][i, 0, 0]) * scale
    need = float(d["need"][i, 0, 0])
    room = usable_bytes(acc.memory_gb)
    notes = [f"{nodes} nodes of {gpus} x {acc.id}: tensor parallel {gpus}, {nodes} stages"]
    if not fits_any:
        notes.insert(0, f"does not fit on {nodes} nodes")
    return Prediction(
        accelerator=acc.id,
        gpus=gpus,
        nodes=nodes,
        total_gpus=gpus * nodes,
        throughput=requests,
        step_time_s=cycle,
        bottleneck="memory-bandwidth" if bool(d["memory_bound"][i, 0, 0]) else "compute",
        fits_in_memory=fits_any,
        utilization=0.0,
        tokens_per_s=requests * out,
        breakdown=Breakdown(
            compute_s=cycle,
            memory_s=0.0,
            host_transfer_s=0.0,
            input_pipeline_s=0.0,
            interconnect_s=0.0,
        ),
        memory=MemoryFit(
            fits=fits_any,
            needed_gb=round(need / GB, 2),
            available_gb=round(room / GB, 2),
            shortfall_gb=round(max(need - room, 0.0) / GB, 2),
        ),
        notes=notes,
        plan=Plan(
            data_parallel=1,
            tensor_parallel=gpus,
            pipeline_parallel=nodes,
            concurrency=int(d["batch"][i, 0, 0]),
        ),
    )
