"""No silent empties: unknown names are errors with place and suggestions, empty answers say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import recommender
from recommender.catalog import Catalog
from recommender.cli import app
from recommender.cli.recommend import EXIT_NO_PICK

runner = CliRunner()
SPEC = """\
name: t
kind: inference
model: {parameters: 1.1e8, flops_per_sample: 2.2e10}
"""


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return recommender.load_catalog()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _file(text: str) -> str:
    Path("w.yaml").write_text(text, encoding="utf-8")
    return "w.yaml"


def test_region_typo_names_file_line_field_and_the_closest_region() -> None:
    path = _file(SPEC + "constraints:\n  regions: [europe-west4, us-central-1]\n")
    result = runner.invoke(app, ["recommend", path])
    assert result.exit_code == 2
    assert "w.yaml:5 constraints.regions[1]: unknown region 'us-central-1'" in result.stderr
    assert "did you mean us-central1" in result.stderr


def test_accelerator_typo_is_placed_too() -> None:
    path = _file(SPEC + "constraints:\n  accelerators:\n    - A100-80\n")
    result = runner.invoke(app, ["recommend", path, "--format", "json"])
    assert result.exit_code == 2
    assert "w.yaml:6 constraints.accelerators[0]: unknown accelerator 'A100-80'" in result.stderr
    assert result.stdout == ""


def test_library_raises_the_same_workload_error(catalog: Catalog) -> None:
    spec = {
        "name": "t",
        "kind": "inference",
        "model": {"parameters": 1.1e8, "flops_per_sample": 2.2e10},
        "constraints": {"regions": ["us-central-1"]},
    }
    with pytest.raises(recommender.WorkloadError) as info:
        recommender.recommend(spec, catalog=catalog)
    assert info.value.field == "constraints.regions[0]"
    assert isinstance(info.value, ValueError)  # the API answers ValueErrors with a 422


def test_no_pick_names_each_exclusion_and_exits_3() -> None:
    path = _file(SPEC + "constraints: {regions: [europe-west4], max_price_per_hour: 0.05}\n")
    result = runner.invoke(app, ["recommend", path, "--format", "json"])
    assert result.exit_code == EXIT_NO_PICK == 3
    doc = json.loads(result.stdout)
    assert doc["picks"] == []
    assert doc["excluded"]["not in constraints.regions (europe-west4)"] > 0
    assert doc["excluded"]["over constraints.max_price_per_hour (0.05 USD/h)"] > 0
    (no_pick,) = [a for a in doc["advice"] if a.startswith("No offer")]
    assert "()" not in no_pick
    assert "constraints.regions" in no_pick and "max_price_per_hour" in no_pick


def test_no_constraints_reports_the_default_on_demand_filter(catalog: Catalog) -> None:
    r = recommender.recommend(
        {"name": "t", "kind": "inference", "model": {"parameters": 1e8, "flops_per_sample": 2e10}},
        catalog=catalog,
    )
    assert r.picks
    assert not any("outside the constraints" in k for k in r.excluded)
    (spot,) = [k for k in r.excluded if k.startswith("spot")]
    assert "on-demand only by default" in spot
    assert r.excluded[spot] == int((catalog.offers.spot).sum())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cloud", "oracle"], "unknown cloud 'oracle'"),
        (["--region", "us-central-1"], "did you mean us-central1"),
        (["--gpu", "A100-80"], "unknown accelerator 'A100-80'"),
        (["--max-price", "-1"], "-1 is not a price per hour"),
        (["--min-gpu-memory", "0"], "0 is not GB per GPU"),
    ],
)
def test_impossible_catalog_filters_are_errors(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["catalog", "list", *args])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_valid_filters_matching_nothing_say_so_and_exit_3() -> None:
    result = runner.invoke(
        app, ["catalog", "list", "--cloud", "aws", "--region", "europe-west4", "-f", "json"]
    )
    assert result.exit_code == 3
    assert json.loads(result.stdout) == []
    assert "no offer matches" in result.stderr
