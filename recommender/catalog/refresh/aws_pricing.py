"""AWS prices: on-demand from the Price List API, spot from EC2's spot price history.

The Price List API (``pricing`` client, served from us-east-1) answers ``get_products`` with
``PriceList``: one JSON *string* per product, whose ``terms.OnDemand`` holds the hourly
``pricePerUnit.USD``. We ask per region for Linux, shared tenancy, no pre-installed software,
capacity status "Used" (the plain on-demand price), first by instance family ("GPU instance",
"Machine Learning ASIC Instances"), then type by type for whatever those did not cover.
Spot prices are the latest ``describe_spot_price_history`` entry per availability zone; the
region's spot price is the cheapest zone's.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Any

from recommender.catalog.refresh.base import chunks
from recommender.catalog.refresh.retry import Backoff

__all__ = [
    "PRICING_REGION",
    "aws_throttle",
    "on_demand_prices",
    "parse_product",
    "spot_prices",
]

PRICING_REGION = "us-east-1"
PRICING_FAMILIES = ("GPU instance", "Machine Learning ASIC Instances")
LINUX_SPOT = ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"]
THROTTLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "SlowDown",
        "EC2ThrottledException",
    }
)


def error_code(exc: BaseException) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (duck-typed), else ``None``."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    return str(code) if code else None


def aws_throttle(exc: BaseException) -> float | None:
    """0.0 when ``exc`` is AWS saying "slow down", else ``None``."""
    return 0.0 if error_code(exc) in THROTTLE_CODES else None


def parse_product(text: str) -> tuple[str, float] | None:
    """``(instance type, USD/hour)`` from one PriceList entry, or ``None`` if not plain usage."""
    doc = json.loads(text)
    attrs = doc.get("product", {}).get("attributes", {})
    if "BoxUsage" not in attrs.get("usagetype", "") or "instanceType" not in attrs:
        return None
    if attrs.get("operation", "RunInstances") != "RunInstances":
        return None  # SQL Server, BYOL and friends
    for term in doc.get("terms", {}).get("OnDemand", {}).values():
        for dim in term.get("priceDimensions", {}).values():
            usd = float(dim.get("pricePerUnit", {}).get("USD", "0") or 0)
            if dim.get("unit") == "Hrs" and usd > 0:
                return str(attrs["instanceType"]), usd
    return None


def _filters(region: str, field: str, value: str) -> list[dict[str, str]]:
    terms = [
        ("regionCode", region),
        ("operatingSystem", "Linux"),
        ("tenancy", "Shared"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
        (field, value),
    ]
    return [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in terms]


def _products(pricing: Any, backoff: Backoff, region: str, field: str, value: str) -> list[str]:
    def pages() -> list[dict[str, Any]]:
        paginator = pricing.get_paginator("get_products")
        return list(
            paginator.paginate(
                ServiceCode="AmazonEC2",
                Filters=_filters(region, field, value),
                FormatVersion="aws_v1",
            )
        )

    got = backoff.call(pages, aws_throttle, f"pricing get_products {region} {value}")
    return [item for page in got for item in page.get("PriceList", [])]


def on_demand_prices(
    pricing: Any, backoff: Backoff, region: str, wanted: Iterable[str]
) -> dict[str, float]:
    """On-demand USD/hour of each type in ``wanted`` that has one in ``region``."""
    want = set(wanted)
    found: dict[str, float] = {}

    def take(items: list[str]) -> None:
        for text in items:
            parsed = parse_product(text)
            if parsed and parsed[0] in want:
                name, usd = parsed
                found[name] = min(usd, found.get(name, usd))

    for family in PRICING_FAMILIES:
        take(_products(pricing, backoff, region, "instanceFamily", family))
    for name in sorted(want - set(found)):
        take(_products(pricing, backoff, region, "instanceType", name))
    return found


def _latest(
    entries: Iterable[dict[str, Any]],
) -> dict[tuple[str, str], tuple[dt.datetime, float]]:
    latest: dict[tuple[str, str], tuple[dt.datetime, float]] = {}
    for e in entries:
        key = (str(e["InstanceType"]), str(e["AvailabilityZone"]))
        stamp = e["Timestamp"]
        if isinstance(stamp, str):
            stamp = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if key not in latest or stamp > latest[key][0]:
            latest[key] = (stamp, float(e["SpotPrice"]))
    return latest


def spot_prices(
    ec2: Any,
    backoff: Backoff,
    region: str,
    zones_of: dict[str, tuple[str, ...]],
    now: dt.datetime | None = None,
) -> dict[str, float]:
    """Current spot USD/hour per type: the cheapest of the zones in ``zones_of[type]``."""
    start = now or dt.datetime.now(dt.UTC)
    entries: list[dict[str, Any]] = []
    for chunk in chunks(sorted(zones_of), 50):

        def pages(chunk: list[str] = chunk) -> list[dict[str, Any]]:
            paginator = ec2.get_paginator("describe_spot_price_history")
            return list(
                paginator.paginate(
                    InstanceTypes=chunk, ProductDescriptions=LINUX_SPOT, StartTime=start
                )
            )

        got = backoff.call(pages, aws_throttle, f"ec2 describe_spot_price_history {region}")
        entries.extend(e for page in got for e in page.get("SpotPriceHistory", []))
    best: dict[str, float] = {}
    for (name, zone), (_, price) in _latest(entries).items():
        if zone in zones_of.get(name, ()) and price > 0:
            best[name] = min(price, best.get(name, price))
    return best
