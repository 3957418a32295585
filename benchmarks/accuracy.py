"""Prediction accuracy on published measurements, cross-validated so that it cannot flatter.

Rows come from ``benchmarks/data/accuracy_rows.csv`` (see ``published.py``). Rows with the
same key ran the same workload on other hardware (another GPU, or another GPU count); each
row in turn is the baseline for the others ("with baseline": modelled_b x (measured_a /
modelled_a) ** alpha, which is what ``predict`` does with a ``baseline:`` of the same
workload; alpha, the share of a's gap to the model that b's part takes, is fitted inside each
fold, ``accuracy_transfer``). "Without baseline" is the engine's absolute prediction,
scored on the rows whose rate is in the engine's unit (a per-sample model's generated
tokens of unstated length are baselines for one another only).

Cross-validation:
- leave-one-source-out: the constants are fitted (``calibrate.fit``, starting from the
  hand-set ``priors.json``) on every source family but one, and that source is scored;
- leave-one-accelerator-out: the same with every row of one accelerator architecture held
  out (the rows predicted are those *on* it; baselines come from other architectures).

In the same run, the naive references scale the baseline by the peak FLOP/s ratio, by the
memory-bandwidth ratio, or by their geometric mean (and by the GPU-count ratio). Scaling
efficiency (throughput per GPU at N GPUs over that at the fewest GPUs of the same
accelerator in the same run) is compared in points. Absolute errors are |pred/meas - 1|.

    python benchmarks/accuracy.py               # cross-validated report (refits per fold)
    python benchmarks/accuracy.py --priors      # the priors alone: nothing fitted at all
    python benchmarks/accuracy.py --by-architecture   # + leave-one-architecture-out
    python benchmarks/accuracy.py --detail      # + where the engine loses to the naive rule,
                                                #   and what adds most to its error without one
    python benchmarks/accuracy.py --rows-csv held_out.csv   # + every row's held-out rate
    python benchmarks/accuracy.py --write       # also fit on every row -> calibration.json,
                                                #   and the tables -> accuracy_tables.md
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import TypeVar

import numpy as np
import yaml
from accuracy_pairs import Pair, err, naive, pairs, with_baseline
from accuracy_report import (
    Scores,
    markdown_table,
    merge,
    print_absolute_shares,
    print_baseline_shares,
    print_scaling,
    scores_mean,
    table,
    write_held_out,
    write_rows_csv,
)
from accuracy_transfer import HABITAT, Transfer, fitted_transfer, pair_alpha, transfer_text
from published import BENCH_ACCELERATORS, Row, load_rows

from recommender.catalog import Catalog, load_catalog
from recommender.scoring.calibrate import fit, modelled_throughput
from recommender.scoring.calibration import Calibration, prior_calibration

ROOT = Path(__file__).resolve().parent.parent
CALIBRATION_JSON = ROOT / "recommender/scoring/calibration.json"
# The tables of the run that wrote calibration.json, as markdown: the README shows these
# (tests/benchmarks/test_accuracy.py checks that it does).
README_TABLES = ROOT / "benchmarks/accuracy_tables.md"
GroupKey = TypeVar("GroupKey", bound=Hashable)


def bench_catalog() -> Catalog:
    """The product's catalog plus benchmark-only spec sheets (desktop and lab GPUs the
    published rows name), so that every row's accelerator has one."""
    if not BENCH_ACCELERATORS.exists():
        return load_catalog()
    tmp = Path(tempfile.mkdtemp(prefix="bench-catalog-"))
    for f in (ROOT / "catalogs").glob("*.yaml"):
        (tmp / f.name).write_text(f.read_text())
    accs = yaml.safe_load((tmp / "accelerators.yaml").read_text())
    extra = yaml.safe_load(BENCH_ACCELERATORS.read_text())["accelerators"]
    known = {a["id"] for a in accs["accelerators"]}
    accs["accelerators"] += [a for a in extra if a["id"] not in known]
    (tmp / "accelerators.yaml").write_text(yaml.safe_dump(accs, sort_keys=False))
    manifest = tmp / "manifest.yaml"
    if manifest.exists():
        manifest.unlink()
    return load_catalog(tmp)


def scaling_points(rows: list[Row], modelled: np.ndarray) -> list[tuple[int, float, float]]:
    """(row, measured efficiency, predicted efficiency) for multi-GPU rows of a run that also
    has a row on fewer GPUs of the same accelerator."""
    by_run: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_run[(r.key, r.observation.accelerator)].append(i)
    out = []
    for members in by_run.values():
        base = min(members, key=lambda i: rows[i].observation.gpus)
        ob = rows[base].observation
        for i in members:
            oi = rows[i].observation
            if oi.gpus <= ob.gpus:
                continue
            k = oi.gpus / ob.gpus
            measured = oi.throughput / (k * ob.throughput)
            predicted = float(modelled[i] / (k * modelled[base]))
            out.append((i, measured, predicted))
    return out


def evaluate(
    rows: list[Row],
    catalog: Catalog,
    modelled: np.ndarray,
    targets: Iterable[int],
    pair_list: list[Pair],
    transfer: Transfer = HABITAT,
) -> dict[str, Scores]:
    """Errors with and without a baseline (carried over by ``transfer``), and the naive
    references, on ``targets``."""
    wanted = set(targets)
    out = {k: Scores() for k in ("baseline", "absolute", "peak", "bandwidth", "geomean")}
    for i in wanted:
        if modelled[i] > 0 and rows[i].absolute:
            out["absolute"].add(
                rows[i].cls, err(float(modelled[i]), rows[i].observation.throughput)
            )
    for a, b in pair_list:
        if b not in wanted or modelled[a] <= 0 or modelled[b] <= 0:
            continue
        cls = rows[b].cls
        alpha = pair_alpha(rows, catalog, transfer, a, b)
        out["baseline"].add(cls, with_baseline(rows, modelled, a, b, alpha))
        for how in ("peak", "bandwidth", "geomean"):
            out[how].add(cls, naive(rows, catalog, a, b, how))
    return out


# Rows a fold's fit sees at most (a deterministic, per-source stratified subsample): every
# fit evaluation predicts all of them once per constant, on a shared 2-core machine.
FIT_ROWS = 300


def _subsample(obs: list[Row], limit: int = FIT_ROWS) -> list[Row]:
    """At most ``limit`` rows: each source's share of them in proportion to its rows (largest
    remainders), and within a source the rows whose ids hash lowest (CRC-32), in file order.

    A row is in or out by its own id, so adding rows to one source moves the subsample by
    about as many rows. Every-k-th-row sampling moved it all: adding 7 rows (LMDeploy's and
    llmperf's, none of them MLPerf's) changed the fit of the MLPerf fold enough to move its
    held-out Llama-2-70B pairs from 11.6 to 15.3 %, a swing from the sample, not the model."""
    if len(obs) <= limit:
        return obs
    by_source: dict[str, list[Row]] = defaultdict(list)
    for r in obs:
        by_source[r.source].append(r)
    exact = {src: limit * len(rs) / len(obs) for src, rs in by_source.items()}
    quota = {src: math.floor(x) for src, x in exact.items()}
    by_remainder = sorted(exact, key=lambda src: (quota[src] - exact[src], src))
    for src in by_remainder[: limit - sum(quota.values())]:
        quota[src] += 1
    chosen = {
        id(r)
        for src, rs in by_source.items()
        for r in sorted(rs, key=lambda r: zlib.crc32(r.row_id.encode()))[: quota[src]]
    }
    return [r for r in obs if id(r) in chosen]


def fold_calibration(
    rows: list[Row], catalog: Catalog, priors: Calibration, held: Callable[[Row], bool]
) -> Calibration:
    """Constants fitted (from ``priors``, on the stratified subsample) on the rows ``held``
    leaves in: one cross-validation fold's."""
    train = [r.observation for r in _subsample([r for r in rows if not held(r)])]
    return fit(train, catalog, priors) if train else priors


def modelled_without(
    rows: list[Row], catalog: Catalog, priors: Calibration, held: Callable[[Row], bool]
) -> np.ndarray:
    """Every row's modelled throughput under the constants of the fold that holds out the
    rows ``held`` picks (``fold_calibration``)."""
    cal = fold_calibration(rows, catalog, priors, held)
    return modelled_throughput([r.observation for r in rows], catalog, cal)


def _member_of(ids: set[int]) -> Callable[[Row], bool]:
    """Whether a row is one of ``ids`` (its ``id()``): one fold's held-out test."""
    return lambda r: id(r) in ids


def cross_validate(
    rows: list[Row], catalog: Catalog, priors: Calibration, fold_of: Callable[[Row], str]
) -> tuple[dict[str, Scores], list[tuple[int, float, float]], np.ndarray, list[Transfer]]:
    """Fit without each fold, score that fold; returns the errors, the scaling points, every
    row's held-out modelled throughput and the transfer exponents its fold scored it with
    (fitted, with the fold's constants, on the pairs of the rows the fold keeps)."""
    pair_list = pairs(rows)
    folds: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        folds[fold_of(r)].append(i)
    held_out = np.zeros(len(rows))
    transfers: list[Transfer] = [HABITAT] * len(rows)
    parts = []
    for name, members in sorted(folds.items()):
        modelled = modelled_without(
            rows, catalog, priors, _member_of({id(rows[i]) for i in members})
        )
        held_out[members] = modelled[members]
        part, transfer = score_fold(rows, catalog, modelled, members, pair_list)
        for i in members:
            transfers[i] = transfer
        parts.append(part)
        print(fold_line(name, len(members), part, transfer), flush=True)
    return merge(parts), scaling_points(rows, held_out), held_out, transfers


def score_fold(
    rows: list[Row],
    catalog: Catalog,
    modelled: np.ndarray,
    members: list[int],
    pair_list: list[Pair],
) -> tuple[dict[str, Scores], Transfer]:
    """One fold's errors (``members`` held out, ``modelled`` by constants fitted without
    them) with the baseline-transfer exponents fitted on the pairs the fold keeps, and those
    exponents."""
    transfer = fitted_transfer(rows, catalog, modelled, pair_list, set(members))
    return evaluate(rows, catalog, modelled, members, pair_list, transfer), transfer


def fold_line(name: str, rows: int, part: dict[str, Scores], transfer: Transfer) -> str:
    """The one-line summary of a held-out fold ``accuracy.py`` prints."""
    base, absolute = part["baseline"].all(), part["absolute"].all()
    geo = part["geomean"].all()
    return (
        f"  held out {name:<26} rows {rows:>4}  pairs {len(base):>5}  "
        f"engine+baseline {scores_mean(base)} %  geomean {scores_mean(geo)} %  "
        f"no baseline {scores_mean(absolute)} %  (transfer {transfer_text(transfer)})"
    )


def pair_errors(
    rows: list[Row],
    catalog: Catalog,
    modelled: np.ndarray,
    group_of: Callable[[Row], GroupKey | None],
    transfer_of: Callable[[int], Transfer] = lambda b: HABITAT,
) -> dict[GroupKey, list[tuple[float, float]]]:
    """(engine with a baseline, geometric-mean rule) errors of every pair the engine places,
    by ``group_of`` its target row (None: the pair is left out)."""
    groups: dict[GroupKey, list[tuple[float, float]]] = defaultdict(list)
    for a, b in pairs(rows):
        group = group_of(rows[b])
        if group is None or modelled[a] <= 0 or modelled[b] <= 0:
            continue
        alpha = pair_alpha(rows, catalog, transfer_of(b), a, b)
        groups[group].append(
            (with_baseline(rows, modelled, a, b, alpha), naive(rows, catalog, a, b, "geomean"))
        )
    return groups


def print_detail(
    rows: list[Row], catalog: Catalog, modelled: np.ndarray, transfers: list[Transfer]
) -> None:
    """The (class, source, model) groups whose held-out error most exceeds the geometric-mean
    reference's, summed over their pairs: where the engine loses most to the naive rule; then
    the error budget with a baseline, by group and by the target's accelerator: each one's
    points of the mean (``accuracy_report.print_baseline_shares``)."""
    # one pass over the pairs, keyed finely enough for both views
    fine = pair_errors(
        rows,
        catalog,
        modelled,
        lambda b: (b.cls, b.source, b.key.split("|")[1], b.observation.accelerator),
        transfers.__getitem__,
    )
    groups: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    by_target: dict[str, list[float]] = defaultdict(list)
    for (cls, source, model, acc), errs in fine.items():
        groups[(cls, source, model)] += errs
        by_target[f"{cls:<12} {acc}"] += [e for e, _ in errs]

    def excess(item: tuple[tuple[str, str, str], list[tuple[float, float]]]) -> float:
        return sum(e - g for e, g in item[1])

    print("\nwhere the engine loses most to the geometric-mean rule (held out):")
    for (cls, source, model), errs in sorted(groups.items(), key=excess, reverse=True)[:12]:
        engine = statistics.fmean(e for e, _ in errs)
        geo = statistics.fmean(g for _, g in errs)
        print(
            f"  {cls:<12} {source:<24} {model[:28]:<28} pairs {len(errs):>4}  "
            f"engine {engine:5.1f} %  geomean {geo:5.1f} %"
        )
    print_baseline_shares(
        "what adds most to the error with a baseline",
        {
            f"{cls:<12} {source:<24} {model}": [e for e, _ in errs]
            for (cls, source, model), errs in groups.items()
        },
    )
    print_baseline_shares("the same by the predicted row's accelerator", by_target)


def predictable(rows: list[Row], catalog: Catalog, priors: Calibration) -> list[Row]:
    modelled = modelled_throughput([r.observation for r in rows], catalog, priors)
    keep = [r for r, m in zip(rows, modelled, strict=True) if m > 0 and np.isfinite(m)]
    print(f"{len(rows) - len(keep)} rows the engine cannot place (it finds no fitting plan)")
    return keep


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="fit on all rows and save")
    parser.add_argument("--priors", action="store_true", help="score the priors, no fitting")
    parser.add_argument("--no-cv", action="store_true", help="with --write: skip the CV")
    parser.add_argument(
        "--detail",
        action="store_true",
        help="also list the (class, source, model) groups the engine scores worst against "
        "the geometric-mean rule",
    )
    parser.add_argument("--rows-csv", type=Path, help="also write held-out rates to this CSV")
    parser.add_argument(
        "--by-architecture",
        action="store_true",
        help="also leave one accelerator architecture out (one refit per architecture: slow)",
    )
    args = parser.parse_args()
    if args.rows_csv and (args.priors or args.no_cv):
        parser.error("--rows-csv writes the leave-one-source-out rates: drop --priors / --no-cv")
    t0 = time.perf_counter()
    catalog = bench_catalog()
    rows, skipped = load_rows(catalog)
    priors = prior_calibration()
    print(
        f"{len(rows)} rows usable from benchmarks/data/accuracy_rows.csv; skipped: "
        + ", ".join(f"{n} {why}" for why, n in skipped.most_common())
    )
    rows = predictable(rows, catalog, priors)
    sources = sorted({r.source for r in rows})
    print(f"{len(rows)} rows from {len(sources)} sources, {len(pairs(rows))} baseline pairs")
    relative = [r for r in rows if not r.absolute]
    if relative:
        print(
            f"{len(relative)} rows scored against a baseline only (a rate in the source's own "
            f"unit: {', '.join(sorted({r.key.split('|')[1] for r in relative}))} tokens/s)"
        )
    everything = list(range(len(rows)))
    if args.priors:
        modelled = modelled_throughput([r.observation for r in rows], catalog, priors)
        table(
            "priors only (nothing fitted)",
            evaluate(rows, catalog, modelled, everything, pairs(rows)),
        )
        print_scaling("scaling efficiency, priors", scaling_points(rows, modelled), rows)
        return 0
    markdown: list[str] = []
    if not args.no_cv:
        print("\nleave-one-source-out:")
        loso, points, held_out, transfers = cross_validate(
            rows, catalog, priors, lambda r: r.source
        )
        table("leave-one-source-out (mean |error| %)", loso)
        print_scaling("scaling efficiency, leave-one-source-out", points, rows)
        markdown.append(f"<!-- leave-one-source-out, {len(rows)} rows -->\n{markdown_table(loso)}")
        if args.detail:
            print_detail(rows, catalog, held_out, transfers)
            print_absolute_shares(rows, held_out)
        if args.rows_csv:
            write_rows_csv(args.rows_csv, rows, held_out)
            print(f"wrote {args.rows_csv}")
    if args.by_architecture:
        print("\nleave-one-accelerator-architecture-out:")
        loao, *_ = cross_validate(
            rows,
            catalog,
            priors,
            lambda r: catalog.accelerator(r.observation.accelerator).architecture,
        )
        table("leave-one-architecture-out (mean |error| %)", loao)
        markdown.append(
            f"<!-- leave-one-architecture-out, {len(rows)} rows -->\n{markdown_table(loao)}"
        )
    if markdown:
        print("\nas markdown (the README's tables):\n\n" + "\n\n".join(markdown))
    if args.write:
        full = fit([r.observation for r in _subsample(rows)], catalog, priors)
        in_sample = modelled_throughput([r.observation for r in rows], catalog, full)
        transfer = fitted_transfer(rows, catalog, in_sample, pairs(rows))
        print(f"baseline transfer fitted on every pair: {transfer_text(transfer)}")
        data = full.with_values(baseline_transfer=transfer).to_json()
        data["notes"] = {
            **priors.notes,
            "fitted": (
                f"fitted by benchmarks/accuracy.py --write on {min(len(rows), FIT_ROWS)} of the "
                f"{len(rows)} predictable rows (a per-source stratified subsample) of "
                "benchmarks/data/accuracy_rows.csv from "
                f"{len(sources)} sources (log-error least squares with a free factor per "
                "run, priors from priors.json)"
            ),
        }
        CALIBRATION_JSON.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {CALIBRATION_JSON}")
        if markdown:
            README_TABLES.write_text("\n\n".join(markdown) + "\n")
            print(f"wrote {README_TABLES}")
        if not args.no_cv:
            write_held_out(loso, len(rows), len(sources))
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
