"""``recommend(workload)``: predict, cost and rank every offer, then explain the picks."""

from __future__ import annotations

import numpy as np

from recommender.catalog import Catalog
from recommender.catalog.offers import OffersTable
from recommender.profile import Profile
from recommender.scoring.calibration import Calibration
from recommender.scoring.classes import search_mask, workload_class
from recommender.scoring.cluster_pick import budget_advice, deadline_advice
from recommender.scoring.clusters import extend_to_clusters
from recommender.scoring.constraint_check import check_constraints, constraint_exclusions
from recommender.scoring.cost import Costs, costs_of
from recommender.scoring.edge import recommend_edge
from recommender.scoring.engine import Context, context, offer_rows
from recommender.scoring.freshness import catalog_freshness
from recommender.scoring.heldout import expected_error
from recommender.scoring.hosts import excluded_by_fit, host_mask, runs_mask
from recommender.scoring.landscape import landscape as landscape_of
from recommender.scoring.picks import build_pick, general_advice
from recommender.scoring.predict import Predictions
from recommender.scoring.rank import Ranking, rank
from recommender.scoring.results import Objective, Recommendation

__all__ = ["recommend"]


def _accelerator_ids(ctx: Context) -> list[str] | None:
    names = ctx.workload.constraints.accelerators
    if not names:
        return None
    return [a.id for name in names for a in ctx.catalog.names.resolve_all(name)]


def _constraint_mask(ctx: Context, t: OffersTable, fit: np.ndarray) -> np.ndarray:
    """Offers within the constraints, among those ``fit`` (host and framework) allows."""
    c = ctx.workload.constraints
    accelerators = _accelerator_ids(ctx)
    # spot_only: spot rows only; purchase (default: on-demand, + spot when spot is true).
    spot: bool | None = True if c.spot_only else None
    purchase = c.purchase or (["on-demand", "spot"] if c.spot else ["on-demand"])
    return fit & t.mask(
        clouds=c.clouds,
        regions=c.regions,
        accelerators=accelerators,
        spot=spot,
        purchase=[*purchase, "spot"] if c.spot_only else purchase,
        max_gpus=c.max_gpus,
        min_gpus=c.min_gpus,
        max_price=c.max_price_per_hour,
    )


def _score_offers(ctx: Context, t: OffersTable) -> tuple[Predictions, Costs]:
    p = ctx.predict(offer_rows(t))
    c = costs_of(ctx.workload, p, t.price, t.spot)
    p, c, _ = extend_to_clusters(ctx, t, p, c)  # offers one instance cannot serve
    return p, c


def recommend(
    workload: object,
    *,
    catalog: Catalog | None = None,
    objective: Objective = "balanced",
    top: int = 5,
    profile: Profile | None = None,
    calibration: Calibration | None = None,
    landscape: bool = False,
) -> Recommendation:
    """Rank every catalog offer (or edge device) for ``workload``; best ``top`` picks first.

    ``landscape``: also return every feasible offer's cost and time (not for edge devices).
    """
    from recommender.workload import Workload

    w = workload if isinstance(workload, Workload) else Workload.model_validate(workload)
    if top < 1:
        raise ValueError(f"top must be >= 1 (got {top})")
    ctx = context(w, catalog, profile, calibration)
    if w.kind == "edge":
        return recommend_edge(ctx, objective, top)
    check_constraints(w.constraints, ctx.catalog)
    table = ctx.catalog.offers
    runs, host = runs_mask(w, table), host_mask(w, table)
    considered = _constraint_mask(ctx, table, runs & host)
    sub = table.take(np.flatnonzero(considered))
    p, c = _score_offers(ctx, sub)
    cls = workload_class(ctx, sub, p)
    shaped = search_mask(cls, ctx, sub, p, c)
    r: Ranking = rank(w, sub, p, c, objective, top, shaped)
    picks = [build_pick(i + 1, row, ctx, sub, p, c, r, objective) for i, row in enumerate(r.picks)]
    excluded = {
        **constraint_exclusions(w.constraints, table, _accelerator_ids(ctx)),
        **excluded_by_fit(considered, runs, host),
        **r.excluded,
    }
    advice = general_advice(ctx, sub, p, r, picks, excluded, profile)
    late = deadline_advice(w, sub, p, c, bool(picks)) or budget_advice(w, sub, p, c, bool(picks))
    notes = list(p.cluster.notes) if p.cluster is not None else []
    advice = [*advice[:1], *([late] if late else []), *notes, *advice[1:]]
    return Recommendation(
        workload=w.name,
        workload_class=cls,
        objective=objective,
        picks=picks,
        advice=advice,
        offers_considered=len(table),
        offers_feasible=int(np.count_nonzero(r.feasible)),
        pareto=[pk.rank for pk in picks if pk.pareto_optimal],
        excluded=excluded,
        landscape=landscape_of(w, sub, p, r) if landscape else None,
        catalog=catalog_freshness(ctx.catalog),
        expected_error=expected_error(w, ctx.calibrated.measured) if picks else None,
    )
