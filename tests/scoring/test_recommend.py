"""recommend(): constraints, objectives, alternatives, classes, the sanity a user expects."""

from __future__ import annotations

import pytest

from recommender import recommend
from recommender.catalog import Catalog
from recommender.scoring.results import Recommendation

from .conftest import make

LLAMA_70B = {
    "family": "transformer",
    "architecture": {
        "layers": 80,
        "hidden_size": 8192,
        "sequence_length": 4096,
        "vocab_size": 32000,
        "ffn_multiplier": 3.5,
    },
}


def _offers_of(r: Recommendation) -> list[tuple[str, str, int]]:
    return [(p.instance_type, p.accelerator, p.gpus) for p in r.picks]


def test_70b_bf16_is_never_put_on_one_24gb_gpu(catalog: Catalog) -> None:
    serve = make(
        kind="inference",
        model=LLAMA_70B,
        precision="bf16",
        batch_size=1,
        inference={"prompt_tokens": 256, "output_tokens": 128},
    )
    train = make(model=LLAMA_70B, precision="bf16", batch_size=1)
    for w in (serve, train):
        r = recommend(w, catalog=catalog, objective="cheapest", top=20)
        for p in r.picks:
            gpu_gb = catalog.accelerator(p.accelerator).memory_gb
            assert p.gpus * gpu_gb > 140, p  # 70e9 x 2 bytes of weights alone
            assert not (p.gpus == 1 and gpu_gb <= 24)
        assert r.excluded["does not fit in GPU memory"] > 0
    assert recommend(serve, catalog=catalog).picks, "8 x 80 GB serves 70B with TP"
    # Training 70B needs ~1.1 TB of state: only 8-GPU instances with ZeRO-3 and the optimizer
    # in a large host memory hold it; the picks say which recipe they assume.
    picks = recommend(train, catalog=catalog, top=5).picks
    assert picks
    for p in picks:
        assert p.plan is not None and p.plan.sharding == "zero3" and p.gpus == 8, p.plan


def test_transfer_bound_workload_is_told_more_gpus_will_not_help(catalog: Catalog) -> None:
    w = make(
        data={
            "samples": 1e6,
            "bytes_per_sample": 1.5e6,
            "decode_cpu_seconds_per_sample": 0.1,
            "source": "network",
        },
        model={"parameters": 2.5e7, "flops_per_sample": 1.2e10, "family": "cnn"},
        batch_size=64,
    )
    r = recommend(w, catalog=catalog, objective="balanced", top=5)
    assert r.picks[0].predicted.bottleneck in ("input-pipeline", "host-transfer")
    assert "more or faster GPUs will not help" in r.advice[0]
    assert any("loader" in a or "DataLoader" in a for a in r.advice)
    assert any("WebDataset" in a for a in r.advice)
    biggest = max(catalog.offers.gpus)
    assert all(p.gpus < biggest for p in r.picks)
    assert r.picks[0].limits[0].startswith("transfer-bound")


def test_cheapest_and_fastest_differ_when_they_should(catalog: Catalog) -> None:
    w = make(data={"samples": 5e6, "epochs": 3, "source": "memory"})
    cheap = recommend(w, catalog=catalog, objective="cheapest", top=1).picks[0]
    fast = recommend(w, catalog=catalog, objective="fastest", top=1).picks[0]
    assert (cheap.instance_type, cheap.region) != (fast.instance_type, fast.region)
    assert cheap.cost.total_usd is not None and fast.cost.total_usd is not None
    assert cheap.cost.total_usd < fast.cost.total_usd
    assert fast.predicted.total_hours is not None and cheap.predicted.total_hours is not None
    assert fast.predicted.total_hours < cheap.predicted.total_hours


def test_spot_picks_are_marked(catalog: Catalog) -> None:
    w = make(constraints={"spot": True})
    r = recommend(w, catalog=catalog, objective="cheapest", top=10)
    spot = [p for p in r.picks if p.pricing == "spot"]
    assert spot, "spot is cheaper for a restartable job"
    for p in spot:
        assert any("spot" in limit for limit in p.limits)
        variants = [a for a in p.alternatives if a.relation == "on-demand-variant"]
        assert all(
            a.pricing == "on-demand" and a.price_per_hour > p.price_per_hour for a in variants
        )


def test_on_demand_only_unless_spot_is_accepted(catalog: Catalog) -> None:
    for constraints in ({}, {"spot": False}):
        r = recommend(make(constraints=constraints), catalog=catalog, top=10)
        assert {p.pricing for p in r.picks} == {"on-demand"}
    only = recommend(make(constraints={"spot_only": True}), catalog=catalog, top=10)
    assert {p.pricing for p in only.picks} == {"spot"}


def test_constraints_are_hard(catalog: Catalog) -> None:
    w = make(
        constraints={
            "clouds": ["gcp"],
            "regions": ["europe-west4"],
            "max_gpus": 4,
            "accelerators": ["L4", "A100-80GB"],
        }
    )
    r = recommend(w, catalog=catalog, top=10)
    assert r.picks
    for p in r.picks:
        assert (p.cloud, p.region) == ("gcp", "europe-west4")
        assert p.gpus <= 4
        assert p.accelerator in ("L4", "A100-SXM4-80GB", "A100-PCIe-80GB")
    assert r.excluded["not in constraints.regions (europe-west4)"] > 0


def test_deadline_and_budget_rule_offers_out(catalog: Catalog) -> None:
    w = make(
        data={"samples": 5e7, "source": "memory"}, targets={"deadline_hours": 10, "budget_usd": 400}
    )
    r = recommend(w, catalog=catalog, top=5)
    for p in r.picks:
        assert p.predicted.total_hours is not None and p.predicted.total_hours <= 10
        assert p.cost.total_usd is not None and p.cost.total_usd <= 400
    assert "misses the deadline" in r.excluded


def test_impossible_targets_give_advice_not_an_error(catalog: Catalog) -> None:
    w = make(data={"samples": 5e9, "source": "memory"}, targets={"deadline_hours": 0.01})
    r = recommend(w, catalog=catalog)
    assert r.picks == []
    assert r.advice[0].startswith("No offer meets every constraint")


def test_picks_are_distinct_configurations_with_region_alternatives(catalog: Catalog) -> None:
    r = recommend(make(), catalog=catalog, objective="cheapest", top=5)
    configs = _offers_of(r)
    assert len(configs) == len(set(configs))
    assert [p.rank for p in r.picks] == [1, 2, 3, 4, 5]
    assert any(a.relation == "other-region" for p in r.picks for a in p.alternatives)
    assert r.pareto and all(r.picks[k - 1].pareto_optimal for k in r.pareto)


def test_inference_is_costed_as_a_fleet(catalog: Catalog) -> None:
    w = make(
        kind="inference",
        precision="fp16",
        batch_size=32,
        targets={"requests_per_s": 5000, "p95_latency_ms": 200},
    )
    r = recommend(w, catalog=catalog, objective="cheapest", top=3)
    assert r.workload_class == "high-throughput-inference"
    p = r.picks[0]
    assert p.cost.replicas >= 1
    assert p.cost.replicas * p.predicted.throughput >= 5000
    assert p.cost.monthly_usd == pytest.approx(p.cost.replicas * p.price_per_hour * 730)
    assert p.cost.per_million_usd is not None and p.cost.per_million_unit == "requests"
    assert p.predicted.p95_latency_ms is not None and p.predicted.p95_latency_ms <= 200


def test_large_scale_training_is_classed_and_shaped(catalog: Catalog) -> None:
    w = make(data={"samples": 3e9, "source": "memory"})
    r = recommend(w, catalog=catalog, objective="cheapest", top=5)
    assert r.workload_class == "large-scale-training"
    assert all(
        p.predicted.total_hours is not None and p.predicted.total_hours <= 720 for p in r.picks
    )


def test_top_must_be_positive(catalog: Catalog) -> None:
    with pytest.raises(ValueError, match="top must be >= 1"):
        recommend(make(), catalog=catalog, top=0)


def test_recommend_accepts_a_plain_mapping(catalog: Catalog) -> None:
    spec = make().model_dump()
    assert recommend(spec, catalog=catalog, top=1).picks


def test_startup_time_is_billed_so_tiny_jobs_stay_small(catalog: Catalog) -> None:
    tiny = make(data={"samples": 2e5, "source": "memory"})
    pick = recommend(tiny, catalog=catalog, objective="cheapest", top=1).picks[0]
    assert pick.predicted.total_hours is not None and pick.predicted.total_hours >= 10 / 60
    assert pick.gpus == 1  # a ten-minute boot on eight GPUs costs more than the job itself
    free = make(data={"samples": 2e5, "source": "memory"}, targets={"startup_minutes": 0})
    no_boot = recommend(free, catalog=catalog, objective="cheapest", top=1).picks[0]
    assert no_boot.predicted.total_hours is not None
    assert no_boot.predicted.total_hours < pick.predicted.total_hours
