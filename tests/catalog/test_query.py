"""select_offers(): the `catalog list` / GET /v1/catalog/offers filters over the shipped data."""

from __future__ import annotations

from recommender.catalog import Catalog
from recommender.catalog.query import select_offers


def test_gpu_count_and_purchase_filters(catalog: Catalog) -> None:
    index = select_offers(catalog, clouds=["gcp"], gpu_count=8, purchase=["reservation"])
    offers = catalog.offers.offers(index)
    assert offers
    assert {o.gpus for o in offers} == {8}
    assert {o.purchase for o in offers} == {"reservation"}
    assert {o.instance_type.split("-")[0] for o in offers} <= {"a3", "a4"}
    prices = [o.price_per_hour for o in offers]
    assert prices == sorted(prices)
