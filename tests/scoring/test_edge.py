"""Edge placement: devices needed, power and price limits, precision support."""

from __future__ import annotations

from typing import Any

from recommender import Workload, recommend
from recommender.catalog import Catalog


def _edge(**targets: Any) -> Workload:
    return Workload.model_validate(
        {
            "name": "detector",
            "kind": "edge",
            "precision": "int8",
            "batch_size": 1,
            "model": {"parameters": 3.2e6, "flops_per_sample": 8.7e9, "family": "cnn"},
            "targets": targets,
        }
    )


def test_power_budget_and_unit_price_are_hard(catalog: Catalog) -> None:
    r = recommend(_edge(power_budget_w=10, unit_price_usd=300), catalog=catalog, top=10)
    assert r.picks
    for p in r.picks:
        dev = catalog.edge_device(p.instance_type)
        assert dev.power_w_max <= 10 and dev.list_price_usd <= 300
    assert sum(r.excluded.values()) > 0


def test_units_scale_with_the_target_rate(catalog: Catalog) -> None:
    one = recommend(_edge(requests_per_s=10), catalog=catalog, objective="cheapest").picks[0]
    many = recommend(_edge(requests_per_s=5000), catalog=catalog, objective="cheapest")
    assert many.picks
    best = many.picks[0]
    assert best.gpus * (best.predicted.throughput / best.gpus) >= 5000
    assert best.cost.total_usd is not None and one.cost.total_usd is not None
    assert best.cost.total_usd > one.cost.total_usd
    assert best.cost.energy_usd is not None and best.cost.energy_usd > 0


def test_int8_only_devices_refuse_fp16_models(catalog: Catalog) -> None:
    w = _edge().model_copy(update={"precision": "fp16"})
    r = recommend(w, catalog=catalog, top=20)
    int8_only = {d.id for d in catalog.edge_devices if "fp16" not in d.precisions}
    assert int8_only, "the catalog has int8-only devices (Coral, Hailo)"
    assert not {p.instance_type for p in r.picks} & int8_only
    assert any("Quantise to int8" in a for a in r.advice)


def test_a_model_too_big_for_the_device_is_refused(catalog: Catalog) -> None:
    w = _edge().model_copy(
        update={
            "model": _edge().model.model_copy(
                update={"parameters": 7e9, "flops_per_sample": 1.4e10}
            )
        }
    )
    r = recommend(w, catalog=catalog, top=20)
    for p in r.picks:
        assert catalog.edge_device(p.instance_type).memory_gb * 0.7 >= 7.0
