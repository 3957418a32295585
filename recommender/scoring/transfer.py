"""How much of a measurement's gap to the model carries over to other hardware.

A baseline (or a probe profile) of the workload on accelerator A is ``g`` times slower than
the model says. Part of that gap belongs to the workload (its kernels, its software, a cost
the model leaves out) and follows it to every accelerator; part belongs to A (how well those
kernels suit A's chip, A's clocks, A's host) and stays there. Write the log gap on any part
as ``u + v(architecture) + e(part)``: the workload's share ``u``, the share it has on one chip
architecture ``v`` and the part's own ``e``. The best linear predictor of the gap on B from
the gap seen on A is ``alpha x log g`` (a regression through the origin, as in the shrinkage
of random effects: Searle, Casella and McCulloch, *Variance Components*, 1992, ch. 3), with

    alpha = cov(gap_A, gap_B) / var(gap_A)
          = (var u + var v) / (var u + var v + var e)   B is A's architecture
          =  var u          / (var u + var v + var e)   B is another architecture

and close to 1 where B is A itself with another GPU count. So a measurement scales the model
by ``g ** alpha`` on B, with one ``alpha`` per relation (``RELATIONS``): Habitat-style scaling
(Yu et al., USENIX ATC 2021) is ``alpha = 1`` everywhere, and the model alone ``alpha = 0``.

The exponents are fitted (``fit_transfer``) on pairs of published measurements of one
workload on two parts: the ``alpha`` per relation that minimises the mean absolute error of
predicting one part's rate from the other's. ``benchmarks/accuracy.py --write`` fits them on
every source with the constants it ships; its cross-validation fits them without the source it
scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator

__all__ = ["RELATIONS", "Relation", "fit_transfer", "relation", "transfer_exponents"]

Relation = Literal["accelerator", "architecture", "other"]
RELATIONS: tuple[Relation, ...] = get_args(Relation)
# Candidate exponents: every 0.05 from 0 (the model alone) to 1 (the whole gap carries over).
# The objective (a mean absolute error) is piecewise smooth in alpha, so a grid this fine
# finds its minimum to well within the fold-to-fold spread of the fitted values.
ALPHA_GRID = np.linspace(0.0, 1.0, 21)


def relation(a: Accelerator, b: Accelerator) -> Relation:
    """How the part a prediction is for (``b``) relates to the measured one (``a``)."""
    if a.id == b.id:
        return "accelerator"
    return "architecture" if a.architecture == b.architecture else "other"


def transfer_exponents(
    accelerators: Sequence[Accelerator], measured: int, exponents: dict[str, float]
) -> npt.NDArray[np.float64]:
    """The exponent of the measured gap on every accelerator of a catalog (by index), for a
    measurement on ``accelerators[measured]``; a relation ``exponents`` lacks gets 1."""
    a = accelerators[measured]
    return np.array([exponents.get(relation(a, b), 1.0) for b in accelerators])


def fit_transfer(
    gaps: npt.ArrayLike, misses: npt.ArrayLike, relations: Sequence[Relation]
) -> dict[str, float]:
    """Exponents per relation from pairs: ``gaps`` is measured / modelled rate on the baseline
    part, ``misses`` modelled / measured rate on the target part, ``relations`` how the target
    relates to the baseline. A pair's error with exponent alpha is
    ``|gap ** alpha x miss - 1|``; each relation's alpha minimises its pairs' mean. A
    relation with no pairs is left out (it keeps whatever the calibration had)."""
    log_gap = np.log(np.asarray(gaps, dtype=np.float64))
    log_miss = np.log(np.asarray(misses, dtype=np.float64))
    kinds = np.asarray(relations)
    out: dict[str, float] = {}
    for kind in RELATIONS:
        chosen = kinds == kind
        if not np.any(chosen):
            continue
        errors = np.abs(
            np.exp(ALPHA_GRID[:, None] * log_gap[chosen][None, :] + log_miss[chosen][None, :]) - 1.0
        ).mean(axis=1)
        out[kind] = round(float(ALPHA_GRID[int(np.argmin(errors))]), 2)
    return out
