"""Ranking offers: hard constraints, objectives, one pick per configuration, the Pareto front.

An offer is a row (instance x region x pricing). Rows of the same configuration (cloud,
instance type, accelerator, GPU count) differ only by region and pricing, so the ranking
keeps the best row of each configuration as a pick and offers the others as alternatives
(the spot variant, the same instance in another region). Configurations that are the same
choice, in the same region, with the same pricing, accelerators, price and predicted time, but
a different instance type (``a3-edgegpu-8g`` and ``a3-edgegpu-8g-nolssd``), collapse into
one pick, the others listed as its variants.

Objectives, each over (cost, time): ``cheapest`` sorts by cost then time, ``fastest`` by time
then cost, ``balanced`` by cost x time (the geometric mean of the two ratios to the best,
so neither unit dominates). Training: cost = the job's USD, time = its hours. Inference: cost
= the fleet's monthly USD (or USD per million when no rate is targeted), time = latency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from recommender.catalog.offers import OffersTable
from recommender.scoring.cost import Costs
from recommender.scoring.predict import Predictions
from recommender.scoring.results import Objective
from recommender.scoring.serving import copy_span
from recommender.workload import Workload

__all__ = ["P95_FACTOR", "Ranking", "collapse_same_choice", "feasibility", "rank"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# p95 latency of a request relative to the batch's processing time: it may wait for the
# batch to form and then for it to run.
P95_FACTOR = 1.5


@dataclass(frozen=True)
class Ranking:
    picks: list[int]  # row indices, best first
    pareto: set[int]  # rows (among picks) on the cost/time frontier
    cost: FloatArray
    time: FloatArray
    feasible: BoolArray
    excluded: dict[str, int]
    config: IntArray  # each row's configuration (:func:`config_keys`), for the alternatives
    variants: dict[int, list[int]] = field(default_factory=dict)  # pick row -> same choice


def cost_and_time(w: Workload, p: Predictions, c: Costs) -> tuple[FloatArray, FloatArray]:
    if w.kind == "training":
        return c.total_usd, c.hours
    has_target = bool(w.targets.requests_per_s or w.targets.tokens_per_s)
    cost = c.monthly_usd if has_target else c.per_million_usd
    latency = p.latency_s if p.latency_s is not None else p.step_s
    return cost, latency * P95_FACTOR


def feasibility(
    w: Workload,
    p: Predictions,
    c: Costs,
    cost: FloatArray,
    time: FloatArray,
    gpus: npt.NDArray[np.integer[Any]],
) -> tuple[BoolArray, dict[str, int]]:
    """Rows meeting every hard target, and how many each target ruled out. A row of ``gpus``
    that holds no whole model copy of a pinned span (:func:`.serving.copy_span`) is counted
    under that reason, not under memory."""
    t = w.targets
    span = copy_span(w)
    checks: list[tuple[str, BoolArray]] = [
        (
            f"no whole model copy: one spans {span} GPUs (inference.tensor_parallel x "
            "pipeline_parallel)",
            p.fits | (np.mod(gpus, span) == 0),
        ),
        ("does not fit in GPU memory", p.fits),
        ("no throughput", np.isfinite(cost) & (p.throughput > 0)),
    ]
    if w.kind == "training":
        if t.budget_usd is not None:
            checks.append(("over budget", c.total_usd <= t.budget_usd))
        if t.deadline_hours is not None:
            checks.append(("misses the deadline", c.hours <= t.deadline_hours))
    else:
        if p.meets_targets is not None:
            checks.append(("misses the TTFT / TPOT target", p.meets_targets))
        if t.budget_usd is not None:
            checks.append(("over budget (monthly)", c.monthly_usd <= t.budget_usd))
        if t.p95_latency_ms is not None:
            checks.append(("misses the p95 latency", time * 1e3 <= t.p95_latency_ms))
    ok = np.ones_like(p.fits)
    excluded: dict[str, int] = {}
    for reason, passed in checks:
        newly = int(np.count_nonzero(ok & ~passed))
        if newly:
            excluded[reason] = newly
        ok &= passed
    return ok, excluded


def _score(objective: Objective, cost: FloatArray, time: FloatArray) -> FloatArray:
    if objective == "cheapest":
        return cost + 1e-9 * time
    if objective == "fastest":
        return time + 1e-12 * cost
    return np.log(np.maximum(cost, 1e-12)) + np.log(np.maximum(time, 1e-12))


def config_keys(t: OffersTable) -> IntArray:
    n_inst, n_acc = len(t.instance_names) + 1, len(t.accelerators) + 1
    key = (t.cloud.astype(np.int64) * n_inst + t.instance) * n_acc + t.acc
    return np.asarray(key * 1024 + t.gpus, dtype=np.int64)


def pareto_front(cost: FloatArray, time: FloatArray, rows: IntArray) -> set[int]:
    """Rows not beaten on both cost and time by another row (sorted by cost, a row is on the
    front when it is faster than every cheaper row)."""
    if len(rows) == 0:
        return set()
    order = rows[np.lexsort((time[rows], cost[rows]))]
    t = time[order]
    best_before = np.concatenate([[np.inf], np.minimum.accumulate(t)[:-1]])
    return {int(r) for r in order[t < best_before]}


def rank(
    w: Workload,
    t: OffersTable,
    p: Predictions,
    c: Costs,
    objective: Objective,
    top: int,
    allowed: tuple[BoolArray, str | None] | None = None,
) -> Ranking:
    """Rank ``t``'s rows; ``allowed`` is an extra mask with the reason for what it drops."""
    cost, time = cost_and_time(w, p, c)
    feasible, excluded = feasibility(w, p, c, cost, time, t.gpus)
    if allowed is not None and allowed[1] is not None:
        dropped = int(np.count_nonzero(feasible & ~allowed[0]))
        if dropped:
            excluded[allowed[1]] = dropped
        feasible = feasible & allowed[0]
    rows = np.flatnonzero(feasible)
    score = _score(objective, cost, time)
    order = rows[np.argsort(score[rows], kind="stable")]
    config = config_keys(t)
    _, first = np.unique(config[order], return_index=True)
    best_per_config = order[np.sort(first)]
    picks, variants = collapse_same_choice(t, cost, time, best_per_config, top)
    front = pareto_front(cost, time, best_per_config) if len(best_per_config) else set()
    return Ranking(picks, front & set(picks), cost, time, feasible, excluded, config, variants)


# Prices and predictions equal to these places are the same to a user (a cent per 100 h).
PRICE_DECIMALS = 4
TIME_SIGNIFICANT = 6


def _significant(x: FloatArray, digits: int) -> FloatArray:
    """``x`` rounded to ``digits`` significant figures (0, inf and nan kept)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude = np.floor(np.log10(np.abs(x)))
        scale = np.where(np.isfinite(magnitude), 10.0 ** (digits - 1 - magnitude), 1.0)
        return np.asarray(np.where(np.isfinite(x) & (x != 0), np.round(x * scale) / scale, x))


def collapse_same_choice(
    t: OffersTable, cost: FloatArray, time: FloatArray, rows: IntArray, top: int
) -> tuple[list[int], dict[int, list[int]]]:
    """The first ``top`` distinct choices among ``rows`` (best first), each with the rows
    that are the same choice under another instance type (same cloud, region, pricing,
    accelerators, price, and predicted cost and time)."""
    if len(rows) == 0:
        return [], {}
    keys = np.stack(
        [
            t.cloud[rows].astype(np.float64),
            t.region[rows].astype(np.float64),
            t.spot[rows].astype(np.float64),
            t.acc[rows].astype(np.float64),
            t.gpus[rows].astype(np.float64),
            np.round(t.price[rows], PRICE_DECIMALS),
            _significant(cost[rows], TIME_SIGNIFICANT),
            _significant(time[rows], TIME_SIGNIFICANT),
        ],
        axis=1,
    )
    # The first free row is the next choice; every row with its key is taken with it. One
    # vectorised comparison per pick (top is small), instead of sorting every key.
    taken = np.zeros(len(rows), dtype=bool)
    picks: list[int] = []
    variants: dict[int, list[int]] = {}
    while len(picks) < top:
        free = np.flatnonzero(~taken)
        if len(free) == 0:
            break
        i = int(free[0])
        same = np.all(keys == keys[i], axis=1)
        same[i] = True  # a NaN key equals nothing, not even itself
        taken |= same
        picks.append(int(rows[i]))
        variants[int(rows[i])] = [int(rows[j]) for j in np.flatnonzero(same) if j != i]
    return picks, variants
