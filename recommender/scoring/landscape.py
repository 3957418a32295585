"""The landscape: every feasible offer's cost and time, as the cost-vs-time chart plots them.

Cost and time are the ranking's own (see :mod:`recommender.scoring.rank`): training plots the
job's USD against its hours, inference the fleet's monthly USD (or USD per million) against
the p95 latency. The Pareto flag is over every feasible offer, not just the picks.
"""

from __future__ import annotations

import numpy as np

from recommender.catalog.offers import OffersTable
from recommender.scoring.cluster_pick import nodes_of
from recommender.scoring.predict import BOTTLENECKS, Predictions
from recommender.scoring.rank import Ranking, pareto_front
from recommender.scoring.results import Landscape, OfferPoint
from recommender.workload import Workload

__all__ = ["MAX_LANDSCAPE_POINTS", "landscape"]

# Points one answer carries (a chart of more is unreadable, and every answer is stored):
# the cheapest first, and the picks and the frontier always.
MAX_LANDSCAPE_POINTS = 2000
SECONDS_PER_HOUR = 3600.0
SIGNIFICANT_DIGITS = 7  # what a chart (and a reader) can use; keeps the stored answer small


def _significant(x: float) -> float:
    return float(f"{x:.{SIGNIFICANT_DIGITS}g}")


def _labels(w: Workload) -> tuple[str, str]:
    if w.kind == "training":
        return "job cost (USD)", "total time"
    if w.targets.requests_per_s or w.targets.tokens_per_s:
        return "fleet cost per month (USD)", "p95 latency"
    unit = "tokens" if w.is_llm_serving else "requests"
    return f"cost per million {unit} (USD)", "p95 latency"


def landscape(w: Workload, t: OffersTable, p: Predictions, r: Ranking) -> Landscape:
    """Every feasible row of ``t`` as an :class:`OfferPoint` (past the cap: the cheapest, every
    pick and the whole frontier)."""
    rows = np.flatnonzero(r.feasible)
    rows = rows[np.argsort(r.cost[rows], kind="stable")]
    front = pareto_front(r.cost, r.time, rows) if len(rows) else set()
    beyond = rows[MAX_LANDSCAPE_POINTS:]
    always = np.isin(beyond, [*r.picks, *front])
    kept = np.concatenate([rows[:MAX_LANDSCAPE_POINTS], beyond[always]])
    ranks = {row: i + 1 for i, row in enumerate(r.picks)}
    to_seconds = SECONDS_PER_HOUR if w.kind == "training" else 1.0
    cost_label, time_label = _labels(w)
    points = [
        _point(int(row), t, p, r, int(row) in front, ranks.get(int(row)), to_seconds)
        for row in kept
    ]
    return Landscape(
        cost_label=cost_label,
        time_label=time_label,
        points=points,
        omitted=len(rows) - len(kept),
    )


def _point(
    row: int,
    t: OffersTable,
    p: Predictions,
    r: Ranking,
    pareto: bool,
    rank_no: int | None,
    to_seconds: float,
) -> OfferPoint:
    o = t.offer(row)
    return OfferPoint(
        cloud=o.cloud,
        region=o.region,
        instance_type=o.instance_type,
        accelerator=o.accelerator,
        gpus=o.gpus,
        nodes=nodes_of(p.cluster, row),
        pricing=o.pricing,
        price_per_hour=o.price_per_hour,
        cost_usd=_significant(float(r.cost[row])),
        time_s=_significant(float(r.time[row]) * to_seconds),
        bottleneck=BOTTLENECKS[int(p.bottleneck[row])],
        pareto_optimal=pareto,
        rank=rank_no,
    )
