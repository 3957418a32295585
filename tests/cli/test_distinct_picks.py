"""One pick per distinct choice: same accelerators, region, pricing, price and time collapse."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import recommender
from recommender.catalog import Catalog
from recommender.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return recommender.load_catalog()


def _choice(p: recommender.scoring.Pick) -> tuple[object, ...]:
    return (p.cloud, p.region, p.pricing, p.accelerator, p.gpus, p.price_per_hour, p.cost.total_usd)


def test_nolssd_variant_is_an_alternative_not_a_pick(catalog: Catalog) -> None:
    w = recommender.load_workload(EXAMPLES / "llm-finetune.yaml")
    r = recommender.recommend(w, catalog=catalog, top=10)
    assert len(r.picks) == 10
    assert len({_choice(p) for p in r.picks}) == len(r.picks)
    names = [p.instance_type for p in r.picks]
    assert "a3-edgegpu-8g" in names and "a3-edgegpu-8g-nolssd" not in names
    (edge,) = [p for p in r.picks if p.instance_type == "a3-edgegpu-8g"]
    same = [a for a in edge.alternatives if a.relation == "same-choice"]
    assert "a3-edgegpu-8g-nolssd" in {a.instance_type for a in same}
    for a in same:
        assert (a.region, a.pricing, a.price_per_hour) == (
            edge.region,
            edge.pricing,
            edge.price_per_hour,
        )


def test_table_names_the_variants() -> None:
    result = CliRunner().invoke(app, ["recommend", str(EXAMPLES / "llm-finetune.yaml")])
    assert result.exit_code == 0
    assert "the same choice as a3-edgegpu-8g-nolssd" in " ".join(result.stdout.split())
