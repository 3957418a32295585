"""Opening the database: one engine per app, SQLite tuned for a small server, PostgreSQL as given.

SQLite files get WAL mode (readers never wait for the writer), ``synchronous=NORMAL`` (safe
with WAL, one fsync per checkpoint instead of per commit), a busy timeout so concurrent
writers queue instead of failing, and enforced foreign keys. A ``postgresql://`` URL without
a driver is read as psycopg 3, the driver the ``postgres`` extra installs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

__all__ = ["Database", "create_db_engine", "normalize_url", "ping", "session_factory"]

SQLITE_BUSY_TIMEOUT_MS = 10_000


def normalize_url(url: str) -> URL:
    """The URL with psycopg 3 as the PostgreSQL driver unless another one is named."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def create_db_engine(url: str, *, pool_size: int = 10) -> Engine:
    """An engine for ``url``; a SQLite file's directory is created when missing."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database in ("", ":memory:"):  # one shared connection, or every one sees its own DB
            engine = create_engine(
                parsed, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        if not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            parsed,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        parsed,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 5},
    )


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def ping(engine: Engine) -> None:
    """Round-trip ``SELECT 1``; raises the driver's error when the database is unreachable."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


class Database:
    """An engine and its session factory; ``session()`` commits on success, rolls back on error."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        self.engine = create_db_engine(url, pool_size=pool_size)
        self._sessions = session_factory(self.engine)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def ping(self) -> None:
        ping(self.engine)

    def dispose(self) -> None:
        self.engine.dispose()
