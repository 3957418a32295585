"""``recommender serve`` migrates the database only when RECOMMENDER_AUTO_MIGRATE allows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import uvicorn
from typer.testing import CliRunner

from recommender.cli import app


def _serve(monkeypatch: pytest.MonkeyPatch, db: Path, **env: str) -> list[Any]:
    started: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda target, **kw: started.append(target))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["serve", "--database-url", f"sqlite:///{db}"])
    assert result.exit_code == 0, result.output
    return started


def _tables(db: Path) -> set[str]:
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_serve_migrates_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "r.db"
    assert _serve(monkeypatch, db)
    assert "alembic_version" in _tables(db)


def test_serve_leaves_the_schema_alone_when_auto_migrate_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.db"
    assert _serve(monkeypatch, db, RECOMMENDER_AUTO_MIGRATE="false")
    assert "alembic_version" not in _tables(db)
