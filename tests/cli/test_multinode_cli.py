"""Multi-node picks on the command line: ``4 x p5.48xlarge`` in the table, ``--nodes N``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from recommender.cli import app

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llm-pretrain-multinode.yaml"
# The shipped multi-node example, narrowed to one cloud and accelerator to keep the run short.
PRETRAIN = {
    **yaml.safe_load(EXAMPLE.read_text()),
    "constraints": {"clouds": ["aws"], "accelerators": ["H100-SXM5-80GB"]},
}


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "pretrain.yaml"
    path.write_text(yaml.safe_dump(PRETRAIN))
    return path


def test_the_table_names_the_node_count(tmp_path: Path) -> None:
    r = runner.invoke(app, ["recommend", str(_file(tmp_path)), "--wide"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.stdout
    assert " x p5.48xlarge" in r.stdout
    body = runner.invoke(app, ["recommend", str(_file(tmp_path)), "--format", "json"])
    pick = json.loads(body.stdout)["picks"][0]
    assert pick["nodes"] > 1 and pick["total_gpus"] == 8 * pick["nodes"]
    assert set(pick["plan"]) >= {
        "data_parallel", "tensor_parallel", "pipeline_parallel", "sharding", "micro_batch",
        "global_batch",
    }  # fmt: skip
    assert 0 < pick["predicted"]["scaling_efficiency"] <= 1


def test_predict_takes_a_node_count(tmp_path: Path) -> None:
    args = ["predict", str(_file(tmp_path)), "-a", "H100", "--gpus", "8", "--nodes", "4"]
    r = runner.invoke(app, [*args, "--format", "json"])
    assert r.exit_code == 0, r.stdout
    body = json.loads(r.stdout)
    assert body["nodes"] == 4 and body["total_gpus"] == 32 and body["plan"]["tensor_parallel"]
    table = runner.invoke(app, args)
    assert "4 nodes x 8 x H100-SXM5-80GB" in table.stdout
    zero = runner.invoke(app, [*args[:-1], "0"])
    assert zero.exit_code == 2
