"""`recommender apikey create|list|revoke` and `recommender db upgrade`."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recommender.cli import app
from recommender.store import Database, head_revision, verify_key


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/state/rec.db"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_create_prints_the_key_once_and_stores_its_digest(db_url: str, tmp_path: Path) -> None:
    code, out, err = _run("apikey", "create", "--name", "probe-fleet", "--database-url", db_url)
    assert code == 0, err
    key = out.strip()
    assert key.startswith("rk_") and len(key.splitlines()) == 1
    assert "shown only now" in err and key not in err
    with sqlite3.connect(tmp_path / "state" / "rec.db") as conn:
        rows = conn.execute("SELECT name, key_sha256, admin FROM api_keys").fetchall()
    assert rows == [("probe-fleet", hashlib.sha256(key.encode()).hexdigest(), 0)]
    db = Database(db_url)
    with db.session() as session:
        info = verify_key(session, key)
    assert info is not None and info.name == "probe-fleet"

    code, out, _ = _run("apikey", "list", "--format", "json", "--database-url", db_url)
    listed = json.loads(out)
    assert listed[0]["name"] == "probe-fleet" and key not in out
    assert listed[0]["prefix"] == key[:11]


def test_admin_key_json_and_revoke(db_url: str) -> None:
    code, out, _ = _run(
        "apikey", "create", "--name", "ops", "--admin", "--format", "json", "--database-url", db_url
    )
    minted = json.loads(out)
    assert code == 0 and minted["admin"] is True and minted["key"].startswith(minted["prefix"])
    code, out, _ = _run(
        "apikey", "revoke", minted["prefix"], "--format", "json", "--database-url", db_url
    )
    assert code == 0 and json.loads(out)["revoked_at"]
    with Database(db_url).session() as session:
        assert verify_key(session, minted["key"]) is None
    code, _, err = _run("apikey", "revoke", "rk_ffffffff", "--database-url", db_url)
    assert code == 1 and "no API key" in err


def test_empty_name_is_refused(db_url: str) -> None:
    code, _, err = _run("apikey", "create", "--name", " ", "--database-url", db_url)
    assert code == 2 and "--name" in err


def test_db_upgrade(db_url: str) -> None:
    code, out, _ = _run("db", "upgrade", "--format", "json", "--database-url", db_url)
    assert code == 0 and json.loads(out)["revision"] == head_revision()


def test_unreachable_database_is_a_clear_error() -> None:
    url = "postgresql+psycopg://nobody:secret@127.0.0.1:9/none"
    code, _, err = _run("db", "upgrade", "--database-url", url)
    assert code == 1 and "cannot open the database" in err and "secret" not in err


def test_bad_setting_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOMMENDER_DATABASE_URL", "mysql://x/y")
    code, _, err = _run("db", "upgrade")
    assert code == 2 and "RECOMMENDER_DATABASE_URL" in err


def test_db_downgrade_and_prune(db_url: str) -> None:
    assert _run("db", "upgrade", "--database-url", db_url)[0] == 0
    code, out, err = _run("db", "downgrade", "--format", "json", "--database-url", db_url)
    assert code == 0, err
    assert json.loads(out) == {
        "database": db_url,
        "from": head_revision(),
        "revision": "0001",
    }
    code, _, err = _run("db", "downgrade", "nonsense", "--database-url", db_url)
    assert code == 1 and "nonsense" in err
    code, out, err = _run("db", "prune", "--format", "json", "--database-url", db_url)
    assert code == 0, err
    assert json.loads(out)["total"] == 0
