"""GCP prices from the Cloud Billing catalog: Compute Engine SKUs per core, GiB of RAM and GPU.

GCP bills a GPU machine as parts: "A2 Instance Core running in Americas" per vCPU-hour,
"A2 Instance Ram running in Americas" per GiB-hour, "Nvidia Tesla A100 GPU running in
Americas" per GPU-hour (spot: usage type ``Preemptible``, descriptions like "Spot
Preemptible A2 Instance Core ..." and "Nvidia Tesla A100 GPU attached to Spot Preemptible
VMs ..."). Each SKU lists the regions it applies to (``serviceRegions``) and its price as
tiered rates of ``units`` + ``nanos`` USD. :class:`SkuPrices` indexes them so that
``host(series, region) * shape + gpu(type, region) * count`` is the instance price.
Commitments, custom, sole-tenant, reserved, premium and Dynamic Workload Scheduler SKUs are
left out (SkyPilot's ``fetch_gcp.py`` prunes the same).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["COMPUTE_ENGINE_SERVICE", "GPU_SKU_NAMES", "SkuPrices", "series_description"]

COMPUTE_ENGINE_SERVICE = "services/6F81-5844-456A"

# GCP accelerator type -> how its SKU descriptions name it.
GPU_SKU_NAMES: dict[str, tuple[str, ...]] = {
    "nvidia-tesla-t4": ("T4 GPU",),
    "nvidia-tesla-v100": ("V100 GPU",),
    "nvidia-tesla-p100": ("P100 GPU",),
    "nvidia-tesla-p4": ("P4 GPU",),
    "nvidia-tesla-a100": ("A100 GPU",),
    "nvidia-a100-80gb": ("A100 80GB GPU",),
    "nvidia-l4": ("L4 GPU",),
    "nvidia-h100-80gb": ("H100 80GB GPU",),
    "nvidia-h100-mega-80gb": ("H100 80GB Mega GPU", "H100 Mega 80GB GPU", "H100 80GB Plus GPU"),
    "nvidia-h200-141gb": ("H200 141GB GPU",),
    "nvidia-b200": ("B200 (1 gpu slice)",),
}
_SERIES = {"n1": "N1 Predefined Instance"}
_EXCLUDED = re.compile(
    r"custom|premium|reserved|sole tenancy|commitment|dws|defined duration|calendar|"
    r"virtual workstation|\bvws\b",
    re.IGNORECASE,
)
_USAGE = {"OnDemand": False, "Preemptible": True}


def series_description(series: str) -> str:
    """How the SKUs name a machine series: ``a2`` -> ``A2 Instance``."""
    return _SERIES.get(series, f"{series.upper()} Instance")


def _gpu_tokens(accelerator_type: str) -> tuple[str, ...]:
    known = GPU_SKU_NAMES.get(accelerator_type)
    if known:
        return known
    bare = re.sub(r"^(nvidia-)?(tesla-)?", "", accelerator_type)
    return (f"{bare.replace('-', ' ').upper()} GPU",)


def _mentions(description: str, token: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(token)}", description, re.IGNORECASE) is not None


@dataclass(frozen=True, slots=True)
class _Rate:
    description: str
    group: str
    spot: bool
    regions: frozenset[str]
    unit: str
    usd: float


def _rate(sku: Any) -> _Rate | None:
    category = sku.category
    if category.resource_family != "Compute" or category.usage_type not in _USAGE:
        return None
    if _EXCLUDED.search(sku.description) or not sku.pricing_info:
        return None
    expression = sku.pricing_info[0].pricing_expression
    tiers = sorted(expression.tiered_rates, key=lambda t: t.start_usage_amount)
    if not tiers:
        return None
    price = tiers[0].unit_price
    if price.currency_code and price.currency_code != "USD":
        return None
    usd = int(price.units) + price.nanos / 1e9
    return _Rate(
        sku.description,
        category.resource_group,
        _USAGE[category.usage_type],
        frozenset(sku.service_regions),
        expression.usage_unit,
        usd,
    )


class SkuPrices:
    """Compute Engine SKUs, indexed for "price of this part in this region"."""

    def __init__(self, skus: Iterable[Any]) -> None:
        self.rates = sorted(
            (r for s in skus if (r := _rate(s)) is not None), key=lambda r: r.description
        )

    def __len__(self) -> int:
        return len(self.rates)

    def _find(self, region: str, spot: bool, test: Any) -> float | None:
        found = [r.usd for r in self.rates if r.spot == spot and region in r.regions and test(r)]
        return min(found) if found else None

    def host(self, series: str, region: str, *, spot: bool) -> tuple[float, float] | None:
        """(USD per vCPU-hour, USD per GiB-hour) of ``series`` hosts in ``region``."""
        name = series_description(series)

        def part(word: str, unit: str) -> float | None:
            token = f"{name} {word}"
            return self._find(
                region,
                spot,
                lambda r: r.group != "GPU" and r.unit == unit and _mentions(r.description, token),
            )

        core, ram = part("Core", "h"), part("Ram", "GiBy.h")
        return None if core is None or ram is None else (core, ram)

    def gpu(self, accelerator_type: str, region: str, *, spot: bool) -> float | None:
        """USD per GPU-hour of ``accelerator_type`` in ``region``."""
        tokens = _gpu_tokens(accelerator_type)
        return self._find(
            region,
            spot,
            lambda r: (
                r.group == "GPU"
                and r.unit == "h"
                and any(_mentions(r.description, t) for t in tokens)
            ),
        )
