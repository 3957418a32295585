"""benchmarks/multinode_scaling.py: every row has a source, none is reserved, and on runs of
one workload at several sizes the planner is closer than linear scaling."""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

import pytest

from recommender import load_catalog
from tests.benchmarks.test_normalise import RESERVED

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

scaling = pytest.importorskip("multinode_scaling")


def test_rows_name_their_source_and_none_is_reserved() -> None:
    rows = list(csv.DictReader(scaling.DATA.open()))
    assert len(rows) >= 20
    for row in rows:
        assert row["source"].startswith("https://"), row["id"]
        assert not RESERVED.search(row["source"]), row["source"]
        assert float(row["measured"]) > 0


def test_same_workload_scaling_beats_linear_scaling(capsys: pytest.CaptureFixture[str]) -> None:
    """On one workload at several sizes (MLPerf, torchtitan) the planner is closer to the
    measurements than linear scaling (a regression guard; the overall target is reported by
    the benchmark, not asserted)."""
    errors, linear = scaling.score(load_catalog())
    capsys.readouterr()
    same = [e for family in ("mlperf", "torchtitan") for e in errors[family]]
    reference = [e for family in ("mlperf", "torchtitan") for e in linear[family]]
    assert statistics.mean(same) < statistics.mean(reference)
