"""Tables fit 80 and 100 columns without cutting a name; --wide, csv and markdown show all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recommender.cli import app
from recommender.cli._output import Column, fit_columns, out

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()


@pytest.fixture(params=[80, 100])
def width(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(out, "width", request.param)
    return int(request.param)


def _lines_fit(text: str, width: int) -> None:
    lines = text.splitlines()
    assert lines
    assert max(len(line) for line in lines) <= width
    assert "…" not in text and "..." not in text


@pytest.mark.parametrize("example", ["bert-inference.yaml", "llm-finetune.yaml"])
def test_recommend_fits_and_shows_every_instance_whole(width: int, example: str) -> None:
    args = ["recommend", str(EXAMPLES / example)]
    picks = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)["picks"]
    assert picks
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    _lines_fit(result.stdout, width)
    table = result.stdout.split("┘")[0]
    for pick in picks:
        assert pick["instance_type"] in table
        assert pick["accelerator"] in table
        assert pick["region"] in table
    assert "--wide shows all" in result.stdout  # the legend of the columns left out


def test_accelerators_fit_and_name_every_accelerator(width: int) -> None:
    ids = [a["id"] for a in json.loads(runner.invoke(app, ["accelerators", "-f", "json"]).stdout)]
    result = runner.invoke(app, ["accelerators"])
    assert result.exit_code == 0
    _lines_fit(result.stdout, width)
    for ident in ids:
        assert f"│ {ident} " in result.stdout


def test_wide_shows_every_column(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(out, "width", 80)
    result = runner.invoke(app, ["recommend", str(EXAMPLES / "bert-inference.yaml"), "--wide"])
    header = result.stdout.splitlines()[1:4]
    for name in ("cloud", "pricing", "USD/h", "throughput", "bound"):
        assert any(name in line for line in header), name
    assert "--wide shows all" not in result.stdout


def test_markdown_and_csv_have_every_column() -> None:
    md = runner.invoke(app, ["recommend", str(EXAMPLES / "bert-inference.yaml"), "-f", "markdown"])
    assert md.exit_code == 0
    table = [line for line in md.stdout.splitlines() if line.startswith("|")]
    assert table[0].count("|") == 12  # 11 columns
    assert table[1] == "|" + "---|" * 11
    assert len(table) == 2 + 5
    csv = runner.invoke(app, ["catalog", "list", "--limit", "2", "-f", "csv", "--gpu", "H100"])
    assert csv.stdout.splitlines()[0].startswith("cloud,region,")


def test_fit_columns_drops_the_highest_drop_first() -> None:
    cols = [Column("a"), Column("b", drop=1), Column("c", drop=2)]
    rows = [["x" * 10, "y" * 10, "z" * 10]]
    assert fit_columns(cols, rows, 200) == [0, 1, 2]
    assert fit_columns(cols, rows, 30) == [0, 1]
    assert fit_columns(cols, rows, 10) == [0]
