"""The accuracy report's presentation: errors gathered per workload class, the per-class table
(plain text and the README's markdown), the scaling-efficiency summary, the groups that add
most to the error with a baseline and without one, and every row's held-out rate as a CSV
file.

``accuracy.py`` scores and cross-validates; this module only shapes what it found for
reading, so the two can change separately (``accuracy_floor.py`` prints the same tables).
"""

from __future__ import annotations

import csv
import math
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import numpy as np
from published import Row

from recommender.scoring.heldout import HeldOutClass, HeldOutErrors, HeldOutFile
from recommender.scoring.results import AccuracyClass

# The classes scored, in table order: the ones predictions carry their held-out error for.
CLASSES: tuple[AccuracyClass, ...] = get_args(AccuracyClass)
# The leave-one-source-out errors per class that every prediction carries
# (recommender/scoring/heldout.py reads it; tests/benchmarks/test_accuracy.py checks that its
# means are the README table's).
HELD_OUT_JSON = Path(__file__).resolve().parent.parent / "recommender/scoring/heldout.json"


class Scores:
    """Errors collected per workload class."""

    def __init__(self) -> None:
        self.by_class: dict[str, list[float]] = defaultdict(list)

    def add(self, cls: str, value: float) -> None:
        self.by_class[cls].append(value)

    def all(self) -> list[float]:
        return [v for vs in self.by_class.values() for v in vs]


def scores_mean(xs: list[float]) -> str:
    return f"{statistics.fmean(xs):6.1f}" if xs else "     -"


def _cells(s: dict[str, Scores], cls: str) -> list[str]:
    """One class's row (``all``: every class): pairs, the engine's and the naive references'
    errors with a baseline, rows scored without one and the engine's error there."""

    def get(x: Scores) -> list[float]:
        return x.all() if cls == "all" else x.by_class.get(cls, [])

    return [
        str(len(get(s["baseline"]))),
        *(scores_mean(get(s[k])).strip() for k in ("baseline", "peak", "bandwidth", "geomean")),
        str(len(get(s["absolute"]))),
        scores_mean(get(s["absolute"])).strip(),
    ]


TABLE_WIDTHS = (6, 16, 7, 10, 8, 5, 20)


def table(title: str, s: dict[str, Scores]) -> None:
    print(f"\n{title}")
    print(
        f"  {'class':<12} {'pairs':>6} {'engine+baseline':>16} {'peak':>7} {'bandwidth':>10} "
        f"{'geomean':>8} {'rows':>5} {'engine, no baseline':>20}"
    )
    for cls in (*CLASSES, "all"):
        cells = " ".join(f"{c:>{w}}" for c, w in zip(_cells(s, cls), TABLE_WIDTHS, strict=True))
        print(f"  {cls:<12} {cells}")


MARKDOWN_HEADER = (
    "| class | pairs | engine + baseline | peak | bandwidth | geomean | rows | "
    "engine, no baseline |\n|---|---|---|---|---|---|---|---|"
)


def markdown_table(s: dict[str, Scores]) -> str:
    """The table as the README shows it (``README_TABLES`` holds the last ``--write``'s)."""
    rows = ("| " + " | ".join([cls, *_cells(s, cls)]) + " |" for cls in (*CLASSES, "all"))
    return "\n".join([MARKDOWN_HEADER, *rows])


def merge(parts: list[dict[str, Scores]]) -> dict[str, Scores]:
    out = {k: Scores() for k in parts[0]}
    for p in parts:
        for k, sc in p.items():
            for cls, vs in sc.by_class.items():
                out[k].by_class[cls].extend(vs)
    return out


def print_scaling(title: str, points: list[tuple[int, float, float]], rows: list[Row]) -> None:
    if not points:
        print(f"\n{title}: no multi-GPU runs")
        return
    engine = [abs(p - m) * 100 for _, m, p in points]
    linear = [abs(1.0 - m) * 100 for _, m, _ in points]
    print(
        f"\n{title}: {len(points)} multi-GPU rows, mean |error| {statistics.fmean(engine):.1f} "
        f"points (naive linear scaling: {statistics.fmean(linear):.1f} points)"
    )
    for i, m, p in sorted(points, key=lambda x: -abs(x[2] - x[1]))[:5]:
        o = rows[i].observation
        print(
            f"    worst: {rows[i].key[:58]:<58} {o.gpus} x {o.accelerator}: "
            f"measured {m:.0%}, predicted {p:.0%}"
        )


@dataclass(frozen=True)
class GroupBias:
    group: str
    rows: int
    ratio: float  # geometric mean of modelled / measured
    error: float  # mean |modelled / measured - 1| %


def group_bias(
    rows: list[Row], modelled: np.ndarray, group_of: Callable[[Row], str | None]
) -> list[GroupBias]:
    """Rows scored without a baseline by ``group_of`` (None: left out), with how far the
    engine's own rate is off in each; the groups that add most to the mean |error| (rows x
    error) first."""
    by_group: dict[str, list[float]] = defaultdict(list)
    for r, m in zip(rows, modelled, strict=True):
        group = group_of(r)
        if group is not None and r.absolute and m > 0:
            by_group[group].append(float(m) / r.observation.throughput)
    out = [
        GroupBias(
            group=group,
            rows=len(ratios),
            ratio=math.exp(statistics.fmean(math.log(x) for x in ratios)),
            error=statistics.fmean(abs(x - 1.0) * 100.0 for x in ratios),
        )
        for group, ratios in by_group.items()
    ]
    return sorted(out, key=lambda g: -g.rows * g.error)


def print_absolute_shares(rows: list[Row], modelled: np.ndarray, limit: int = 12) -> None:
    """Where the error without a baseline comes from: each (class, source, model) group's
    points of the mean over every row scored that way (its rows' summed |error| over their
    count)."""
    groups = group_bias(
        rows, modelled, lambda r: f"{r.cls:<12} {r.source:<24} {r.key.split('|')[1]}"
    )
    scored = sum(g.rows for g in groups)
    print("\nwhat adds most to the error without a baseline (held out; points of the mean):")
    for g in groups[:limit]:
        print(
            f"  {g.rows * g.error / scored:5.2f}  {g.group[:66]:<66} rows {g.rows:>4}  "
            f"modelled / measured {g.ratio:5.2f}"
        )


# The with-baseline goal (issue 15: leave-one-source-out mean |error| <= 10 %): the budget
# view says how many points of the mean lie above it, group by group.
BASELINE_GOAL_PCT = 10.0


@dataclass(frozen=True)
class BaselineShare:
    group: str
    pairs: int
    mean: float  # the group's own mean |error| %
    points: float  # the group's summed |error| over every scored pair: its points of the mean
    excess: float  # the same for the part of each error above BASELINE_GOAL_PCT


def baseline_shares(
    errors: dict[str, list[float]], goal: float = BASELINE_GOAL_PCT
) -> list[BaselineShare]:
    """Where the error with a baseline comes from: each group's points of the mean over every
    pair scored (``errors``: |error| % per pair, by group), largest first. The points sum to
    the mean; ``excess`` counts only what each pair's error has above ``goal``, so its sum is
    what the mean would lose if no pair were off by more than the goal."""
    total = sum(len(es) for es in errors.values())
    if total == 0:
        return []
    out = [
        BaselineShare(
            group=group,
            pairs=len(es),
            mean=statistics.fmean(es),
            points=sum(es) / total,
            excess=sum(max(e - goal, 0.0) for e in es) / total,
        )
        for group, es in errors.items()
    ]
    return sorted(out, key=lambda s: -s.points)


def print_baseline_shares(title: str, errors: dict[str, list[float]], limit: int = 12) -> None:
    shares = baseline_shares(errors)
    if not shares:
        return
    mean = sum(s.points for s in shares)
    over = sum(s.excess for s in shares)
    print(
        f"\n{title} (held out; points of the {mean:.1f} % mean, {over:.1f} of them above "
        f"{BASELINE_GOAL_PCT:.0f} % a pair):"
    )
    for s in shares[:limit]:
        print(
            f"  {s.points:5.2f}  {s.group[:66]:<66} pairs {s.pairs:>4}  "
            f"mean {s.mean:5.1f} %  above {BASELINE_GOAL_PCT:.0f} %: {s.excess:5.2f}"
        )


ROWS_CSV_HEADER = (
    "row_id",
    "source",
    "class",
    "key",
    "accelerator",
    "gpus",
    "absolute",
    "measured",
    "modelled",
)


def write_rows_csv(path: Path, rows: list[Row], modelled: np.ndarray) -> None:
    """Every row's held-out modelled rate beside its measured one, both in the engine's unit
    (samples or requests per second per instance), for reading a cross-validation row by row
    without running it again."""
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(ROWS_CSV_HEADER)
        for r, m in zip(rows, modelled, strict=True):
            o = r.observation
            out.writerow(
                [
                    r.row_id,
                    r.source,
                    r.cls,
                    r.key,
                    o.accelerator,
                    o.gpus,
                    r.absolute,
                    f"{o.throughput:.6g}",
                    f"{float(m):.6g}",
                ]
            )


def _errors(xs: list[float]) -> HeldOutErrors:
    """Count, mean and median of held-out errors in percent, rounded as the table prints."""
    if not xs:
        return HeldOutErrors(count=0)
    mean, median = statistics.fmean(xs), statistics.median(xs)
    return HeldOutErrors(count=len(xs), mean_pct=round(mean, 1), median_pct=round(median, 1))


def write_held_out(s: dict[str, Scores], rows: int, sources: int) -> None:
    """``HELD_OUT_JSON`` from a leave-one-source-out run's scores: per class, the errors of
    scaling a baseline between accelerators and of the absolute rate. Built as the model
    ``recommender.scoring.heldout`` reads, so the file cannot drift from its reader."""
    data = HeldOutFile(
        method=(
            f"leave-one-source-out over {rows} published measurements from {sources} sources "
            "(benchmarks/accuracy.py --write): each source scored by constants fitted on the "
            "others"
        ),
        rows=rows,
        sources=sources,
        classes={
            cls: HeldOutClass(
                with_baseline=_errors(s["baseline"].by_class.get(cls, [])),
                without_baseline=_errors(s["absolute"].by_class.get(cls, [])),
            )
            for cls in CLASSES
        },
    )
    HELD_OUT_JSON.write_text(data.model_dump_json(indent=2) + "\n")
    print(f"wrote {HELD_OUT_JSON}")
