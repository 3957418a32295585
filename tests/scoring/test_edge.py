"""Edge placement: devices needed, power and price limits, precision support."""

from __future__ import annotations

from typing import Any

import pytest

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
        host_w = dev.host.power_w if dev.host else 0.0
        host_usd = dev.host.price_usd if dev.host else 0.0
        assert min(m.watts for m in dev.modes()) + host_w <= 10
        assert dev.list_price_usd + host_usd <= 300
    assert sum(r.excluded.values()) > 0


def test_a_15w_budget_runs_every_jetson_in_its_15w_mode(catalog: Catalog) -> None:
    r = recommend(_edge(power_budget_w=15), catalog=catalog, objective="fastest", top=10)
    jetsons = {p.instance_type: p for p in r.picks if p.instance_type.startswith("jetson")}
    assert set(jetsons) == {"jetson-agx-orin-64gb", "jetson-orin-nx-16gb", "jetson-orin-nano-8gb"}
    for p in jetsons.values():
        assert any("15W power mode (15 W)" in line for line in p.why), p.why


def test_a_mode_allows_the_throughput_of_its_clock(catalog: Catalog) -> None:
    nano = catalog.edge_device("jetson-orin-nano-8gb")
    by_budget = {}
    for watts in (7, 15, 25):
        r = recommend(_edge(power_budget_w=watts), catalog=catalog, objective="fastest", top=10)
        (p,) = [p for p in r.picks if p.instance_type == nano.id]
        by_budget[watts] = p.predicted.throughput
    assert by_budget[7] < by_budget[15] < by_budget[25]
    modes = {m.watts: m.int8_tops for m in nano.modes()}
    assert by_budget[15] / by_budget[25] == pytest.approx(modes[15] / modes[25], rel=0.05)


def test_a_device_that_needs_a_host_carries_its_price_and_power(catalog: Catalog) -> None:
    hailo = catalog.edge_device("hailo-8-m2")
    assert hailo.host is not None
    r = recommend(_edge(), catalog=catalog, objective="cheapest", top=10)
    (p,) = [p for p in r.picks if p.instance_type == hailo.id]
    assert hailo.host.name in p.why[0]
    assert p.cost.total_usd is not None and p.cost.energy_usd is not None
    unit = hailo.list_price_usd + hailo.host.price_usd
    assert p.cost.total_usd == pytest.approx(p.gpus * unit + p.cost.energy_usd, rel=1e-6)
    assert f"{hailo.power_w_max + hailo.host.power_w:g} W with the host" in p.why[1]


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
