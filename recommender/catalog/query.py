"""Selecting offers by the ``catalog list`` filters, cheapest first (CLI and HTTP API alike)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from recommender.catalog.catalog import Catalog

__all__ = ["select_offers"]


def select_offers(
    catalog: Catalog,
    *,
    clouds: Sequence[str] | None = None,
    regions: Sequence[str] | None = None,
    gpus: Sequence[str] | None = None,
    min_gpu_memory_gb: float | None = None,
    max_price: float | None = None,
    spot: bool | None = None,
    gpu_count: int | None = None,
    purchase: Sequence[str] | None = None,
) -> npt.NDArray[np.intp]:
    """Row indices of the offers matching every filter, cheapest first (stable order).

    ``gpus`` takes any spelling of an accelerator name (a SkyPilot name may stand for several
    variants); an unknown name raises
    :class:`~recommender.catalog.names.UnknownAcceleratorError` with suggestions.
    ``gpu_count`` keeps instances with exactly that many devices (a fractional GPU counts 1);
    ``purchase`` the rows bought those ways (on-demand, spot, reservation).
    """
    accelerators = None
    if gpus:
        accelerators = [a.id for name in gpus for a in catalog.names.resolve_all(name)]
    table = catalog.offers
    mask = table.mask(
        clouds=clouds or None,
        regions=regions or None,
        accelerators=accelerators,
        min_gpu_memory_gb=min_gpu_memory_gb,
        max_price=max_price,
        spot=spot,
        min_gpus=gpu_count,
        max_gpus=gpu_count,
        purchase=purchase or None,
    )
    index = mask.nonzero()[0]
    return index[table.price[index].argsort(kind="stable")]
