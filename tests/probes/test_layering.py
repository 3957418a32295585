"""The import contracts of DESIGN.md hold (import-linter, configured in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from importlinter.cli import lint_imports

from probes.spec import CloudName, Precision
from recommender.catalog.schema import CloudName as CatalogCloudName
from recommender.catalog.schema import Precision as CatalogPrecision

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_probes_and_scoring_keep_their_layers() -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0


def test_probe_literals_are_the_catalogs() -> None:
    assert get_args(Precision) == get_args(CatalogPrecision)
    assert get_args(CloudName) == get_args(CatalogCloudName)
