"""Nothing waits for the database without a bound: a locked table or a full pool is a 503
with Retry-After, /readyz fails when the database is slow, and routes that need no database
answer meanwhile."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from recommender.api import create_app
from recommender.api.app import DATABASE_RETRY_AFTER_S
from recommender.settings import Settings
from tests.api.conftest import assert_problem, bearer, mint, services_of


def _assert_db_free_routes_answer(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 200
    assert client.get("/v1/catalog/offers", params={"limit": 2}).status_code == 200
    assert client.get("/v1/catalog/status").status_code == 200
    assert client.get("/healthz").status_code == 200


def test_a_locked_sqlite_file_is_503_and_db_free_routes_answer(
    make_settings: Callable[..., Settings], tmp_path: Path, profile_doc: dict[str, Any]
) -> None:
    app = create_app(make_settings(db_lock_timeout_ms=50))
    with TestClient(app) as client:
        key = mint(app)
        lock = sqlite3.connect(tmp_path / "db" / "recommender.db", isolation_level=None)
        try:
            lock.execute("BEGIN EXCLUSIVE")
            r = client.post("/v1/profiles", json=profile_doc, headers=bearer(key))
            assert_problem(r, 503)
            assert r.headers["retry-after"] == str(DATABASE_RETRY_AFTER_S)
            _assert_db_free_routes_answer(client)
        finally:
            lock.close()
        assert client.post("/v1/profiles", json=profile_doc, headers=bearer(key)).status_code == 201


@pytest.mark.postgres
def test_a_locked_postgres_table_is_503_and_db_free_routes_answer(
    make_settings: Callable[..., Settings], postgres_url: str, profile_doc: dict[str, Any]
) -> None:
    app = create_app(make_settings(database_url=postgres_url, db_lock_timeout_ms=100))
    with TestClient(app) as client:
        key = mint(app)
        locker = create_engine(postgres_url)
        try:
            with locker.begin() as conn:
                conn.execute(text("LOCK TABLE profiles IN ACCESS EXCLUSIVE MODE"))
                r = client.post("/v1/profiles", json=profile_doc, headers=bearer(key))
                problem = assert_problem(r, 503)
                assert problem["type"].endswith("database-unavailable")
                assert "retry-after" in r.headers
                _assert_db_free_routes_answer(client)
        finally:
            locker.dispose()
        assert client.post("/v1/profiles", json=profile_doc, headers=bearer(key)).status_code == 201


def test_a_full_pool_is_503_not_500(
    make_settings: Callable[..., Settings], profile_doc: dict[str, Any]
) -> None:
    app = create_app(make_settings(db_pool_size=1, db_pool_timeout_seconds=0.05))
    with TestClient(app) as client:
        key = mint(app)
        engine = services_of(app).db.engine
        held = [engine.connect(), engine.connect()]  # pool_size 1 + overflow 1
        try:
            r = client.post("/v1/profiles", json=profile_doc, headers=bearer(key))
            assert_problem(r, 503)
            assert "retry-after" in r.headers
            _assert_db_free_routes_answer(client)
        finally:
            for conn in held:
                conn.close()


def test_readiness_fails_when_the_database_is_slow(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(make_settings(readiness_db_timeout_seconds=0.05))
    release = threading.Event()
    with TestClient(app) as client:
        assert client.get("/readyz").status_code == 200
        monkeypatch.setattr(services_of(app).db, "ping", lambda: release.wait(30))
        try:
            body = assert_problem(client.get("/readyz"), 503)
            assert "did not answer within 0.05 s" in body["detail"]
        finally:
            release.set()
