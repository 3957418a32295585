"""The baseline-transfer exponents (``recommender.scoring.transfer``) on the published pairs.

A pair (a, b) is two rows of one workload on other hardware: ``a``'s measurement is the
baseline, ``b`` the row predicted. ``fitted_transfer`` fits the exponents on the pairs whose
target a fold keeps, from that fold's modelled rates; ``accuracy.py`` scores the held-out
pairs with them, and ``--write`` ships the ones fitted on every pair.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from published import Row

from recommender.catalog import Catalog
from recommender.scoring.transfer import (
    DECAY_KEY,
    HABITAT,
    RELATIONS,
    Relation,
    exponent,
    fit_transfer,
    relation,
    roofline_distance,
)

__all__ = [
    "HABITAT",
    "Transfer",
    "fitted_transfer",
    "pair_alpha",
    "pair_relation",
    "transfer_text",
]

Transfer = dict[str, float]


def pair_relation(rows: Sequence[Row], catalog: Catalog, a: int, b: int) -> Relation:
    """How row ``b``'s accelerator relates to baseline row ``a``'s."""
    acc_a = catalog.accelerator(rows[a].observation.accelerator)
    return relation(acc_a, catalog.accelerator(rows[b].observation.accelerator))


def pair_alpha(rows: Sequence[Row], catalog: Catalog, transfer: Transfer, a: int, b: int) -> float:
    """The exponent of row ``a``'s gap that ``transfer`` carries to row ``b``'s part (the
    product's ``transfer.exponent``)."""
    acc_a = catalog.accelerator(rows[a].observation.accelerator)
    acc_b = catalog.accelerator(rows[b].observation.accelerator)
    return exponent(acc_a, acc_b, transfer, rows[a].observation.workload.precision)


def fitted_transfer(
    rows: Sequence[Row],
    catalog: Catalog,
    modelled: np.ndarray,
    pair_list: Sequence[tuple[int, int]],
    held_out: Collection[int] = (),
) -> Transfer:
    """Exponents fitted on the pairs whose target row is not ``held_out`` (a relation with no
    such pair keeps Habitat's 1)."""
    chosen = [
        (a, b) for a, b in pair_list if b not in held_out and modelled[a] > 0 and modelled[b] > 0
    ]
    if not chosen:
        return dict(HABITAT)
    gaps = [rows[a].observation.throughput / float(modelled[a]) for a, _ in chosen]
    misses = [float(modelled[b]) / rows[b].observation.throughput for _, b in chosen]
    kinds = [pair_relation(rows, catalog, a, b) for a, b in chosen]
    far = [
        roofline_distance(
            catalog.accelerator(rows[a].observation.accelerator),
            catalog.accelerator(rows[b].observation.accelerator),
            rows[a].observation.workload.precision,
        )
        for a, b in chosen
    ]
    return {**HABITAT, **fit_transfer(gaps, misses, kinds, far)}


def transfer_text(transfer: Transfer) -> str:
    return " ".join(f"{k[:4]} {transfer[k]:.2f}" for k in (*RELATIONS, DECAY_KEY))
