"""The accuracy report's presentation: errors gathered per workload class, the per-class table
(plain text and the README's markdown) and the scaling-efficiency summary.

``accuracy.py`` scores and cross-validates; this module only shapes what it found for
reading, so the two can change separately (``accuracy_floor.py`` prints the same tables).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from published import Row

CLASSES = ("training", "inference", "llm-serving", "llm-decode")


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
