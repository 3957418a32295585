"""How old an answer's prices are, and which of its prices the catalog's checks doubt."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from recommender.catalog import Catalog
from recommender.catalog.offers import Offer
from recommender.scoring.results import CatalogFreshness

__all__ = ["catalog_freshness", "price_doubt"]

Today = Callable[[], dt.date]


def catalog_freshness(catalog: Catalog, today: Today = dt.date.today) -> CatalogFreshness:
    """``retrieved`` (the oldest price file's day), its age in days, the flagged rows."""
    retrieved = catalog.retrieved
    age = (today() - retrieved).days if retrieved else None
    return CatalogFreshness(
        retrieved=retrieved, price_age_days=age, flagged_prices=len(catalog.price_doubts)
    )


def price_doubt(catalog: Catalog, o: Offer) -> str | None:
    """The ``why`` line for an offer whose price a ``catalog validate`` warning flags."""
    if o.cloud not in catalog.cloud_docs or o.region is None:
        return None
    message = catalog.price_doubts.get((o.cloud, o.instance_type, o.accelerator, o.gpus, o.region))
    if message is None:
        return None
    return f"price caution (`recommender catalog validate`): {message}"
