"""The offers recommend() may pick: what can be bought, on hosts that fit, for the framework."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender import load_workload, predict, recommend
from recommender.catalog import Catalog
from recommender.workload import Workload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _finetune(**constraints: object) -> Workload:
    w = load_workload(EXAMPLES / "llm-finetune.yaml")
    merged = {**w.constraints.model_dump(exclude_none=True), **constraints}
    return w.model_copy(update={"constraints": type(w.constraints).model_validate(merged)})


@pytest.mark.parametrize("objective", ["cheapest", "fastest", "balanced"])
def test_an_8_gpu_finetune_never_gets_a_reservation_only_offer(
    catalog: Catalog, objective: str
) -> None:
    r = recommend(_finetune(), catalog=catalog, objective=objective, top=20)  # type: ignore[arg-type]
    assert r.picks
    for p in r.picks:
        assert p.purchase == "on-demand", (p.instance_type, p.purchase)
        assert not p.instance_type.startswith(("a4-highgpu", "a3-ultragpu"))
        if p.instance_type.startswith("a3-highgpu"):
            assert p.gpus == 8


def test_reservations_are_ranked_when_purchase_allows_them(catalog: Catalog) -> None:
    w = _finetune(purchase=["reservation"], clouds=["gcp"])
    r = recommend(w, catalog=catalog, objective="fastest", top=10)
    assert r.picks
    assert {p.purchase for p in r.picks} == {"reservation"}
    assert any("reservation" in line for line in r.picks[0].why)
    for p in r.picks:
        assert p.instance_type.startswith(("a4-highgpu", "a3-ultragpu", "a3-highgpu")), p


def test_the_offers_table_marks_gcp_a4_and_small_a3_high_as_reservation_only(
    catalog: Catalog,
) -> None:
    t = catalog.offers
    offers = t.offers(range(len(t)))
    by_type = {(o.instance_type, o.pricing): o.purchase for o in offers if o.cloud == "gcp"}
    assert by_type[("a4-highgpu-8g", "on-demand")] == "reservation"
    assert by_type[("a3-highgpu-4g", "on-demand")] == "reservation"
    assert by_type[("a3-highgpu-8g", "on-demand")] == "on-demand"
    assert by_type[("a4-highgpu-8g", "spot")] == "spot"
    assert by_type[("g2-standard-4", "on-demand")] == "on-demand"


def _bert_service(rate: float, **constraints: object) -> Workload:
    w = load_workload(EXAMPLES / "bert-inference.yaml")
    targets = w.targets.model_copy(update={"requests_per_s": rate})
    merged = {**w.constraints.model_dump(exclude_none=True), **constraints}
    return w.model_copy(
        update={"targets": targets, "constraints": type(w.constraints).model_validate(merged)}
    )


def test_aws_t4_picks_are_x86_g4dn_not_graviton_g5g(catalog: Catalog) -> None:
    for spot in (False, True):
        w = _bert_service(300, clouds=["aws"], accelerators=["T4"], spot=spot)
        r = recommend(w, catalog=catalog, objective="cheapest", top=10)
        assert r.picks
        assert all(p.instance_type.startswith("g4dn.") for p in r.picks), [
            p.instance_type for p in r.picks
        ]
        assert r.excluded["host too small or of another CPU architecture"] > 0  # g5g
        assert r.excluded["accelerator does not run the workload's framework / kind"] > 0
    arm = _bert_service(300, clouds=["aws"], accelerators=["T4"], arch="arm64")
    picks = recommend(arm, catalog=catalog, objective="cheapest", top=5).picks
    assert picks and all(p.instance_type.startswith("g5g.") for p in picks)


def test_a_300_rps_bert_service_is_not_put_on_a_1_vcpu_host(catalog: Catalog) -> None:
    w = _bert_service(300, spot=True)
    r = recommend(w, catalog=catalog, objective="cheapest", top=20)
    assert r.picks
    table = catalog.offers
    vcpus = {
        table.instance_names[int(i)]: float(v)
        for i, v in zip(table.instance, table.vcpus, strict=True)
    }
    for p in r.picks:
        assert vcpus[p.instance_type] >= 2 * p.gpus, (p.instance_type, vcpus[p.instance_type])
        assert p.instance_type not in {"n1-standard-1", "n1-highcpu-2"}


def test_gcp_n1_hosts_fit_the_model_not_the_smallest(catalog: Catalog) -> None:
    """13B bf16 on 4 x T4: the host must hold the 26 GB checkpoint."""
    w = Workload.model_validate(
        {
            "name": "13b-on-t4",
            "kind": "inference",
            "model": {"parameters": 1.3e10, "flops_per_sample": 2.6e10},
            "precision": "bf16",
            "constraints": {"clouds": ["gcp"], "accelerators": ["T4"], "min_gpus": 4},
        }
    )
    r = recommend(w, catalog=catalog, objective="cheapest", top=10)
    assert r.picks
    table = catalog.offers
    memory = {
        table.instance_names[int(i)]: float(m)
        for i, m in zip(table.instance, table.memory_gib, strict=True)
    }
    for p in r.picks:
        assert memory[p.instance_type] * 2**30 / 1e9 >= 26 + 4, p.instance_type


def _bert_finetune(**constraints: object) -> Workload:
    return Workload.model_validate(
        {
            "name": "bert-large-finetune",
            "kind": "training",
            "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
            "batch_size": 32,
            "data": {"samples": 8.8e4, "epochs": 2},
            "constraints": constraints,
        }
    )


def test_inferentia_never_trains_and_tpus_need_their_framework(catalog: Catalog) -> None:
    neuron = recommend(
        _bert_finetune(frameworks=["neuron"], spot=True),
        catalog=catalog,
        objective="cheapest",
        top=20,
    )
    assert neuron.picks
    assert {p.accelerator for p in neuron.picks} <= {"Trainium1", "Trainium2"}
    default = recommend(_bert_finetune(spot=True), catalog=catalog, objective="cheapest", top=50)
    assert default.picks
    assert not any(
        p.accelerator.startswith(("TPU", "Trainium", "Inferentia", "Gaudi", "Radeon"))
        for p in default.picks
    )
    jax = recommend(
        _bert_finetune(frameworks=["jax"], clouds=["gcp"]),
        catalog=catalog,
        objective="cheapest",
        top=50,
    )
    assert any(p.accelerator.startswith("TPU") for p in jax.picks)
    served = recommend(
        _bert_service(300, frameworks=["neuron"], clouds=["aws"]),
        catalog=catalog,
        objective="cheapest",
        top=10,
    )
    assert served.picks
    assert {p.accelerator for p in served.picks} <= {"Inferentia2", "Trainium1", "Trainium2"}


def test_a_fractional_gpu_is_predicted_as_its_share_of_the_device(catalog: Catalog) -> None:
    w = _bert_finetune()
    whole = predict(w, "L4", gpus=1, catalog=catalog)
    eighth = predict(w, "L4-0.125", gpus=1, catalog=catalog)
    assert eighth.memory.available_gb < whole.memory.available_gb / 8  # less the runtime
    assert eighth.throughput < whole.throughput / 4
    r = recommend(_bert_service(50, clouds=["aws"], spot=True), catalog=catalog, top=50)
    shares = [p for p in r.picks if p.instance_type.startswith("g6f.")]
    for p in shares:
        assert p.accelerator.startswith("L4-0.") and p.gpus == 1
