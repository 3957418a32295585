"""Applying the packaged Alembic migrations programmatically (at startup or ``db upgrade``).

The migration scripts ship inside the package (``recommender/store/migrations``), so an
installed wheel can create and upgrade its database without an ``alembic.ini``. On
PostgreSQL the upgrade holds an advisory lock, so several processes starting at once apply
each migration exactly once.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

__all__ = ["current_revision", "head_revision", "upgrade"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# An arbitrary constant naming this application's migration lock.
_PG_LOCK_KEY = 0x7EC0_33E4_D000_0001


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


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Bring the database to ``revision``; returns the revision it is at afterwards."""
    config = _config()
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
    return current_revision(engine)
