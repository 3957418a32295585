"""Contract fuzzing: schemathesis drives every operation of the OpenAPI document in-process
with all its default checks (no server error, responses match the schema, documented
statuses and media types, auth enforced where declared, invalid input rejected).

One tolerance is configured: schema-valid data may be answered 422. The workload carries
rules JSON Schema cannot state (``min_gpus <= max_gpus``, training needs ``data.samples``,
accelerator names must exist in the catalog, ``profile_id`` must name a stored profile),
and the service answers those with 422 naming the field -- as its OpenAPI document says.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from recommender.api import create_app
from recommender.settings import Settings
from recommender.store import upgrade
from tests.api.conftest import DATA, REPO, mint, services_of

pytestmark = pytest.mark.slow

CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "422", "429"]
            }
        }
    }
)


def _app_on_scratch_files() -> tuple[FastAPI, Path]:
    """The app under test: the small test catalog and a SQLite file in a scratch directory."""
    root = Path(tempfile.mkdtemp(prefix="recommender-contract-"))
    catalog = root / "catalog"
    catalog.mkdir()
    shutil.copy(REPO / "catalogs" / "accelerators.yaml", catalog)
    for f in DATA.glob("*.yaml"):
        shutil.copy(f, catalog)
    settings = Settings(
        database_url=f"sqlite:///{root}/db.sqlite",
        catalog_dir=catalog,
        catalog_poll_seconds=0,
        catalog_max_age_days=0,
    )
    return create_app(settings), root


APP, SCRATCH = _app_on_scratch_files()
schema = schemathesis.openapi.from_dict(APP.openapi(), config=CONFIG)
schema.app = APP  # requests go to the app in-process (what `from_asgi` sets up)


@pytest.fixture(scope="module")
def admin_auth() -> Iterator[dict[str, str]]:
    upgrade(services_of(APP).db.engine)
    yield {"Authorization": f"Bearer {mint(APP, admin=True, name='fuzzer')}"}
    shutil.rmtree(SCRATCH, ignore_errors=True)


@schema.parametrize()
@settings(
    max_examples=int(os.environ.get("RECOMMENDER_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_api_contract(case: Any, admin_auth: dict[str, str]) -> None:
    case.call_and_validate(headers=admin_auth)
