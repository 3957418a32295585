"""What the service stores survives a restart of the app: SQLite file and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recommender.api import create_app
from recommender.settings import Settings
from tests.api.conftest import bearer, mint, workload


def _write_then_restart(settings: Settings, profile_doc: dict[str, Any]) -> None:
    first = create_app(settings)
    with TestClient(first) as client:
        key = mint(first)
        profile = client.post("/v1/profiles", json=profile_doc, headers=bearer(key)).json()
        rec = client.post(
            "/v1/recommendations", json={**workload(), "profile_id": profile["id"], "top": 2}
        ).json()

    second = create_app(settings)  # a new process would see exactly this
    with TestClient(second) as client:
        again = client.get(f"/v1/recommendations/{rec['id']}")
        assert again.status_code == 200 and again.json() == rec
        stored = client.get(f"/v1/profiles/{profile['id']}").json()
        assert stored["profile"]["machine"]["hostname"] == "train-a100-1"
        assert {k: stored[k] for k in profile} == profile
        assert client.get("/v1/profiles").json()["total"] == 1
        # The key minted before the restart still works.
        up = client.post("/v1/profiles", json=profile_doc, headers=bearer(key))
        assert up.status_code == 201


def test_sqlite_file_survives_restart(
    make_settings: Callable[..., Settings], profile_doc: dict[str, Any]
) -> None:
    settings = make_settings()
    _write_then_restart(settings, profile_doc)
    with create_app(settings).state.services.db.engine.connect() as conn:
        mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
    assert mode == "wal"


@pytest.mark.postgres
def test_postgres_survives_restart(
    make_settings: Callable[..., Settings], postgres_url: str, profile_doc: dict[str, Any]
) -> None:
    _write_then_restart(make_settings(database_url=postgres_url), profile_doc)
