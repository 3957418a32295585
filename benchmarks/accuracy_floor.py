"""How far a per-GPU lookup table gets on the accuracy rows: the floor the engine is held to.

The table is the most a model with one free factor per hardware configuration can say: log
throughput per GPU = an offset per run (the rows of one key) + a factor per (accelerator,
class, precision), fitted by alternating least squares, scored with ``accuracy.py``'s
baseline pair error. In-sample (fitted on every row it scores) it is the noise floor of the
rows; leave-one-source-out it shows how much of one source's hardware ratios another
source's measurements carry: only pairs whose two factors some other source measured can be
predicted at all.

    python benchmarks/accuracy_floor.py
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Hashable

import numpy as np
from accuracy import Pair, bench_catalog, pairs, predictable, with_baseline
from accuracy_report import CLASSES, Scores, merge, scores_mean
from published import Row, load_rows

from recommender.scoring.calibration import prior_calibration

# Alternating least squares on a two-way additive model converges geometrically; 200 sweeps
# leave the factors unchanged to ~1e-9 on these rows.
SWEEPS = 200

Factor = Callable[[Row], Hashable]


def per_config(r: Row) -> Hashable:
    o = r.observation
    return (o.accelerator, r.cls, o.workload.precision)


def per_config_and_count(r: Row) -> Hashable:
    o = r.observation
    return (o.accelerator, r.cls, o.workload.precision, o.gpus)


def fit_table(rows: list[Row], members: list[int], factor: Factor) -> dict[Hashable, float]:
    """log factor per configuration, fitted on ``rows[members]``."""
    y = np.log([rows[i].observation.throughput / rows[i].observation.gpus for i in members])
    keys = {k: n for n, k in enumerate(sorted({rows[i].key for i in members}))}
    configs: dict[Hashable, int] = {}
    for i in members:
        configs.setdefault(factor(rows[i]), len(configs))
    ki = np.array([keys[rows[i].key] for i in members])
    fi = np.array([configs[factor(rows[i])] for i in members])
    offset, value = np.zeros(len(keys)), np.zeros(len(configs))
    for _ in range(SWEEPS):
        offset = np.bincount(ki, y - value[fi], len(keys)) / np.bincount(ki, minlength=len(keys))
        value = np.bincount(fi, y - offset[ki], len(configs)) / np.bincount(
            fi, minlength=len(configs)
        )
    return {c: float(value[n]) for c, n in configs.items()}


def modelled(rows: list[Row], table: dict[Hashable, float], factor: Factor) -> np.ndarray:
    """Throughput per row (nan where its configuration is not in the table)."""
    out = np.full(len(rows), np.nan)
    for i, r in enumerate(rows):
        f = table.get(factor(r))
        if f is not None:
            out[i] = np.exp(f) * r.observation.gpus
    return out


def score(
    rows: list[Row], model: np.ndarray, pair_list: list[Pair], source: str | None = None
) -> tuple[Scores, Counter[str]]:
    """Baseline pair errors of the pairs whose target is in ``source`` (every pair without
    one), per class, where the table has both configurations; and every such pair counted."""
    errors, totals = Scores(), Counter[str]()
    for a, b in pair_list:
        if source is not None and rows[b].source != source:
            continue
        totals[rows[b].cls] += 1
        if np.isfinite(model[a]) and np.isfinite(model[b]):
            errors.add(rows[b].cls, with_baseline(rows, model, a, b))
    return errors, totals


def report(title: str, errors: Scores, totals: Counter[str]) -> None:
    print(f"\n{title}")
    print(f"  {'class':<12} {'pairs':>6} {'predictable':>12} {'mean |error| %':>15}")
    for cls in (*CLASSES, "all"):
        e = errors.all() if cls == "all" else errors.by_class.get(cls, [])
        n = sum(totals.values()) if cls == "all" else totals[cls]
        print(f"  {cls:<12} {n:>6} {len(e):>12} {scores_mean(e).strip():>15}")


def main() -> int:
    catalog = bench_catalog()
    rows, _ = load_rows(catalog)
    rows = predictable(rows, catalog, prior_calibration())
    pair_list = pairs(rows)
    everything = list(range(len(rows)))
    for name, factor in (
        ("accelerator x class x precision", per_config),
        ("accelerator x class x precision x GPU count", per_config_and_count),
    ):
        model = modelled(rows, fit_table(rows, everything, factor), factor)
        report(f"in-sample lookup table, one factor per {name}", *score(rows, model, pair_list))
    parts, totals = [], Counter[str]()
    for source in sorted({r.source for r in rows}):
        train = [i for i, r in enumerate(rows) if r.source != source]
        model = modelled(rows, fit_table(rows, train, per_config), per_config)
        held, counted = score(rows, model, pair_list, source)
        parts.append({"held out": held})
        totals += counted
    report(
        "leave-one-source-out lookup table (accelerator x class x precision): a pair is "
        "predictable when another source measured both its configurations",
        merge(parts)["held out"],
        totals,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
