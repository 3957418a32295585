"""benchmarks/accuracy_report.py: the held-out rows as a CSV and the no-baseline error's
largest shares."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest

accuracy = pytest.importorskip("accuracy")
published = pytest.importorskip("published")
report = pytest.importorskip("accuracy_report")

SOURCE = "nvidia-dle"


@pytest.fixture(scope="module")
def rows() -> list[object]:
    return published.load_rows(accuracy.bench_catalog())[0]


def test_the_rows_csv_holds_every_row_with_its_measured_and_modelled_rate(
    rows: list[object], tmp_path: Path
) -> None:
    measured = np.array([r.observation.throughput for r in rows])
    path = tmp_path / "held_out.csv"
    report.write_rows_csv(path, rows, 2.0 * measured)
    with path.open(newline="") as f:
        written = list(csv.DictReader(f))
    assert tuple(written[0]) == report.ROWS_CSV_HEADER
    assert [w["row_id"] for w in written] == [r.row_id for r in rows]
    ratios = [float(w["modelled"]) / float(w["measured"]) for w in written]
    assert ratios == pytest.approx([2.0] * len(rows), rel=1e-5)
    assert {w["absolute"] for w in written} <= {"True", "False"}


def test_a_source_off_by_a_factor_is_the_whole_no_baseline_error(
    rows: list[object], capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows modelled exactly add nothing; a source's rows at twice their rate each add 100 %
    over the count of every row scored without a baseline."""
    measured = np.array([r.observation.throughput for r in rows])
    modelled = np.where([r.source == SOURCE for r in rows], 2.0 * measured, measured)
    report.print_absolute_shares(rows, modelled, limit=100)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    off = [ln for ln in lines if SOURCE in ln]
    assert off and all("modelled / measured  2.00" in ln for ln in off)
    total = sum(float(ln.split()[0]) for ln in off)
    absolute = sum(1 for r in rows if r.absolute)
    in_source = sum(1 for r in rows if r.absolute and r.source == SOURCE)
    assert total == pytest.approx(100.0 * in_source / absolute, abs=0.01 * len(off))
    assert all(float(ln.split()[0]) == 0.0 for ln in lines if SOURCE not in ln)


@pytest.mark.parametrize("without", ["--priors", "--no-cv"])
def test_the_rows_csv_is_refused_where_nothing_is_held_out(
    without: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "held_out.csv"
    monkeypatch.setattr(sys, "argv", ["accuracy.py", without, "--rows-csv", str(path)])
    with pytest.raises(SystemExit) as exit_:
        accuracy.main()
    assert exit_.value.code == 2 and not path.exists()


def test_the_baseline_budget_splits_the_mean_and_what_lies_above_the_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each group's points sum to the mean over every pair; the part above the goal counts
    only what each pair's error has beyond it, so pairs within the goal add nothing to it."""
    errors = {"within": [2.0, 4.0, 6.0], "over": [30.0, 10.0], "far over": [60.0]}
    shares = report.baseline_shares(errors)
    assert [s.group for s in shares] == ["far over", "over", "within"]
    mean = sum(sum(es) for es in errors.values()) / 6
    assert sum(s.points for s in shares) == pytest.approx(mean)
    by = {s.group: s for s in shares}
    assert by["within"].excess == 0.0 and by["within"].mean == pytest.approx(4.0)
    assert by["over"].excess == pytest.approx(20.0 / 6)
    assert by["far over"].excess == pytest.approx(50.0 / 6) and by["far over"].pairs == 1
    report.print_baseline_shares("budget", errors)
    out = capsys.readouterr().out
    assert f"points of the {mean:.1f} % mean, {70.0 / 6:.1f} of them above 10 %" in out
    assert out.index("far over") < out.index("within")
    assert report.baseline_shares({}) == []
