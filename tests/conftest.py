"""Shared fixtures: the bundled catalog (loaded once) and a scratch copy to break."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from recommender.catalog import Catalog, load_catalog

REPO = Path(__file__).resolve().parent.parent
CATALOG_DIR = REPO / "catalogs"

# No test may reach a cloud: credential chains must not fall back to metadata endpoints.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("GCE_METADATA_HOST", "127.0.0.1:1")
os.environ.setdefault("GCE_METADATA_IP", "127.0.0.1:1")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(CATALOG_DIR)


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled catalog YAML files."""
    dst = tmp_path / "catalogs"
    dst.mkdir()
    for f in CATALOG_DIR.glob("*.yaml"):
        shutil.copy(f, dst / f.name)
    return dst
