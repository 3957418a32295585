"""Which way of carrying a baseline's gap holds up held out: variants of the transfer
exponents (``recommender.scoring.transfer``) scored leave-one-source-out.

Each fold's constants are fitted once without its source (``accuracy.modelled_without``);
every variant then fits its exponents on the pairs whose target that fold keeps, from that
fold's modelled rates, and scores the held-out pairs, as ``accuracy.py`` does for the
shipped one (which ``shipped`` reproduces). A variant changes one thing: how the pairs are
grouped for an exponent each (``label``), the distance an exponent fades with
(``distance``), or how much each pair weighs in the fit (``weight``). The last line,
``oracle``, fits the shipped form on the held-out pairs themselves: not a method, the least
error any exponents of that form could reach, so what is left above it is the model's, not
the transfer's.

    python benchmarks/accuracy_transfer_variants.py
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from accuracy import bench_catalog, modelled_without, pairs, predictable
from accuracy_pairs import Pair, peak_ratio
from accuracy_report import CLASSES
from accuracy_transfer import pair_relation
from published import Row, load_rows

from recommender.catalog import Catalog
from recommender.scoring.calibration import prior_calibration
from recommender.scoring.transfer import DECAY_KEY, bandwidth_distance, fit_transfer

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PairTable:
    """Every pair's facts a variant may group, fade or weigh by (index-aligned arrays)."""

    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    relation: npt.NDArray[np.str_]
    bandwidth: FloatArray  # |ln| of the datasheet bandwidth ratio
    compute: FloatArray  # |ln| of the datasheet peak FLOP/s ratio at the pair's precision
    source: npt.NDArray[np.str_]  # the target row's source (its fold)
    cls: npt.NDArray[np.str_]  # the target row's workload class


def pair_table(rows: Sequence[Row], catalog: Catalog, pair_list: Sequence[Pair]) -> PairTable:
    acc = [catalog.accelerator(r.observation.accelerator) for r in rows]
    return PairTable(
        a=np.array([a for a, _ in pair_list], dtype=np.int64),
        b=np.array([b for _, b in pair_list], dtype=np.int64),
        relation=np.array([pair_relation(rows, catalog, a, b) for a, b in pair_list]),
        bandwidth=np.array([bandwidth_distance(acc[a], acc[b]) for a, b in pair_list]),
        compute=np.array([abs(math.log(peak_ratio(rows, catalog, a, b))) for a, b in pair_list]),
        source=np.array([rows[b].source for _, b in pair_list]),
        cls=np.array([rows[b].cls for _, b in pair_list]),
    )


def _equal(_: PairTable, chosen: npt.NDArray[np.bool_]) -> FloatArray:
    return np.ones(len(chosen))


def _per_source(t: PairTable, chosen: npt.NDArray[np.bool_]) -> FloatArray:
    """Each source's kept pairs weigh 1 in all: a source with many pairs no longer sets the
    exponents for the rest."""
    count = Counter(t.source[chosen].tolist())
    return np.array([1.0 / count[s] if count[s] else 0.0 for s in t.source])


@dataclass(frozen=True)
class Variant:
    name: str
    label: Callable[[PairTable], npt.NDArray[np.str_]] = lambda t: t.relation
    # the shipped fade (transfer.roofline_distance): the mean of the two distances
    distance: Callable[[PairTable], FloatArray] = lambda t: (t.bandwidth + t.compute) / 2.0
    weight: Callable[[PairTable, npt.NDArray[np.bool_]], FloatArray] = _equal
    oracle: bool = False  # fitted on the held-out pairs: a bound, not a method


VARIANTS = (
    Variant("shipped (relation, roofline fade)"),
    Variant("each source weighs alike", weight=_per_source),
    Variant(
        "each source weighs sqrt",
        weight=lambda t, chosen: np.sqrt(_per_source(t, chosen)),
    ),
    Variant("fade by bandwidth distance alone", distance=lambda t: t.bandwidth),
    Variant("fade by peak FLOP/s distance", distance=lambda t: t.compute),
    Variant("fade by the larger of the two", distance=lambda t: np.maximum(t.bandwidth, t.compute)),
    Variant(
        "exponent per relation and class",
        label=lambda t: np.char.add(np.char.add(t.relation, ":"), t.cls),
    ),
    Variant("oracle: fitted on the held-out pairs", oracle=True),
)


def held_out_errors(
    rows: Sequence[Row],
    t: PairTable,
    folds: dict[str, FloatArray],
    variant: Variant,
) -> FloatArray:
    """Each pair's error (%) with a baseline, its target's fold scoring it with exponents the
    variant fitted on the pairs that fold keeps (NaN: a pair the fold's model cannot place)."""
    measured = np.array([r.observation.throughput for r in rows])
    labels, distance = variant.label(t), variant.distance(t)
    out = np.full(len(t.a), np.nan)
    for source, modelled in folds.items():
        placed = (modelled[t.a] > 0) & (modelled[t.b] > 0)
        log_gap = np.log(measured[t.a] / np.where(placed, modelled[t.a], 1.0))
        log_miss = np.log(np.where(placed, modelled[t.b], 1.0) / measured[t.b])
        held = placed & (t.source == source)
        fit_on = held if variant.oracle else placed & (t.source != source)
        if not np.any(held) or not np.any(fit_on):
            continue
        weight = variant.weight(t, fit_on)
        fitted = fit_transfer(
            np.exp(log_gap[fit_on]),
            np.exp(log_miss[fit_on]),
            labels[fit_on].tolist(),
            distance[fit_on],
            weight[fit_on],
        )
        alpha = np.array([fitted.get(k, 1.0) for k in labels]) * np.exp(
            -fitted.get(DECAY_KEY, 0.0) * distance
        )
        error = np.abs(np.exp(alpha * log_gap + log_miss) - 1.0) * 100.0
        out[held] = error[held]
    return out


def class_means(t: PairTable, errors: FloatArray) -> dict[str, float]:
    scored = ~np.isnan(errors)
    out = {c: float(np.mean(errors[scored & (t.cls == c)])) for c in CLASSES}
    out["all"] = float(np.mean(errors[scored]))
    return out


def fold_models(
    rows: list[Row], catalog: Catalog
) -> dict[str, FloatArray]:  # pragma: no cover - minutes of fitting
    priors = prior_calibration()
    folds = {}
    for source in sorted({r.source for r in rows}):
        folds[source] = modelled_without(rows, catalog, priors, lambda r, s=source: r.source == s)
        print(f"  fitted without {source}", flush=True)
    return folds


def main() -> int:  # pragma: no cover - minutes of fitting
    catalog = bench_catalog()
    rows = predictable(load_rows(catalog)[0], catalog, prior_calibration())
    t = pair_table(rows, catalog, pairs(rows))
    print(f"{len(rows)} rows, {len(t.a)} pairs; one fit per held-out source:")
    folds = fold_models(rows, catalog)
    print("\nleave-one-source-out, engine + baseline, mean |error| % by the target's class")
    print(f"  {'variant':<40}" + "".join(f"{c:>13}" for c in (*CLASSES, "all")))
    for variant in VARIANTS:
        means = class_means(t, held_out_errors(rows, t, folds, variant))
        cells = "".join(f"{means[c]:13.2f}" for c in (*CLASSES, "all"))
        print(f"  {variant.name:<40}{cells}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
