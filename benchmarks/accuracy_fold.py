"""One leave-one-source-out fold, row by row: where the engine goes wrong on one source.

``accuracy.py`` reports each held-out source as one figure; this opens one of them. It fits
the constants on every other source (as ``accuracy.py`` does for that fold: the same
stratified subsample, the same priors) and prints, for the held-out source:

- the fold's line of ``accuracy.py`` (its errors with and without a baseline, the
  geometric-mean rule's, and the baseline-transfer exponents fitted on the pairs it keeps),
  the same figures ``accuracy.py`` prints for that source;
- per workload key (rows that ran the same workload on other hardware), the mean |error| of
  its baseline -> target pairs, carried with those exponents, against the geometric-mean
  rule's, worst excess first (their pair-weighted mean is the fold line's);
- per group, the geometric mean of modelled / measured rate over its absolute rows (> 1: the
  engine is too fast) and their mean |error|;
- with ``--rows``, every row: accelerator, GPUs, measured and modelled rate;
- with ``--constants``, the constants the fold fitted beside the shipped ones
  (``calibration.json``, fitted on every source), those that moved most first: what the
  held-out source alone was pulling on.

    python benchmarks/accuracy_fold.py mlperf-inference-v5.1
    python benchmarks/accuracy_fold.py tgi-sagemaker --rows
    python benchmarks/accuracy_fold.py mlperf-inference-v5.1 --constants
    python benchmarks/accuracy_fold.py timm --priors      # the priors alone, nothing fitted

A fold takes about a minute on two cores; ``accuracy.py`` prints the source names.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from accuracy import (
    bench_catalog,
    evaluate,
    fold_calibration,
    fold_line,
    pair_errors,
    predictable,
    score_fold,
)
from accuracy_pairs import pairs
from accuracy_report import Scores, group_bias
from accuracy_transfer import HABITAT, Transfer
from published import Row, load_rows

from recommender.catalog import Catalog
from recommender.scoring.calibrate import modelled_throughput
from recommender.scoring.calibration import (
    Calibration,
    default_calibration,
    prior_calibration,
)


@dataclass(frozen=True)
class KeyErrors:
    key: str
    pairs: int
    engine: float  # mean |error| % with a baseline
    geomean: float  # the geometric-mean rule's, on the same pairs


def held_out_calibration(
    rows: list[Row], catalog: Catalog, priors: Calibration, source: str, refit: bool = True
) -> Calibration:
    """The constants fitted without ``source`` (the priors when ``refit`` is off)."""
    if not refit:
        return priors
    return fold_calibration(rows, catalog, priors, lambda r: r.source == source)


def held_out_modelled(
    rows: list[Row], catalog: Catalog, priors: Calibration, source: str, refit: bool = True
) -> np.ndarray:
    """Every row's modelled rate under constants fitted without ``source`` (the priors when
    ``refit`` is off)."""
    cal = held_out_calibration(rows, catalog, priors, source, refit)
    return modelled_throughput([r.observation for r in rows], catalog, cal)


@dataclass(frozen=True)
class Drift:
    name: str  # the constant, as calibration.json names it ("compute.hopper:tensor")
    fold: float | None  # fitted without the held-out source (None: the fold has no such key)
    shipped: float | None  # fitted on every source


def _numbers(cal: Calibration) -> dict[str, float]:
    """The calibration's numeric constants that a fold fits, a dict's entries as
    ``field.key``. The baseline-transfer exponents are fitted apart, on the fold's pairs
    (its line prints them), and a fold's calibration carries the priors' in their place."""
    out: dict[str, float] = {}
    for name, value in cal.to_json().items():
        if name == "baseline_transfer":
            continue
        if isinstance(value, dict):
            out.update(
                {f"{name}.{k}": float(v) for k, v in value.items() if isinstance(v, int | float)}
            )
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def constant_drift(fold: Calibration, shipped: Calibration, least: float = 0.05) -> list[Drift]:
    """The constants that differ by more than ``least`` (relative) between the fold's fit and
    the shipped one, or that only one of them has, the largest move (in log ratio) first."""
    a, b = _numbers(fold), _numbers(shipped)
    out = []
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)
        if (
            x is not None
            and y is not None
            and (x == y or (x > 0 and y > 0 and abs(x / y - 1.0) <= least))
        ):
            continue
        out.append(Drift(name, x, y))

    def move(d: Drift) -> float:
        if d.fold is None or d.shipped is None or d.fold <= 0 or d.shipped <= 0:
            return math.inf
        return abs(math.log(d.fold / d.shipped))

    return sorted(out, key=lambda d: -move(d))


def key_errors(
    rows: list[Row],
    catalog: Catalog,
    modelled: np.ndarray,
    source: str,
    transfer: Transfer = HABITAT,
) -> list[KeyErrors]:
    """Pairs whose target is in ``source`` (the baseline's gap carried by ``transfer``), by
    workload key, worst excess over the geometric-mean rule first."""
    by_key = pair_errors(
        rows,
        catalog,
        modelled,
        lambda b: b.key if b.source == source else None,
        lambda b: transfer,
    )
    out = [
        KeyErrors(
            key=key,
            pairs=len(errs),
            engine=statistics.fmean(e for e, _ in errs),
            geomean=statistics.fmean(g for _, g in errs),
        )
        for key, errs in by_key.items()
    ]
    return sorted(out, key=lambda k: k.pairs * (k.geomean - k.engine))


def fold_scores(
    rows: list[Row], catalog: Catalog, modelled: np.ndarray, source: str, refit: bool = True
) -> tuple[dict[str, Scores], Transfer]:
    """``source``'s errors as ``accuracy.py`` scores its fold (``modelled`` without it), with
    the transfer exponents fitted on the pairs it keeps; the priors alone (``refit`` off)
    carry the whole gap, as ``accuracy.py --priors`` does."""
    members = [i for i, r in enumerate(rows) if r.source == source]
    pair_list = pairs(rows)
    if not refit:
        return evaluate(rows, catalog, modelled, members, pair_list), HABITAT
    return score_fold(rows, catalog, modelled, members, pair_list)


def groups_in(source: str) -> Callable[[Row], str | None]:
    """A row's group (its key's first field: the source's run) where it is ``source``'s."""
    return lambda r: r.key.split("|")[0] if r.source == source else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="the source family to hold out (accuracy.py names them)")
    parser.add_argument("--rows", action="store_true", help="also print every held-out row")
    parser.add_argument("--priors", action="store_true", help="score the priors, no fitting")
    parser.add_argument(
        "--constants",
        action="store_true",
        help="also print the fold's constants beside the shipped ones",
    )
    args = parser.parse_args()
    catalog = bench_catalog()
    priors = prior_calibration()
    rows = predictable(load_rows(catalog)[0], catalog, priors)
    sources = sorted({r.source for r in rows})
    if args.source not in sources:
        parser.error(f"no source {args.source!r}; the sources are: {', '.join(sources)}")
    cal = held_out_calibration(rows, catalog, priors, args.source, refit=not args.priors)
    modelled = modelled_throughput([r.observation for r in rows], catalog, cal)
    part, transfer = fold_scores(rows, catalog, modelled, args.source, refit=not args.priors)
    print(fold_line(args.source, sum(r.source == args.source for r in rows), part, transfer))
    print("\nwith a baseline, by workload key (worst against the geometric-mean rule first):")
    for k in key_errors(rows, catalog, modelled, args.source, transfer):
        print(
            f"  {k.key[:90]:<90} pairs {k.pairs:>4}  engine {k.engine:6.1f} %  "
            f"geomean {k.geomean:6.1f} %"
        )
    print("\nwithout a baseline, by group (modelled / measured, geometric mean):")
    for g in group_bias(rows, modelled, groups_in(args.source)):
        print(
            f"  {g.group[:70]:<70} rows {g.rows:>3}  ratio {g.ratio:5.2f}  |error| {g.error:6.1f} %"
        )
    if args.constants:
        print(f"\nconstants fitted without {args.source} (beside the shipped calibration.json):")
        for d in constant_drift(cal, default_calibration()):
            fold = "-" if d.fold is None else f"{d.fold:.4g}"
            shipped = "-" if d.shipped is None else f"{d.shipped:.4g}"
            print(f"  {d.name:<44} fold {fold:>10}  shipped {shipped:>10}")
    if args.rows:
        print("\nrows (rate in the engine's unit: samples or requests per s per instance):")
        held = [(r, m) for r, m in zip(rows, modelled, strict=True) if r.source == args.source]
        for r, m in sorted(held, key=lambda x: (x[0].key, x[0].observation.accelerator)):
            o = r.observation
            print(
                f"  {r.key[:70]:<70} {o.accelerator:<20} {o.gpus:>3}  measured "
                f"{o.throughput:11.4g}  modelled {m:11.4g}  ratio {m / o.throughput:5.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
