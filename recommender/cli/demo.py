"""``recommender demo``: what ``make run`` shows until the service exists.

Loads the bundled catalog, reports its size and any warnings, and prints the cheapest
on-demand offer for each accelerator: a first answer to "where is X cheapest right now?".
"""

from __future__ import annotations

import numpy as np

from recommender.cli._app import CatalogDirOption, app, load_catalog_or_exit
from recommender.cli._output import out, table

__all__ = ["demo"]


@app.command(hidden=True)
def demo(catalog_dir: CatalogDirOption = None) -> None:
    """Summarise the catalog and show the cheapest on-demand offer per accelerator."""
    catalog = load_catalog_or_exit(catalog_dir)
    offers = catalog.offers
    out.print(
        f"Catalog: {len(catalog.accelerators)} accelerators, {len(offers)} offers in "
        f"{len(offers.region_names)} regions of {', '.join(offers.cloud_names)}; "
        f"{len(catalog.warnings)} data warning(s) (see `recommender catalog validate`)."
    )
    rows = []
    for code, acc in enumerate(offers.accelerators):
        idx = np.flatnonzero((offers.acc == code) & ~offers.spot)
        if not len(idx):
            continue
        per_gpu = offers.price[idx] / offers.gpus[idx]
        best = offers.offer(int(idx[int(per_gpu.argmin())]))
        rows.append(
            (
                acc.id,
                best.cloud,
                best.region,
                best.instance_type,
                best.gpus,
                f"{best.price_per_hour:.3f}",
                f"{best.price_per_hour / best.gpus:.3f}",
            )
        )
    rows.sort(key=lambda r: float(r[6]))
    out.print(
        table(
            "Cheapest on-demand offer per accelerator (USD/h)",
            [
                "accelerator",
                "cloud",
                "region",
                "instance",
                ("GPUs", "right"),
                ("instance", "right"),
                ("per GPU", "right"),
            ],
            rows,
        )
    )
