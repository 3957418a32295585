"""`recommender catalog list --gpus N --purchase ...` over the shipped catalog."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from recommender.cli import app


def test_catalog_list_filters_by_gpu_count_and_purchase() -> None:
    args = ["catalog", "list", "--cloud", "gcp", "--gpus", "8", "--purchase", "reservation"]
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    offers = json.loads(result.stdout)
    assert offers and {o["gpus"] for o in offers} == {8}
    assert {o["purchase"] for o in offers} == {"reservation"}
    table = CliRunner().invoke(app, [*args, "--limit", "3"])
    assert table.exit_code == 0 and "reservation only" in table.stdout
