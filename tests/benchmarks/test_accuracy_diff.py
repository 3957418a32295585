"""benchmarks/accuracy_diff.py: two runs' held-out rates, compared group by group."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

accuracy_diff = pytest.importorskip("accuracy_diff")
accuracy_report = pytest.importorskip("accuracy_report")
published = pytest.importorskip("published")


def _write(path: Path, modelled: dict[str, float]) -> Path:
    """A ``--rows-csv`` file as accuracy.py writes it: three rows of two sources (r3 not
    predicted outright), each with the given modelled rate against a measured 100."""
    rows = [
        ("r1", "timm", "timm-results/x|resnet-50|inference|fp16||1024", "RTX-4090", True),
        ("r2", "timm", "timm-results/x|resnet-50|inference|fp16||1024", "RTX-5090", True),
        ("r3", "mlperf", "mlperf/x|llama-2-70b|llm-serving|fp8||", "H200-SXM-141GB", False),
    ]
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(accuracy_report.ROWS_CSV_HEADER)
        for row_id, source, key, acc, absolute in rows:
            out.writerow([row_id, source, "x", key, acc, 1, absolute, 100, modelled[row_id]])
    return path


def test_the_diff_reads_what_accuracy_writes(tmp_path: Path) -> None:
    """The reader takes the columns ``accuracy_report.write_rows_csv`` writes: one real row
    written out comes back with its ratio and fields."""
    catalog = pytest.importorskip("accuracy").bench_catalog()
    rows, _ = published.load_rows(catalog)
    path = tmp_path / "rows.csv"
    accuracy_report.write_rows_csv(path, rows[:1], np.array([2.0 * rows[0].observation.throughput]))
    (held,) = accuracy_diff.read(path).values()
    assert held.ratio == pytest.approx(2.0, rel=1e-5)
    assert held.fields["source"] == rows[0].source
    assert held.fields["accelerator"] == rows[0].observation.accelerator
    assert held.fields["model"] in rows[0].key


def test_groups_are_ordered_by_how_far_they_moved_the_no_baseline_mean(tmp_path: Path) -> None:
    before = accuracy_diff.read(_write(tmp_path / "a.csv", {"r1": 80, "r2": 60, "r3": 50}))
    after = accuracy_diff.read(_write(tmp_path / "b.csv", {"r1": 90, "r2": 100, "r3": 10}))
    # Only r1 and r2 are predicted outright: (20 + 40) / 2 -> (10 + 0) / 2.
    assert accuracy_diff.no_baseline_mean(before) == pytest.approx(30.0)
    assert accuracy_diff.no_baseline_mean(after) == pytest.approx(5.0)
    changes = accuracy_diff.compare(before, after)
    assert [c.group[3] for c in changes[:2]] == ["RTX-5090", "RTX-4090"]
    assert changes[0].points == pytest.approx(-20.0)  # 40 points of error over 2 rows
    assert (changes[0].before, changes[0].after) == pytest.approx((0.6, 1.0))
    # The row not predicted outright moves no point, whatever its ratio did.
    assert changes[-1].group[0] == "mlperf" and changes[-1].points == 0.0


def test_grouping_by_fewer_fields_pools_the_rows(tmp_path: Path) -> None:
    before = accuracy_diff.read(_write(tmp_path / "a.csv", {"r1": 80, "r2": 60, "r3": 50}))
    after = accuracy_diff.read(_write(tmp_path / "b.csv", {"r1": 90, "r2": 100, "r3": 10}))
    (timm, mlperf) = accuracy_diff.compare(before, after, by=("source",))
    assert timm.group == ("timm",) and timm.rows == 2
    assert timm.points == pytest.approx(-25.0)
    assert (timm.before, timm.after) == pytest.approx((0.7, 0.95))
    assert mlperf.rows == 1


def test_the_command_prints_the_means_and_refuses_an_unknown_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(tmp_path / "a.csv", {"r1": 80, "r2": 60, "r3": 50})
    b = _write(tmp_path / "b.csv", {"r1": 90, "r2": 100, "r3": 10})
    assert accuracy_diff.main([str(a), str(b), "--by", "accelerator"]) == 0
    out = capsys.readouterr().out
    assert "no-baseline mean: 30.0 % -> 5.0 %" in out
    assert "RTX-5090" in out.splitlines()[2]
    with pytest.raises(SystemExit):
        accuracy_diff.main([str(a), str(b), "--by", "gpu"])
    assert "(got: gpu)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        accuracy_diff.main([str(a), str(b), "--by", ","])
    assert "(got: none)" in capsys.readouterr().err
