"""API test fixtures: an app on a small test catalog and a SQLite file, clients, API keys."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from recommender.api import create_app
from recommender.api.deps import Services
from recommender.catalog.manifest import write_manifest
from recommender.settings import Settings
from recommender.store import create_key

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[2]

# DESIGN.md's example workload, with a batch that fits the small test catalog's GPUs.
WORKLOAD: dict[str, Any] = {
    "name": "bert-large-finetune",
    "kind": "training",
    "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
    "precision": "bf16",
    "batch_size": 8,
    "data": {"samples": 8.8e4, "epochs": 2, "bytes_per_sample": 4.0e3},
}


def workload(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(WORKLOAD)
    out.update(changes)
    return out


@pytest.fixture
def profile_doc() -> dict[str, Any]:
    """A probe profile as `recommender probe` writes it (A100 40GB on GCP)."""
    doc: dict[str, Any] = json.loads((DATA / "profile.json").read_text())
    return doc


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """The repo's accelerators plus two small cloud files: fast to load, easy to reason about."""
    d = tmp_path / "catalog"
    d.mkdir()
    shutil.copy(REPO / "catalogs" / "accelerators.yaml", d)
    for f in DATA.glob("*.yaml"):
        shutil.copy(f, d)
    write_manifest(d)
    return d


@pytest.fixture
def make_settings(tmp_path: Path, catalog_dir: Path) -> Callable[..., Settings]:
    def make(**changes: Any) -> Settings:
        base: dict[str, Any] = {
            "database_url": f"sqlite:///{tmp_path}/db/recommender.db",
            "catalog_dir": catalog_dir,
            "catalog_poll_seconds": 0,
            "catalog_max_age_days": 0,
        }
        return Settings(**{**base, **changes})

    return make


@pytest.fixture
def app(make_settings: Callable[..., Settings]) -> FastAPI:
    return create_app(make_settings())


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def services_of(app: FastAPI) -> Services:
    services: Services = app.state.services
    return services


def mint(app: FastAPI, *, admin: bool = False, name: str = "test") -> str:
    with services_of(app).db.session() as session:
        return create_key(session, name, admin=admin).key


@pytest.fixture
def api_key(client: TestClient, app: FastAPI) -> str:
    return mint(app)


@pytest.fixture
def admin_key(client: TestClient, app: FastAPI) -> str:
    return mint(app, admin=True, name="admin")


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_problem(response: Any, status: int, *fields: str) -> dict[str, Any]:
    """The response is an RFC 9457 problem with ``status``, naming each of ``fields``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["title"] and body["detail"] and body["type"]
    named = {e["field"] for e in body.get("errors", [])}
    for field in fields:
        assert field in named, f"{field} not in {named}: {body}"
    return body
