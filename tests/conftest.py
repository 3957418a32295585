"""Shared fixtures: the bundled catalog (loaded once) and a scratch copy to break."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recommender.catalog import Catalog, load_catalog

REPO = Path(__file__).resolve().parent.parent
CATALOG_DIR = REPO / "catalogs"

# No test may reach a cloud: credential chains must not fall back to metadata endpoints.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("GCE_METADATA_HOST", "127.0.0.1:1")
os.environ.setdefault("GCE_METADATA_IP", "127.0.0.1:1")
# The CLI's piped tables are asserted at their default width (PIPED_WIDTH, or $COLUMNS):
# pytest-xdist's workers start with COLUMNS=80 in their environment (seen with xdist 3.8 when
# the controller had none), which would make those tests depend on how pytest was started.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
# The catalog cache of this run (and of the commands it starts) stays out of the user's home.
os.environ["RECOMMENDER_CACHE_DIR"] = tempfile.mkdtemp(prefix="recommender-test-cache-")


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


# -- PostgreSQL (the service's storage tests) -------------------------------------------------
# Tests marked `postgres` use a throwaway schema per test on RECOMMENDER_TEST_POSTGRES_URL. They
# skip, saying why, when the server is unreachable -- except under CI=true, where they fail.
POSTGRES_URL = os.environ.get(
    "RECOMMENDER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session")
def postgres_server() -> str:
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import OperationalError

    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = f"PostgreSQL unreachable at {POSTGRES_URL} ({str(exc).splitlines()[0]})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true requires it (set RECOMMENDER_TEST_POSTGRES_URL)")
        pytest.skip(f"{reason}; set RECOMMENDER_TEST_POSTGRES_URL to run these tests")
    finally:
        engine.dispose()
    return POSTGRES_URL


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A database URL whose search_path is a fresh schema, dropped after the test."""
    import uuid

    from sqlalchemy import create_engine, text

    schema = f"rt_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_server)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in postgres_server else "?"
    try:
        yield f"{postgres_server}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
