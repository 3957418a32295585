"""Storage: migrations match the models on SQLite and PostgreSQL; API keys are hashed."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select

from recommender.store import (
    ApiKeyRow,
    Base,
    Database,
    create_key,
    current_revision,
    head_revision,
    key_prefix,
    list_keys,
    normalize_url,
    revoke_key,
    upgrade,
    verify_key,
)


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Database:
    db = Database(f"sqlite:///{tmp_path}/nested/dir/rec.db")
    upgrade(db.engine)
    return db


def _assert_schema_matches_models(db: Database) -> None:
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, Base.metadata) == []
    assert current_revision(db.engine) == head_revision()
    tables = set(inspect(db.engine).get_table_names())
    assert {"api_keys", "profiles", "recommendations", "alembic_version"} <= tables


def test_sqlite_migrations_create_the_models_schema(sqlite_db: Database) -> None:
    _assert_schema_matches_models(sqlite_db)
    assert upgrade(sqlite_db.engine) == head_revision()  # idempotent
    with sqlite_db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


@pytest.mark.postgres
def test_postgres_migrations_create_the_models_schema(postgres_url: str) -> None:
    db = Database(postgres_url)
    try:
        upgrade(db.engine)
        _assert_schema_matches_models(db)
        assert db.backend == "postgresql"
    finally:
        db.dispose()


@pytest.mark.postgres
def test_concurrent_upgrades_apply_once(postgres_url: str) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        db = Database(postgres_url, pool_size=1)
        try:
            upgrade(db.engine)
        except BaseException as exc:
            errors.append(exc)
        finally:
            db.dispose()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_driverless_postgres_url_means_psycopg3() -> None:
    assert normalize_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgresql+psycopg://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("sqlite:///x.db").drivername == "sqlite"


def test_keys_are_stored_as_digests_only(sqlite_db: Database) -> None:
    with sqlite_db.session() as s:
        minted = create_key(s, "ci", admin=True)
    key = minted.key
    assert key.startswith(f"rk_{minted.info.prefix}_") and key_prefix(key) == minted.info.prefix
    with sqlite_db.session() as s:
        row = s.scalar(select(ApiKeyRow))
        assert row is not None
        assert row.key_sha256 == hashlib.sha256(key.encode()).hexdigest()
        assert key not in (row.name, row.prefix, row.key_sha256)
        info = verify_key(s, key)
        assert info is not None and info.admin and info.name == "ci"
        assert verify_key(s, key[:-1] + ("x" if key[-1] != "x" else "y")) is None
        assert verify_key(s, "rk_" + minted.info.prefix) is None
        assert verify_key(s, "") is None


def test_two_keys_differ_and_revocation_sticks(sqlite_db: Database) -> None:
    with sqlite_db.session() as s:
        a, b = create_key(s, "a"), create_key(s, "b")
    assert a.key != b.key and a.info.prefix != b.info.prefix
    with sqlite_db.session() as s:
        revoked = revoke_key(s, f"rk_{a.info.prefix}")
        assert revoked.revoked_at is not None
    with sqlite_db.session() as s:
        assert verify_key(s, a.key) is None and verify_key(s, b.key) is not None
        assert [k.name for k in list_keys(s)] == ["a", "b"]
        with pytest.raises(LookupError, match="no API key"):
            revoke_key(s, "rk_ffffffff")
        with pytest.raises(ValueError, match="name"):
            create_key(s, "  ")
