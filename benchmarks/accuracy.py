"""Prediction accuracy on published per-GPU throughput (the development set).

For every group measured on several GPUs (same model, task, precision, batch), each GPU in
turn is the baseline and the others are predicted through the engine's public
``recommender.predict``; the figures are mean and median absolute % error. In the same run:
- without a baseline (the engine's absolute prediction),
- two naive references: scale the baseline by the peak FLOP/s ratio, or by the memory
  bandwidth ratio,
- leave-one-model-out cross-validation: the constants are fitted on every other model and
  the held-out model is predicted, so the figure is for models the fit has not seen.

    python benchmarks/accuracy.py            # report (fits 7 folds: about a minute)
    python benchmarks/accuracy.py --write    # also refit on all rows -> calibration.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from published import Row, load_rows

from recommender import Workload, load_catalog, predict
from recommender.catalog import Catalog
from recommender.catalog.schema import Accelerator
from recommender.scoring.calibrate import fit
from recommender.scoring.calibration import Calibration, prior_calibration
from recommender.scoring.hardware import effective_precision

CALIBRATION_JSON = Path(__file__).resolve().parent.parent / "recommender/scoring/calibration.json"


def pairs(rows: list[Row]) -> Iterable[tuple[Row, Row]]:
    groups: dict[tuple[str, str, str, int], list[Row]] = defaultdict(list)
    for r in rows:
        groups[r.group].append(r)
    for members in groups.values():
        for a in members:
            for b in members:
                if a is not b:
                    yield a, b


def abs_err(predicted: float, measured: float) -> float:
    return abs(predicted / measured - 1.0) * 100.0


def with_baseline(a: Row, b: Row, catalog: Catalog, cal: Calibration) -> float:
    base = {
        "accelerator": a.observation.accelerator,
        "gpus": 1,
        "throughput": a.observation.throughput,
    }
    w = Workload.model_validate({**a.observation.workload.model_dump(), "baseline": base})
    p = predict(w, b.observation.accelerator, 1, catalog=catalog, calibration=cal)
    return abs_err(p.throughput, b.observation.throughput)


def no_baseline(r: Row, catalog: Catalog, cal: Calibration) -> float:
    p = predict(
        r.observation.workload, r.observation.accelerator, 1, catalog=catalog, calibration=cal
    )
    return abs_err(p.throughput, r.observation.throughput)


def naive(a: Row, b: Row, catalog: Catalog, what: Callable[[Accelerator, str], float]) -> float:
    prec = a.observation.workload.precision
    acc_a = catalog.accelerator(a.observation.accelerator)
    acc_b = catalog.accelerator(b.observation.accelerator)
    ratio = what(acc_b, prec) / what(acc_a, prec)
    return abs_err(a.observation.throughput * ratio, b.observation.throughput)


def peak(acc: Accelerator, precision: str) -> float:
    used = effective_precision(acc, precision)  # type: ignore[arg-type]
    return float(acc.peak_tflops.get(used) or acc.peak_tflops.fp32)


def bandwidth(acc: Accelerator, _precision: str) -> float:
    return acc.memory_bandwidth_gbs


def summary(name: str, errors: list[float]) -> str:
    return (
        f"{name:<46} mean {statistics.fmean(errors):6.2f} %   median "
        f"{statistics.median(errors):6.2f} %   n={len(errors)}"
    )


def evaluate(
    rows: list[Row], catalog: Catalog, cal_for: Callable[[str], Calibration]
) -> tuple[list[float], list[float], dict[str, list[float]]]:
    base_errs, per_model = [], defaultdict(list)
    for a, b in pairs(rows):
        e = with_baseline(a, b, catalog, cal_for(b.model))
        base_errs.append(e)
        per_model[b.model].append(e)
    plain = [no_baseline(r, catalog, cal_for(r.model)) for r in rows]
    return base_errs, plain, per_model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="refit on all rows and save")
    args = parser.parse_args()
    catalog = load_catalog()
    rows = load_rows()
    priors = prior_calibration()
    models = sorted({r.model for r in rows})
    print(
        f"{len(rows)} published measurements, {len(models)} models, "
        f"{sum(1 for _ in pairs(rows))} baseline->target pairs"
    )
    t0 = time.perf_counter()
    folds = {m: fit([r.observation for r in rows if r.model != m], catalog, priors) for m in models}
    fit_s = time.perf_counter() - t0
    full = fit([r.observation for r in rows], catalog, priors)
    all_pairs = list(pairs(rows))
    print(
        summary(
            "naive: scale by peak FLOP/s ratio", [naive(a, b, catalog, peak) for a, b in all_pairs]
        )
    )
    print(
        summary(
            "naive: scale by memory bandwidth ratio",
            [naive(a, b, catalog, bandwidth) for a, b in all_pairs],
        )
    )
    prior_b, prior_n, _ = evaluate(rows, catalog, lambda _m: priors)
    print(summary("engine, priors only, with baseline", prior_b))
    print(summary("engine, priors only, no baseline", prior_n))
    cv_b, cv_n, per_model = evaluate(rows, catalog, lambda m: folds[m])
    print(summary("engine, leave-one-model-out, with baseline", cv_b))
    print(summary("engine, leave-one-model-out, no baseline", cv_n))
    in_b, in_n, _ = evaluate(rows, catalog, lambda _m: full)
    print(summary("engine, fitted on all rows (in-sample), with baseline", in_b))
    print(summary("engine, fitted on all rows (in-sample), no baseline", in_n))
    print("\nleave-one-model-out, with baseline, per held-out model:")
    for m in models:
        print("  " + summary(m, per_model[m]))
    print(f"\n(7-fold fitting took {fit_s:.1f} s)")
    if args.write:
        data = full.to_json()
        data["notes"] = {
            **priors.notes,
            "fitted": (
                f"fitted by benchmarks/accuracy.py --write on {len(rows)} rows of "
                "benchmarks/data/published_throughput_dev.csv (log-error least squares, priors "
                "from priors.json)"
            ),
        }
        CALIBRATION_JSON.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {CALIBRATION_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
