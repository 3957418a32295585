"""The offers recommend() may pick: what can be bought, on hosts that fit, for the framework."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender import load_workload, recommend
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
