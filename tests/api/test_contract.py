"""Contract fuzzing: schemathesis drives every operation of the OpenAPI document in-process
with all its default checks (no server error, responses match the schema, documented
statuses and media types, auth enforced where declared, invalid input rejected).

Two tolerances are configured: schema-valid data may be answered 422, and schema-invalid
data may be rejected with 413 (a list past its bound can be past the body size limit too).
The workload carries rules JSON Schema cannot state (``min_gpus <= max_gpus``, training
needs ``data.samples``, accelerator names must exist in the catalog, ``profile_id`` must name
a stored profile), and the service answers those with 422 naming the field -- as its
OpenAPI document says.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from recommender.api import create_app
from recommender.catalog.manifest import write_manifest
from recommender.settings import Settings
from recommender.store import upgrade
from tests.api.conftest import DATA, REPO, mint, services_of

pytestmark = pytest.mark.slow

CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "422", "429"]
            },
            # A body past a list bound (10,000 items) is past the 1 MiB body limit too: 413 is
            # how the service rejects it.
            "negative_data_rejection": {
                "expected-statuses": [
                    "400",
                    "401",
                    "403",
                    "404",
                    "405",
                    "406",
                    "409",
                    "413",
                    "415",
                    "422",
                    "428",
                    "429",
                ]
            },
        }
    }
)


SCRATCH = Path(tempfile.mkdtemp(prefix="recommender-contract-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)  # also when the tests are deselected
EXAMPLES = int(os.environ.get("RECOMMENDER_FUZZ_EXAMPLES", "25"))


def _app_on_scratch_files(name: str, **changes: Any) -> FastAPI:
    """An app under test: the small test catalog and a SQLite file in a scratch directory."""
    root = SCRATCH / name
    catalog = root / "catalog"
    catalog.mkdir(parents=True)
    shutil.copy(REPO / "catalogs" / "accelerators.yaml", catalog)
    for f in DATA.glob("*.yaml"):
        shutil.copy(f, catalog)
    write_manifest(catalog)
    settings = Settings(
        database_url=f"sqlite:///{root}/db.sqlite",
        catalog_dir=catalog,
        catalog_poll_seconds=0,
        catalog_max_age_days=0,
        # The fuzzer is one client sending thousands of requests a minute: past the rate
        # limit every answer would be 429 (tests/api/test_ratelimit.py covers the limiter).
        rate_limit_per_address="",
        rate_limit_per_key="",
        **changes,
    )
    return create_app(settings)


def _schema(app: FastAPI) -> Any:
    loaded = schemathesis.openapi.from_dict(app.openapi(), config=CONFIG)
    loaded.app = app  # requests go to the app in-process (what `from_asgi` sets up)
    return loaded


OPEN = _app_on_scratch_files("open")
LOCKED = _app_on_scratch_files("locked", require_key_for_reads=True)
schema, locked_schema = _schema(OPEN), _schema(LOCKED)


def _admin_header(app: FastAPI) -> dict[str, str]:
    upgrade(services_of(app).db.engine)
    return {"Authorization": f"Bearer {mint(app, admin=True, name='fuzzer')}"}


@pytest.fixture(scope="module")
def auth() -> dict[str, dict[str, str]]:
    return {"open": _admin_header(OPEN), "locked": _admin_header(LOCKED)}


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@schema.parametrize()
@FUZZ
def test_api_contract(case: Any, auth: dict[str, dict[str, str]]) -> None:
    case.call_and_validate(headers=auth["open"])


@locked_schema.parametrize()
@settings(FUZZ, max_examples=max(5, EXAMPLES // 3))
def test_api_contract_with_keys_required_for_reads(
    case: Any, auth: dict[str, dict[str, str]]
) -> None:
    """Every /v1 operation declares the key; `ignored_auth` checks each one refuses without it."""
    case.call_and_validate(headers=auth["locked"])
