"""Freshness and doubt in every answer: price age, and the validator's warnings in `why`."""

from __future__ import annotations

import datetime as dt

from recommender import recommend
from recommender.catalog import Catalog
from recommender.scoring.freshness import catalog_freshness
from recommender.workload import Workload


def test_freshness_is_the_oldest_price_file_and_its_age(catalog: Catalog) -> None:
    f = catalog_freshness(catalog, today=lambda: dt.date(2026, 12, 1))
    assert f.retrieved == dt.date(2026, 5, 20)  # the anycloud files' day
    assert f.price_age_days == 195
    assert f.flagged_prices == len(catalog.price_doubts) > 0


def test_every_answer_carries_the_catalog_freshness(catalog: Catalog) -> None:
    w = Workload.model_validate(
        {
            "name": "bert",
            "kind": "training",
            "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
            "data": {"samples": 1e5},
        }
    )
    r = recommend(w, catalog=catalog, top=3)
    assert r.picks and r.catalog is not None
    assert r.catalog.retrieved == dt.date(2026, 5, 20)
    assert r.catalog.price_age_days is not None and r.catalog.price_age_days >= 195
    assert r.model_dump(mode="json")["catalog"]["retrieved"] == "2026-05-20"


def test_a_pick_from_a_flagged_price_group_says_so(catalog: Catalog) -> None:
    w = Workload.model_validate(
        {
            "name": "h100-on-gcp",
            "kind": "training",
            "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
            "data": {"samples": 1e6},
            "constraints": {"clouds": ["gcp"], "accelerators": ["H100-SXM5-80GB"], "min_gpus": 8},
        }
    )
    r = recommend(w, catalog=catalog, objective="cheapest", top=10)
    assert r.picks
    flagged = [p for p in r.picks if any(line.startswith("price caution") for line in p.why)]
    assert flagged, [p.why for p in r.picks]
    for p in flagged:
        assert "two groups" in " ".join(p.why)
    assert ("gcp", "a3-highgpu-8g", "H100-SXM5-80GB", 8, "us-central1") in catalog.price_doubts
