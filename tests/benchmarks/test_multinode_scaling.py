"""benchmarks/multinode_scaling.py: every row has a source, none is reserved, and on runs of
one workload at several sizes the planner is closer than linear scaling."""

from __future__ import annotations

import csv
import statistics

import pytest

from recommender import load_catalog
from tests.benchmarks.test_normalise import RESERVED

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


def test_weak_scaling_gains_of_large_models_are_predicted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Megatron-LM's weak-scaling table rises from 137 to 163 TFLOP/s per GPU as the models
    grow: their score matrices shrink against their GEMMs faster than tensor parallelism costs.
    The planner must see the rise (largest run above the smallest) and beat linear scaling."""
    errors, linear = scaling.score(load_catalog())
    out = capsys.readouterr().out
    last = [line for line in out.splitlines() if line.startswith("megatron")][-1]
    assert float(last.split()[3].rstrip("%")) > 100.0  # predicted efficiency at 3,072 GPUs
    assert statistics.mean(errors["megatron"]) < statistics.mean(linear["megatron"])
