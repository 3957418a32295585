"""Turning ranked rows into picks: predicted figures, costs, reasons, alternatives, advice."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from recommender.catalog.offers import OffersTable
from recommender.profile import Profile
from recommender.scoring.baseline import calibration_line
from recommender.scoring.cluster_pick import cluster_limits, cluster_plan, cluster_why, nodes_of
from recommender.scoring.cost import Costs
from recommender.scoring.describe import describe_plan, remedies
from recommender.scoring.engine import Context
from recommender.scoring.explain import bottleneck_advice, limit_text, recipe_caveats
from recommender.scoring.freshness import price_doubt
from recommender.scoring.heldout import error_note, expected_error
from recommender.scoring.memory import GB, usable_bytes
from recommender.scoring.predict import BOTTLENECKS, Predictions
from recommender.scoring.profile_use import measured_bottleneck, profile_notes
from recommender.scoring.rank import Ranking
from recommender.scoring.results import (
    Alternative,
    Cost,
    MemoryFit,
    Objective,
    Pick,
    Plan,
    Predicted,
)

__all__ = ["VENDOR_CAVEATS", "build_pick", "general_advice"]

VENDOR_CAVEATS = {
    "aws": "Inferentia/Trainium run models compiled with the AWS Neuron SDK (torch-neuronx); "
    "check that every operator of the model is supported",
    "amd": "AMD Instinct runs PyTorch on ROCm: use ROCm builds of PyTorch and of any custom "
    "kernels (FlashAttention, bitsandbytes)",
}


def _f(x: float) -> float | None:
    return None if not np.isfinite(x) else round(float(x), 6)


def _money(x: float) -> str:
    return f"${x:,.0f}" if x >= 100 else f"${x:,.2f}"


def _objective_reason(ctx: Context, row: int, r: Ranking, objective: Objective) -> str:
    w = ctx.workload
    cost, time = float(r.cost[row]), float(r.time[row])
    what = (
        "job"
        if w.kind == "training"
        else "month"
        if w.targets.requests_per_s or w.targets.tokens_per_s
        else "million " + ("tokens" if w.is_llm_serving else "requests")
    )
    time_s = f"{time:.1f} h" if w.kind == "training" else f"p95 ~{time * 1e3:.0f} ms"
    others = [p for p in r.picks if p != row]
    head = {"cheapest": "lowest cost", "fastest": "fastest", "balanced": "best cost x time"}
    text = f"{head[objective]}: {_money(cost)} per {what}, {time_s}"
    if others and r.picks[0] == row:
        nxt = others[0]
        text += (
            f" (next best: {_money(float(r.cost[nxt]))}, "
            f"{float(r.time[nxt]) / max(time, 1e-12):.2f}x the time)"
        )
    elif r.picks and r.picks[0] != row:
        best = r.picks[0]
        text += (
            f" ({cost / max(float(r.cost[best]), 1e-12):.2f}x the cost and "
            f"{time / max(float(r.time[best]), 1e-12):.2f}x the time of #1)"
        )
    return text


def _why(
    ctx: Context,
    row: int,
    t: OffersTable,
    p: Predictions,
    c: Costs,
    r: Ranking,
    objective: Objective,
    plan: Plan | None,
) -> list[str]:
    w = ctx.workload
    acc = t.accelerators[int(t.acc[row])]
    gpus = int(t.gpus[row])
    unit = "requests/s" if w.kind != "training" else "samples/s"
    why = [_objective_reason(ctx, row, r, objective)]
    thr = f"{float(p.throughput[row]):.4g} {unit} per instance on {gpus} x {acc.id}"
    if p.tokens_per_s is not None:
        thr += f" ({float(p.tokens_per_s[row]):.4g} tokens/s)"
    why.append("predicted " + thr)
    need, room = float(p.need_bytes[row]), usable_bytes(acc.memory_gb)
    fit = f"fits: {need / GB:.1f} of {room / GB:.1f} GB usable per GPU"
    if plan is not None and plan.assumed:
        fit += " with " + ", ".join(plan.assumed)
    elif ctx.calibrated.proven_acc is not None and int(t.acc[row]) == ctx.calibrated.proven_acc:
        fit = "fits: your baseline ran on it"
    why.append(fit)
    if gpus > 1 and w.kind == "training":
        link = "NVLink" if acc.nvlink_gbs else "PCIe"
        why.append(
            f"{gpus}-GPU scaling efficiency {float(p.scaling_efficiency[row]):.0%} over {link}"
        )
    if c.replicas[row] > 1:
        why.append(f"{int(c.replicas[row])} instances reach the target rate")
    doubt = price_doubt(ctx.catalog, t.offer(row))
    if doubt:
        why.append(doubt)
    if t.purchase_of(row) == "reservation":
        why.append(
            "bought through a reservation or committed use only: the cloud does not sell "
            "this size on demand (constraints.purchase allowed it)"
        )
    if ctx.calibrated.source:
        one_node = nodes_of(p.cluster, row) == 1  # a cluster is never the measured config
        line = calibration_line(
            ctx.calibrated, ctx.catalog, int(t.acc[row]), gpus if one_node else None
        )
        why.append("calibrated with your " + line)
    if row in r.pareto:
        why.append("on the cost/time Pareto frontier")
    return why


def _alternatives(row: int, t: OffersTable, c: Costs, r: Ranking) -> list[Alternative]:
    same = np.flatnonzero((r.config == r.config[row]) & r.feasible)
    out = [_alt("same-choice", v, t, c, r) for v in r.variants.get(row, [])]
    variant = same[(t.region[same] == t.region[row]) & (t.spot[same] != t.spot[row])]
    for v in variant[:1]:
        rel = "spot-variant" if t.spot[v] else "on-demand-variant"
        out.append(_alt(rel, int(v), t, c, r))
    others = same[(t.region[same] != t.region[row]) & (t.spot[same] == t.spot[row])]
    for o in others[np.argsort(r.cost[others], kind="stable")][:2]:
        out.append(_alt("other-region", int(o), t, c, r))
    return out


def _alt(relation: str, row: int, t: OffersTable, c: Costs, r: Ranking) -> Alternative:
    o = t.offer(row)
    total = _f(float(c.total_usd[row]))
    return Alternative(
        relation=relation,
        instance_type=o.instance_type,
        cloud=o.cloud,
        region=o.region,
        pricing=o.pricing,
        price_per_hour=o.price_per_hour,
        total_usd=total,
    )


def _memory_fit(row: int, t: OffersTable, p: Predictions, plan: Plan | None) -> MemoryFit:
    """Memory per GPU of the placement on ``row`` under its plan (every pick fits), in the
    shape ``predict`` returns."""
    need = float(p.need_bytes[row])
    room = usable_bytes(t.accelerators[int(t.acc[row])].memory_gb)
    return MemoryFit(
        fits=bool(p.fits[row]),
        needed_gb=round(need / GB, 2),
        available_gb=round(room / GB, 2),
        shortfall_gb=round(max(need - room, 0.0) / GB, 2),
        components_gb=plan.memory_gb if plan is not None else {},
    )


def build_pick(
    rank_no: int,
    row: int,
    ctx: Context,
    t: OffersTable,
    p: Predictions,
    c: Costs,
    r: Ranking,
    objective: Objective,
) -> Pick:
    o = t.offer(row)
    w = ctx.workload
    limits = [limit_text(int(p.bottleneck[row]), float(p.utilization[row]), o.gpus)]
    vendor = t.accelerators[int(t.acc[row])].vendor
    if vendor in VENDOR_CAVEATS:
        limits.append(VENDOR_CAVEATS[vendor])
    if o.pricing == "spot":
        limits.append(
            "spot capacity can be reclaimed at any time: checkpoint often (the "
            "hours include 10 % for restarts)"
            if w.kind == "training"
            else "spot capacity can be reclaimed: keep on-demand replicas for the base load"
        )
    latency = float(r.time[row]) * 1e3 if w.kind != "training" else None
    plan = describe_plan(w, p, row, t.accelerators[int(t.acc[row])], ctx.calibration)
    nodes = nodes_of(p.cluster, row)
    why = _why(ctx, row, t, p, c, r, objective, plan)
    if p.cluster is not None and nodes > 1:
        plan = cluster_plan(w, p.cluster, row, plan)
        single = ("predicted ", "fits: ", f"{o.gpus}-GPU scaling", f"{int(c.replicas[row])} inst")
        if c.replicas[row] > 1:
            why.append(f"{int(c.replicas[row])} deployments of {nodes} nodes reach the target rate")
        why = [why[0], *cluster_why(w, p.cluster, row, o.instance_type, o.gpus)] + [
            line for line in why[1:] if not line.startswith(single)
        ]
        limits += cluster_limits(w, p.cluster, row, o.pricing == "spot")
    return Pick(
        rank=rank_no,
        cloud=o.cloud,
        region=o.region,
        instance_type=o.instance_type,
        accelerator=o.accelerator,
        gpus=o.gpus,
        nodes=nodes,
        total_gpus=o.gpus * nodes,
        pricing=o.pricing,
        price_per_hour=o.price_per_hour,
        purchase=o.purchase,
        predicted=Predicted(
            throughput=float(p.throughput[row]),
            step_time_s=float(p.step_s[row]),
            total_hours=_f(float(c.hours[row])),
            bottleneck=BOTTLENECKS[int(p.bottleneck[row])],
            utilization=round(float(p.utilization[row]), 4),
            fits_in_memory=bool(p.fits[row]),
            tokens_per_s=_f(float(p.tokens_per_s[row])) if p.tokens_per_s is not None else None,
            p95_latency_ms=_f(latency) if latency is not None else None,
            scaling_efficiency=round(float(p.scaling_efficiency[row]), 4),
        ),
        cost=Cost(
            total_usd=_f(float(c.total_usd[row])),
            per_hour_usd=round(o.price_per_hour * nodes * float(c.replicas[row]), 6),
            replicas=int(c.replicas[row]),
            monthly_usd=_f(float(c.monthly_usd[row])),
            per_million_usd=_f(float(c.per_million_usd[row])),
            per_million_unit=c.per_million_unit,
        ),
        why=why,
        limits=limits,
        alternatives=_alternatives(row, t, c, r),
        pareto_optimal=row in r.pareto,
        plan=plan,
        memory=_memory_fit(row, t, p, plan),
    )


def _memory_advice(ctx: Context, t: OffersTable, p: Predictions) -> list[str]:
    """Remedies for the biggest GPU on offer that still cannot hold the workload alone."""
    w = ctx.workload
    # an offer with fewer GPUs than one copy spans (a pinned pipeline_parallel) is left out for
    # its GPU count, not its memory
    misfit = np.flatnonzero(~p.fits & (p.shards <= t.gpus))
    if len(misfit) == 0:
        return []
    gpu_mem = t.gpu_memory_gb[misfit]
    worst = int(misfit[int(np.argmax(gpu_mem))])
    acc = t.accelerators[int(t.acc[worst])]
    need = float(p.need_bytes[worst])
    head = (
        f"Does not fit {int(t.gpus[worst])} x {acc.id} ({acc.memory_gb:g} GB each) with any "
        f"recipe the planner tries: the best needs {need / GB:.1f} GB per GPU."
    )
    if need <= usable_bytes(acc.memory_gb):  # the GPUs would hold it: the host cannot
        head = (
            f"Does not fit {int(t.gpus[worst])} x {acc.id}: only with the optimizer state "
            f"offloaded ({need / GB:.1f} GB per GPU), and the host's memory cannot hold it."
        )
    bigger = [(a.id, a.memory_gb) for a in ctx.catalog.accelerators]
    return [head, *remedies(w, ctx.shape, acc, bigger)]


MEASURED_LABELS = {
    "compute": "compute-bound",
    "input-pipeline": "transfer-bound (data loading)",
    "host-transfer": "transfer-bound (host-to-device copy)",
}


def no_pick_advice(excluded: Mapping[str, int]) -> str:
    """Why nothing was picked: each constraint or target that left offers out, with counts."""
    if not excluded:
        return "No offer in the catalog can run this workload."
    reasons = "; ".join(f"{n} offers: {why}" for why, n in excluded.items())
    return f"No offer meets every constraint and target. Left out: {reasons}. Relax one of them."


def general_advice(
    ctx: Context,
    t: OffersTable,
    p: Predictions,
    r: Ranking,
    picks: list[Pick],
    excluded: Mapping[str, int] | None = None,
    profile: Profile | None = None,
) -> list[str]:
    """Advice for the whole answer; ``excluded``: every reason offers were left out (the
    constraints' and the ranking's; default the ranking's)."""
    advice: list[str] = []
    if picks:
        best = picks[0]
        row = r.picks[0]
        measured = measured_bottleneck(profile, ctx.calibrated)
        advice += bottleneck_advice(
            ctx.workload, measured or best.predicted.bottleneck, float(p.utilization[row])
        )
        if measured and measured != best.predicted.bottleneck:
            advice.append(
                f"The probe measured this workload {MEASURED_LABELS[measured]}; the advice "
                f"follows the measurement (the model predicts {best.predicted.bottleneck} on #1)."
            )
    else:
        advice.append(no_pick_advice(r.excluded if excluded is None else excluded))
    if not picks or np.count_nonzero(~p.fits) > 0.5 * len(t):
        advice += _memory_advice(ctx, t, p)
    advice += recipe_caveats(ctx.workload)
    advice += list(ctx.calibrated.notes)
    advice += profile_notes(profile, ctx.calibrated, ctx.workload, ctx.lent_figures)
    advice += _accuracy_advice(ctx, profile, bool(picks))
    return advice


def _accuracy_advice(ctx: Context, profile: Profile | None, picked: bool) -> list[str]:
    """How far off the picks' predictions typically are (``heldout``), and, for a prediction
    from the model alone, that a measurement of the workload would make them sharper."""
    w, calibrated = ctx.workload, ctx.calibrated.measured
    suggest = not calibrated and profile is None and w.kind != "edge"
    accuracy = error_note(expected_error(w, calibrated), w, suggest=suggest)
    if suggest and accuracy is None:
        return [
            "Predictions use spec sheets and calibrated efficiencies; a baseline "
            "measurement (`baseline:` or `recommender probe`) makes them sharper."
        ]
    if suggest:
        return [f"Predictions use spec sheets and calibrated efficiencies: {accuracy}."]
    return [f"Accuracy: {accuracy}."] if accuracy and picked else []
