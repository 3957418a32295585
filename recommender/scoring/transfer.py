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

Parts of one relation are not all alike: the share two parts have in common fades the more
their rooflines differ, as the correlation of a random field fades with distance. The
relation's ``alpha`` is therefore taken at zero distance and multiplied by
``exp(-bandwidth_decay x d)``, ``d`` the mean of the |ln| ratios of the two parts' datasheet
memory bandwidths and of their datasheet peak FLOP/s at the precision the workload's matrices
run at (``roofline_distance``): a baseline on an A100 says more about an H100 (1.6x its
bandwidth, 3.2x its bf16 peak) than about a T4 (a sixth of its bandwidth, a quarter of its
fp16 peak). The fade by bandwidth alone, shipped before 2026-12-07, is one of the forms
``benchmarks/accuracy_transfer_variants.py`` scores.

The exponents are fitted (``fit_transfer``) on pairs of published measurements of one
workload on two parts: the ``alpha`` per relation that minimises the mean absolute error of
predicting one part's rate from the other's. ``benchmarks/accuracy.py --write`` fits them on
every source with the constants it ships; its cross-validation fits them without the source it
scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator, Precision

__all__ = [
    "DECAY_KEY",
    "HABITAT",
    "RELATIONS",
    "Relation",
    "bandwidth_distance",
    "exponent",
    "fit_transfer",
    "peak_distance",
    "relation",
    "roofline_distance",
    "transfer_exponents",
]

Relation = Literal["accelerator", "architecture", "other"]
RELATIONS: tuple[Relation, ...] = get_args(Relation)
# Candidate exponents: every 0.05 from 0 (the model alone) to 1 (the whole gap carries over).
# The objective (a mean absolute error) is piecewise smooth in alpha, so a grid this fine
# finds its minimum to well within the fold-to-fold spread of the fitted values.
ALPHA_GRID = np.linspace(0.0, 1.0, 21)
# The calibration's key for the decay per unit of |ln bandwidth ratio|, and its candidates:
# 0 (no decay) to 2 (the shared share falls to 1/e at a 1.65x bandwidth ratio).
DECAY_KEY = "bandwidth_decay"
DECAY_GRID = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0])
# The whole gap carried to every part, with no decay: Habitat-style scaling, the exponents a
# calibration without fitted ones has.
HABITAT: dict[str, float] = {**dict.fromkeys(RELATIONS, 1.0), DECAY_KEY: 0.0}


def relation(a: Accelerator, b: Accelerator) -> Relation:
    """How the part a prediction is for (``b``) relates to the measured one (``a``)."""
    if a.id == b.id:
        return "accelerator"
    return "architecture" if a.architecture == b.architecture else "other"


def bandwidth_distance(a: Accelerator, b: Accelerator) -> float:
    """|ln| of the ratio of two parts' datasheet memory bandwidths."""
    return abs(math.log(b.memory_bandwidth_gbs / a.memory_bandwidth_gbs))


def peak_distance(a: Accelerator, b: Accelerator, precision: Precision) -> float:
    """|ln| of the ratio of two parts' datasheet peak FLOP/s at ``precision`` (each at the
    precision its matrix units run it at: ``hardware.datasheet_peak_tflops``)."""
    # hardware imports calibration, which imports this module's HABITAT: import it here.
    from recommender.scoring.hardware import datasheet_peak_tflops

    return abs(math.log(datasheet_peak_tflops(b, precision) / datasheet_peak_tflops(a, precision)))


def roofline_distance(a: Accelerator, b: Accelerator, precision: Precision) -> float:
    """How far apart two parts' rooflines are: the mean of their bandwidth and peak
    distances."""
    return 0.5 * (bandwidth_distance(a, b) + peak_distance(a, b, precision))


def exponent(
    a: Accelerator, b: Accelerator, transfer: dict[str, float], precision: Precision
) -> float:
    """The exponent of a gap measured on ``a`` that ``b`` takes: its relation's (1 where
    ``transfer`` lacks it), faded by the roofline distance at ``transfer``'s decay (none
    where it lacks one)."""
    decay = transfer.get(DECAY_KEY, 0.0)
    far = roofline_distance(a, b, precision)
    return transfer.get(relation(a, b), 1.0) * math.exp(-decay * far)


def transfer_exponents(
    accelerators: Sequence[Accelerator],
    measured: int,
    transfer: dict[str, float],
    precision: Precision,
) -> npt.NDArray[np.float64]:
    """The :func:`exponent` of the measured gap on every accelerator of a catalog (by index),
    for a measurement on ``accelerators[measured]`` of a workload in ``precision``."""
    a = accelerators[measured]
    return np.array([exponent(a, b, transfer, precision) for b in accelerators])


def fit_transfer(
    gaps: npt.ArrayLike,
    misses: npt.ArrayLike,
    relations: Sequence[str],
    distances: npt.ArrayLike | None = None,
    weights: npt.ArrayLike | None = None,
) -> dict[str, float]:
    """Exponents per relation, and the distance decay (``DECAY_KEY``, which keeps the name it
    had when the distance was the bandwidth's alone), from pairs: ``gaps`` is measured /
    modelled rate on the baseline part, ``misses`` modelled / measured rate on the target
    part, ``relations`` how the target relates to the baseline and ``distances`` their
    ``roofline_distance`` (None: no decay is fitted). A pair's error with exponent alpha is
    ``|gap ** alpha x miss - 1|``; for each candidate decay, each relation's alpha minimises
    its pairs' mean, and the decay with the least total error wins. A relation with no pairs
    is left out (it keeps whatever the calibration had). ``weights`` (None: every pair alike)
    weigh each pair in those means, and a label outside ``RELATIONS`` gets an exponent of its
    own, after the relations: both for trying other groupings of the pairs
    (benchmarks/accuracy_transfer_variants.py)."""
    log_gap = np.log(np.asarray(gaps, dtype=np.float64))
    log_miss = np.log(np.asarray(misses, dtype=np.float64))
    far = np.zeros_like(log_gap) if distances is None else np.asarray(distances, np.float64)
    kinds = np.asarray(relations)
    weight = np.ones_like(log_gap) if weights is None else np.asarray(weights, np.float64)
    labels = [*RELATIONS, *sorted(set(kinds.tolist()) - set(RELATIONS))]
    best: tuple[float, dict[str, float]] | None = None
    for decay in DECAY_GRID if distances is not None else DECAY_GRID[:1]:
        out = {DECAY_KEY: float(decay)} if distances is not None else {}
        total = 0.0
        for kind in labels:
            chosen = kinds == kind
            if not np.any(chosen):
                continue
            alpha = ALPHA_GRID[:, None] * np.exp(-decay * far[chosen])[None, :]
            miss = np.abs(np.exp(alpha * log_gap[chosen] + log_miss[chosen]) - 1.0)
            errors = (miss * weight[chosen]).sum(axis=1)
            pick = int(np.argmin(errors))
            out[kind] = round(float(ALPHA_GRID[pick]), 2)
            total += float(errors[pick])
        if best is None or total < best[0]:
            best = (total, out)
    assert best is not None
    return best[1]
