"""The landscape (every feasible offer's cost and time) and each pick's memory per GPU."""

from __future__ import annotations

import pytest

from recommender import recommend
from recommender.catalog import Catalog
from recommender.scoring import landscape as landscape_module
from recommender.scoring.results import OfferPoint

from .conftest import make


def _dominated(p: OfferPoint, points: list[OfferPoint]) -> bool:
    return any(
        q.cost_usd <= p.cost_usd
        and q.time_s <= p.time_s
        and (q.cost_usd < p.cost_usd or q.time_s < p.time_s)
        for q in points
    )


def test_landscape_is_asked_for(catalog: Catalog) -> None:
    assert recommend(make(), catalog=catalog).landscape is None


def test_every_feasible_offer_is_a_point_with_the_ranking_cost_and_hours(
    catalog: Catalog,
) -> None:
    r = recommend(make(), catalog=catalog, landscape=True)
    assert r.landscape is not None and r.picks
    points = r.landscape.points
    assert len(points) + r.landscape.omitted == r.offers_feasible
    ranked = {p.rank: p for p in points if p.rank is not None}
    assert sorted(ranked) == [p.rank for p in r.picks]
    for pick in r.picks:
        point = ranked[pick.rank]
        assert (point.instance_type, point.region) == (pick.instance_type, pick.region)
        assert pick.cost.total_usd is not None and pick.predicted.total_hours is not None
        assert point.cost_usd == pytest.approx(pick.cost.total_usd, rel=1e-5)
        assert point.time_s == pytest.approx(pick.predicted.total_hours * 3600, rel=1e-5)
    assert r.landscape.time_label == "total time"


def test_the_frontier_is_every_point_nothing_beats_on_both(catalog: Catalog) -> None:
    r = recommend(make(), catalog=catalog, landscape=True)
    assert r.landscape is not None
    points = r.landscape.points
    front = [p for p in points if p.pareto_optimal]
    assert front
    assert not any(_dominated(p, points) for p in front)
    non_front = [p for p in points if not p.pareto_optimal]
    assert non_front
    # A point off the frontier is beaten, or ties a frontier point exactly (same price elsewhere).
    for p in non_front:
        assert _dominated(p, points) or any(
            (q.cost_usd, q.time_s) == (p.cost_usd, p.time_s) for q in front
        )


def test_past_the_cap_the_picks_and_frontier_stay(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = recommend(make(), catalog=catalog, objective="fastest", landscape=True)
    monkeypatch.setattr(landscape_module, "MAX_LANDSCAPE_POINTS", 3)
    r = recommend(make(), catalog=catalog, objective="fastest", landscape=True)
    assert full.landscape is not None and r.landscape is not None and r.picks
    kept = r.landscape.points
    assert r.landscape.omitted == r.offers_feasible - len(kept) > 0
    assert {p.rank for p in kept if p.rank} == {p.rank for p in r.picks}
    front = {
        (p.instance_type, p.region, p.pricing) for p in full.landscape.points if p.pareto_optimal
    }
    assert len(front) > 3
    assert front <= {(p.instance_type, p.region, p.pricing) for p in kept if p.pareto_optimal}


def test_inference_plots_latency_against_the_fleet_cost(catalog: Catalog) -> None:
    w = make(kind="inference", targets={"requests_per_s": 50})
    r = recommend(w, catalog=catalog, landscape=True)
    assert r.landscape is not None and r.picks
    assert r.landscape.time_label == "p95 latency"
    assert "month" in r.landscape.cost_label
    first = next(p for p in r.landscape.points if p.rank == 1)
    assert r.picks[0].predicted.p95_latency_ms is not None
    assert first.time_s * 1e3 == pytest.approx(r.picks[0].predicted.p95_latency_ms, rel=1e-6)


def test_a_pick_says_what_fills_its_gpus(catalog: Catalog) -> None:
    r = recommend(make(), catalog=catalog)
    assert r.picks
    for pick in r.picks:
        m = pick.memory
        assert m is not None and m.fits and pick.plan is not None
        assert m.components_gb == pick.plan.memory_gb
        assert sum(m.components_gb.values()) == pytest.approx(m.needed_gb, abs=0.05)
        assert 0 < m.needed_gb <= m.available_gb


# Mixed-precision Adam, bytes per parameter (Rajbhandari et al. 2020, "ZeRO", section 3.1):
# 2 fp16 weights + 2 fp16 gradients + 12 optimizer (fp32 master weights and two moments).
WEIGHT_B, GRADIENT_B, OPTIMIZER_B = 2.0, 2.0, 12.0
SHARDED_BY_STAGE = {"zero1": 1, "zero2": 2, "zero3": 3}


def test_sharded_state_is_divided_over_the_data_parallel_ranks(catalog: Catalog) -> None:
    """A 7B full fine-tune (16 B/parameter of state) cannot sit whole on an 80 GB A100: each
    pick shards it with ZeRO, and the state per GPU is what the stage leaves whole plus the
    sharded rest over the ranks (ZeRO-1 on 8 GPUs: 4 + 12/8 B/parameter = 35.4 GB)."""
    seven_b = {
        "family": "transformer",
        "architecture": {"layers": 32, "hidden_size": 4096, "sequence_length": 2048},
    }
    on_a100 = {"accelerators": ["A100-80GB"]}
    w = make(model=seven_b, batch_size=1, constraints=on_a100)
    r = recommend(w, catalog=catalog)
    assert r.picks
    for pick in r.picks:
        plan, m = pick.plan, pick.memory
        assert plan is not None and m is not None
        assert plan.sharding in SHARDED_BY_STAGE
        stage, dp = SHARDED_BY_STAGE[plan.sharding], plan.data_parallel
        per_param = (
            WEIGHT_B / (dp if stage >= 3 else 1)
            + GRADIENT_B / (dp if stage >= 2 else 1)
            + OPTIMIZER_B / dp
        )
        assert m.components_gb["state"] == pytest.approx(per_param * w.parameters / 1e9, abs=0.02)
