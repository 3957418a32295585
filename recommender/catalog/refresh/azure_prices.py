"""Azure prices from the public Retail Prices API (no credentials needed), through httpx.

``GET https://prices.azure.com/api/retail/prices?$filter=...`` answers 100 ``Items`` a page
and a ``NextPageLink`` until the last page. We ask per region for the GPU sizes seen there:
``serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq
'<region>' and (armSkuName eq '...' or ...)``. Linux pay-as-you-go is the item whose
``productName`` is not a Windows or Cloud Services product; spot is the item whose
``meterName`` contains "Spot"; "Low Priority" (the retired batch tier) is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

from recommender.catalog.refresh.base import chunks
from recommender.catalog.refresh.retry import Backoff

__all__ = ["RETAIL_PRICES_URL", "http_throttle", "parse_items", "retail_prices"]

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
SKUS_PER_QUERY = 15
MAX_PAGES = 200  # a region's GPU sizes take a handful; this only stops a runaway link chain
_NOT_LINUX = re.compile(r" Win| Cloud ?Services", re.IGNORECASE)

# (armSkuName, spot?) -> USD/hour
Prices = dict[tuple[str, bool], float]


def http_throttle(exc: BaseException) -> float | None:
    """Seconds to wait when ``exc`` is an HTTP 429 / 503 (its Retry-After, else 0.0)."""
    if not isinstance(exc, httpx.HTTPStatusError):
        return None
    if exc.response.status_code not in (429, 503):
        return None
    try:
        return float(exc.response.headers.get("Retry-After", "0"))
    except ValueError:
        return 0.0


def _filter(region: str, names: list[str]) -> str:
    skus = " or ".join(f"armSkuName eq '{n}'" for n in names)
    return (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
        f"armRegionName eq '{region}' and ({skus})"
    )


def _pages(http: httpx.Client, region: str, names: list[str], backoff: Backoff) -> Iterator[Any]:
    url: str | None = RETAIL_PRICES_URL
    params: dict[str, str] | None = {"$filter": _filter(region, names)}
    for _ in range(MAX_PAGES):
        if url is None:
            return

        def get(url: str = url, params: dict[str, str] | None = params) -> Any:
            response = http.get(url, params=params)
            if response.is_error:
                raise httpx.HTTPStatusError(
                    f"HTTP {response.status_code} {response.reason_phrase} from the Retail "
                    "Prices API",
                    request=response.request,
                    response=response,
                )
            return response.json()

        page = backoff.call(get, http_throttle, f"Azure retail prices {region}")
        yield page
        url, params = page.get("NextPageLink"), None


def parse_items(items: Iterable[dict[str, Any]]) -> Prices:
    """Linux pay-as-you-go and spot USD/hour per size (the latest effective price wins)."""
    latest: dict[tuple[str, bool], tuple[str, float]] = {}
    for it in items:
        if it.get("type") != "Consumption" or it.get("currencyCode", "USD") != "USD":
            continue
        if _NOT_LINUX.search(str(it.get("productName", ""))):
            continue
        meter = f"{it.get('meterName', '')} {it.get('skuName', '')}"
        if "Low Priority" in meter or it.get("unitOfMeasure") != "1 Hour":
            continue
        price = float(it.get("unitPrice") or 0)
        if price <= 0:
            continue
        key = (str(it["armSkuName"]), "Spot" in str(it.get("meterName", "")))
        start = str(it.get("effectiveStartDate", ""))
        if key not in latest or start > latest[key][0]:
            latest[key] = (start, price)
    return {key: price for key, (_, price) in latest.items()}


def retail_prices(
    http: httpx.Client, region: str, names: Iterable[str], backoff: Backoff
) -> Prices:
    """Prices of the sizes ``names`` in ``region``, from every page of every query."""
    items: list[dict[str, Any]] = []
    for chunk in chunks(sorted(set(names)), SKUS_PER_QUERY):
        for page in _pages(http, region, chunk, backoff):
            items.extend(page.get("Items", []))
    return parse_items(items)
