"""Which rows a model change moved: two ``accuracy.py --rows-csv`` files side by side.

A trial is judged by the cross-validated table, but the table says only how much moved. This
reads the held-out rates of two runs (the same rows, before and after a change) and prints,
per group of rows (by default source, model, precision and accelerator; ``--by`` picks
fewer), the median of modelled / measured in each run and how many points of the no-baseline
mean the group moved, largest first; and the no-baseline mean of each run, which is the
table's ``engine, no baseline`` for all rows.

    python benchmarks/accuracy.py --rows-csv before.csv      # on the base
    python benchmarks/accuracy.py --rows-csv after.csv       # with the change
    python benchmarks/accuracy_diff.py before.csv after.csv [--top 20] [--source mlperf]
    python benchmarks/accuracy_diff.py before.csv after.csv --by source,accelerator
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from accuracy_pairs import err

# Fields of a row's key (published.py: the group path, then the workload's fields).
KEY_MODEL, KEY_PRECISION = 1, 3
FIELDS = ("source", "model", "precision", "accelerator")
DEFAULT_TOP = 20


@dataclass(frozen=True)
class Held:
    """One row's held-out rate in a run."""

    fields: dict[str, str]  # FIELDS
    absolute: bool
    ratio: float  # modelled / measured
    error: float  # |modelled / measured - 1| in percent, as the table scores it


@dataclass(frozen=True)
class GroupChange:
    group: tuple[str, ...]
    rows: int
    before: float  # median modelled / measured
    after: float
    points: float  # change of the group's share of the no-baseline mean, in points


def read(path: Path) -> dict[str, Held]:
    """Row id -> held-out rate, from a ``--rows-csv`` file."""
    out: dict[str, Held] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            key = r["key"].split("|")
            fields = {
                "source": r["source"],
                "model": key[KEY_MODEL],
                "precision": key[KEY_PRECISION],
                "accelerator": r["accelerator"],
            }
            modelled, measured = float(r["modelled"]), float(r["measured"])
            absolute = r["absolute"] == "True"
            out[r["row_id"]] = Held(fields, absolute, modelled / measured, err(modelled, measured))
    return out


def no_baseline_mean(run: dict[str, Held]) -> float:
    """Mean |modelled / measured - 1| in percent over the rows the engine predicts outright
    (the rows with a modelled rate; accuracy.py scores the same ones)."""
    errors = [h.error for h in run.values() if h.absolute and h.ratio > 0]
    return statistics.fmean(errors) if errors else float("nan")


def compare(
    before: dict[str, Held], after: dict[str, Held], by: tuple[str, ...] = FIELDS
) -> list[GroupChange]:
    """Per group (the values of the ``by`` fields) of the rows both runs hold, largest move
    of the no-baseline mean first."""
    common = sorted(before.keys() & after.keys())
    scored = sum(1 for i in common if after[i].absolute and after[i].ratio > 0)
    members: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for i in common:
        members[tuple(before[i].fields[f] for f in by)].append(i)
    out = []
    for group, ids in members.items():
        moved = sum(
            after[i].error - before[i].error
            for i in ids
            if after[i].absolute and after[i].ratio > 0 and before[i].ratio > 0
        )
        out.append(
            GroupChange(
                group,
                len(ids),
                statistics.median(before[i].ratio for i in ids),
                statistics.median(after[i].ratio for i in ids),
                moved / max(scored, 1),
            )
        )
    return sorted(out, key=lambda c: -abs(c.points))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="groups to print")
    parser.add_argument("--source", default="", help="only rows whose source starts so")
    parser.add_argument(
        "--by", default=",".join(FIELDS), help=f"fields to group by, of {', '.join(FIELDS)}"
    )
    args = parser.parse_args(argv)
    by = tuple(f.strip() for f in args.by.split(",") if f.strip())
    unknown = sorted(set(by) - set(FIELDS))
    if unknown or not by:
        given = ", ".join(unknown) or "none"
        parser.error(f"--by takes one or more fields of {', '.join(FIELDS)} (got: {given})")
    before, after = read(args.before), read(args.after)
    if args.source:
        before = {i: h for i, h in before.items() if h.fields["source"].startswith(args.source)}
        after = {i: h for i, h in after.items() if h.fields["source"].startswith(args.source)}
    if before.keys() != after.keys():
        print(
            f"note: {len(before.keys() ^ after.keys())} rows are in one run only (not compared)",
            file=sys.stderr,
        )
    print(f"no-baseline mean: {no_baseline_mean(before):.1f} % -> {no_baseline_mean(after):.1f} %")
    print(f"{'points':>7}  {'rows':>4}  {'before':>6}  {'after':>6}  " + " / ".join(by))
    for c in compare(before, after, by)[: args.top]:
        group = " / ".join(c.group)
        print(f"{c.points:+7.2f}  {c.rows:4d}  {c.before:6.2f}  {c.after:6.2f}  {group}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
