"""Applying the packaged Alembic migrations programmatically (at startup or ``db upgrade``).

The migration scripts ship inside the package (``recommender/store/migrations``), so an
installed wheel can create and upgrade its database without an ``alembic.ini``. Several
processes starting at once apply each migration exactly once: on PostgreSQL the migration
holds an advisory lock, on a SQLite file an exclusive lock on ``<file>.migrate.lock``
(:mod:`filelock`), taken before the first connection so that even creating the tables is
serialised.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from filelock import FileLock
from sqlalchemy import Connection, Engine, text

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# An arbitrary constant naming this application's migration lock.
_PG_LOCK_KEY = 0x7EC0_33E4_D000_0001
# How long a process waits for another one's migration before giving up (seconds).
MIGRATION_LOCK_TIMEOUT_S = 120.0


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str:
    """The newest migration shipped with this version of the package."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at (``None`` for an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


@contextlib.contextmanager
def _file_lock(engine: Engine) -> Iterator[None]:
    """An exclusive lock beside a SQLite file (nothing for PostgreSQL or in-memory SQLite)."""
    database = engine.url.database or ""
    if engine.dialect.name != "sqlite" or database in ("", ":memory:") or "mode=memory" in database:
        yield
        return
    path = Path(database.removeprefix("file:").split("?", 1)[0]).expanduser()
    with FileLock(f"{path}.migrate.lock", timeout=MIGRATION_LOCK_TIMEOUT_S):
        yield


@contextlib.contextmanager
def _migrating(engine: Engine) -> Iterator[tuple[Config, Connection]]:
    config = _config()
    with _file_lock(engine), engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        config.attributes["connection"] = conn
        yield config, conn


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Bring the database to ``revision``; returns the revision it is at afterwards."""
    with _migrating(engine) as (config, _conn):
        command.upgrade(config, revision)
    return current_revision(engine)


def downgrade(engine: Engine, revision: str = "-1") -> str | None:
    """Take the database back to ``revision`` (``-1``: one step, ``base``: empty); returns
    the revision it is at afterwards. Data held only by the undone migrations is lost."""
    with _migrating(engine) as (config, _conn):
        command.downgrade(config, revision)
    return current_revision(engine)
