"""Bounded storage: prune keeps anonymous answers for the retention period and within their
bound, each key within its quota, idempotency records for their own period."""

from __future__ import annotations

import datetime as dt
import multiprocessing
from pathlib import Path

import pytest
from sqlalchemy import func, select

from recommender.store import (
    Database,
    IdempotencyRow,
    RecommendationRow,
    RetentionPolicy,
    add_recommendation,
    create_key,
    current_revision,
    downgrade,
    head_revision,
    prune,
    save_idempotent,
    upgrade,
)

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
POLICY = RetentionPolicy(
    anonymous_retention=dt.timedelta(hours=24),
    anonymous_max=3,
    per_key_max=2,
    idempotency_retention=dt.timedelta(hours=1),
)


@pytest.fixture
def db(tmp_path: Path) -> Database:
    db = Database(f"sqlite:///{tmp_path}/rec.db")
    upgrade(db.engine)
    return db


def _add(db: Database, hours_ago: float, key_id: int | None = None) -> None:
    with db.session() as s:
        row = add_recommendation(
            s,
            request={},
            result={},
            workload_name="w",
            objective="balanced",
            profile_id=None,
            api_key_id=key_id,
        )
        row.created_at = NOW - dt.timedelta(hours=hours_ago)


def _ages(db: Database, key_id: int | None) -> list[float]:
    with db.session() as s:
        where = (
            RecommendationRow.api_key_id.is_(None)
            if key_id is None
            else RecommendationRow.api_key_id == key_id
        )
        rows = s.scalars(select(RecommendationRow.created_at).where(where))
        return sorted((NOW - t).total_seconds() / 3600 for t in rows)


def test_prune_applies_retention_and_quotas(db: Database) -> None:
    with db.session() as s:
        key_id = create_key(s, "k").info.id
    for hours in (0.1, 0.2, 0.3, 0.4, 30.0):
        _add(db, hours)
    for hours in (0.1, 0.2, 0.3):
        _add(db, hours, key_id)
    with db.session() as s:
        save_idempotent(
            s, scope="a", key="old", request_sha256="x", status=201, location=None, response={}
        )
        s.scalar(select(IdempotencyRow)).created_at = NOW - dt.timedelta(hours=2)  # type: ignore[union-attr]
        save_idempotent(
            s, scope="a", key="new", request_sha256="x", status=201, location=None, response={}
        )
        s.scalars(select(IdempotencyRow).where(IdempotencyRow.key == "new")).one().created_at = NOW
    with db.session() as s:
        report = prune(s, POLICY, now=NOW)
    assert (report.anonymous_expired, report.anonymous_over_quota) == (1, 1)
    assert (report.keyed_over_quota, report.idempotency_expired) == (1, 1)
    assert _ages(db, None) == pytest.approx([0.1, 0.2, 0.3])
    assert _ages(db, key_id) == pytest.approx([0.1, 0.2])
    with db.session() as s:
        assert prune(s, POLICY, now=NOW).total == 0
        assert s.scalar(select(func.count()).select_from(IdempotencyRow)) == 1


def test_unbounded_policy_keeps_everything(db: Database) -> None:
    for hours in (1.0, 100.0, 1000.0):
        _add(db, hours)
    policy = RetentionPolicy(None, None, None, dt.timedelta(hours=1))
    with db.session() as s:
        assert prune(s, policy, now=NOW).total == 0
    assert len(_ages(db, None)) == 3


def test_downgrade_then_upgrade(db: Database) -> None:
    assert downgrade(db.engine) == "0001"
    assert downgrade(db.engine, "base") is None
    assert upgrade(db.engine) == head_revision()
    assert current_revision(db.engine) == head_revision()


def _migrate(url: str) -> None:
    db = Database(url, pool_size=1)
    try:
        upgrade(db.engine)
    finally:
        db.dispose()


def test_processes_starting_on_an_empty_sqlite_file_migrate_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/race.db"
    spawn = multiprocessing.get_context("spawn")
    procs = [spawn.Process(target=_migrate, args=(url,)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    db = Database(url)
    assert current_revision(db.engine) == head_revision()
    assert (tmp_path / "race.db.migrate.lock").exists()
