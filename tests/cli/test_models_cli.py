"""`recommender models`: the registry as a table or JSON (stdout only), clean errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from recommender.cli import app

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "models" / "fixtures"
runner = CliRunner()
ROW_KEYS = {
    "name",
    "title",
    "family",
    "type",
    "parameters",
    "active_parameters",
    "published_parameters",
    "published_active_parameters",
    "deviation_pct",
    "layers",
    "hidden_size",
    "max_sequence_length",
    "aliases",
    "source",
}


def test_json_lists_every_model_on_stdout_only() -> None:
    result = runner.invoke(app, ["models", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    rows = json.loads(result.stdout)
    assert len(rows) >= 45
    assert all(set(row) == ROW_KEYS for row in rows)
    names = [row["name"] for row in rows]
    assert len(set(names)) == len(names)
    assert all(abs(row["deviation_pct"]) <= 1.0 for row in rows)
    mixtral = next(row for row in rows if row["name"] == "mixtral-8x7b")
    assert mixtral["active_parameters"] < mixtral["parameters"]
    assert mixtral["source"]["url"].startswith("https://")
    dense = next(row for row in rows if row["name"] == "llama-3.1-8b")
    assert dense["active_parameters"] is None and dense["layers"] == 32


def test_table_shows_computed_beside_published() -> None:
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    assert "llama-3.1-8b" in result.stdout and "deepseek-v3" in result.stdout
    assert "8.03B" in result.stdout


def test_csv_has_one_row_per_model() -> None:
    result = runner.invoke(app, ["models", "--format", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("name,title,family,type,parameters")
    assert len(lines) - 1 == len(json.loads(runner.invoke(app, ["models", "-f", "json"]).stdout))


def test_broken_registry_file_exits_1_naming_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "models.yaml"
    bad.write_text(
        "schema_version: 1\nmodels:\n"
        "  - {name: x, title: X, family: cnn, published_parameters: 1.0e6,\n"
        "     source: {name: t}, architecture: {type: cnn, forward_flops: 1.0e6}}\n"
    )
    result = runner.invoke(app, ["models", "--models-file", str(bad), "--format", "json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "models.yaml:4 models[0].architecture.parameters: required field is missing" in (
        result.stderr
    )


def test_hf_config_shows_the_shape_of_a_local_config() -> None:
    path = FIXTURES / "mistralai--Mixtral-8x7B-v0.1.config.json"
    result = runner.invoke(app, ["models", "--hf-config", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    shape = json.loads(result.stdout)
    assert shape["type"] == "decoder" and shape["layers"] == 32
    assert round(shape["parameters"] / 1e9, 1) == 46.7
    assert round(shape["active_parameters"] / 1e9, 1) == 12.9


def test_hf_config_missing_key_exits_1_naming_key_and_file(tmp_path: Path) -> None:
    config = json.loads((FIXTURES / "Qwen--Qwen3-8B.config.json").read_text())
    del config["intermediate_size"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = runner.invoke(app, ["models", "--hf-config", str(path)])
    assert result.exit_code == 1
    assert "config.json intermediate_size: required key is missing" in result.stderr


def test_the_cli_names_the_registry_environment_variable_as_the_registry_does() -> None:
    from recommender.cli import models as cli_models
    from recommender.models import registry

    assert cli_models.MODELS_FILE_ENV == registry.MODELS_FILE_ENV


def test_probe_plan_offers_the_engines_objectives() -> None:
    import typing

    from recommender.cli import probe_plan
    from recommender.scoring.results import Objective

    assert typing.get_args(probe_plan.Objective) == typing.get_args(Objective)
