"""`recommender recommend` / `predict`: the DESIGN.md JSON contracts and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from recommender.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()

PICK_KEYS = {
    "rank",
    "cloud",
    "region",
    "instance_type",
    "accelerator",
    "gpus",
    "pricing",
    "price_per_hour",
    "predicted",
    "cost",
    "why",
}
PREDICTED_KEYS = {"throughput", "step_time_s", "total_hours", "bottleneck", "utilization"}


def test_recommend_json_contract() -> None:
    result = runner.invoke(
        app,
        [
            "recommend",
            str(EXAMPLES / "resnet50-imagenet.yaml"),
            "--objective",
            "cheapest",
            "--top",
            "3",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {"picks", "advice"} <= set(doc)
    assert len(doc["picks"]) == 3
    for pick in doc["picks"]:
        assert set(pick) >= PICK_KEYS
        assert set(pick["predicted"]) >= PREDICTED_KEYS
        assert "total_usd" in pick["cost"]
        assert isinstance(pick["why"], list) and pick["why"]


def test_predict_json_contract() -> None:
    result = runner.invoke(
        app,
        [
            "predict",
            str(EXAMPLES / "llm-finetune.yaml"),
            "--accelerator",
            "nvidia h100 80gb hbm3",
            "--gpus",
            "8",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {
        "accelerator",
        "gpus",
        "throughput",
        "step_time_s",
        "bottleneck",
        "fits_in_memory",
    } <= set(doc)
    assert doc["accelerator"] == "H100-SXM5-80GB" and doc["gpus"] == 8


def test_table_output_explains() -> None:
    result = runner.invoke(app, ["recommend", str(EXAMPLES / "bert-inference.yaml")])
    assert result.exit_code == 0, result.output
    assert "advice:" in result.stdout and "#1" in result.stdout


def test_bad_workload_names_file_line_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: x\nkind: training\nmodel: {parameters: 1e9, flops_per_sample: 1e9}\n"
        "batch_size: -2\ndata: {samples: 10}\n"
    )
    result = runner.invoke(app, ["recommend", str(bad), "--format", "json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "bad.yaml:4 batch_size: must be >= 1" in result.stderr


def test_unknown_accelerator_is_a_clear_error() -> None:
    result = runner.invoke(app, ["predict", str(EXAMPLES / "llm-finetune.yaml"), "-a", "A1OO"])
    assert result.exit_code == 2
    assert "unknown accelerator 'A1OO'" in result.stderr


def test_profile_must_be_a_probe_profile(tmp_path: Path) -> None:
    junk = tmp_path / "p.json"
    junk.write_text('{"hello": 1}')
    result = runner.invoke(
        app, ["recommend", str(EXAMPLES / "llm-finetune.yaml"), "--profile", str(junk)]
    )
    assert result.exit_code == 2
    assert "is not a probe profile" in result.stderr
