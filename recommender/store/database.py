"""Opening the database: one engine per app, SQLite tuned for a small server, PostgreSQL as given.

SQLite files get WAL mode (readers never wait for the writer), ``synchronous=NORMAL`` (safe
with WAL, one fsync per checkpoint instead of per commit), a busy timeout so concurrent
writers queue briefly instead of failing, and enforced foreign keys. A ``postgresql://`` URL
without a driver is read as psycopg 3, the driver the ``postgres`` extra installs.

Nothing waits for the database without a bound (:class:`DbTimeouts`): a free pooled
connection, a lock (PostgreSQL ``lock_timeout``, SQLite ``busy_timeout``), a statement
(``statement_timeout``), a connection attempt, and a silent peer (TCP keep-alives and
``tcp_user_timeout``). Past a bound the driver raises, and the API answers 503.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

__all__ = [
    "Database",
    "DbTimeouts",
    "create_db_engine",
    "normalize_url",
    "ping",
    "session_factory",
]

# The default wait for a SQLite write lock (a command-line tool; the service sets its own).
SQLITE_BUSY_TIMEOUT_MS = 10_000
# A PostgreSQL server that does not answer a connection attempt in this long is down.
PG_CONNECT_TIMEOUT_S = 3
# TCP keep-alive probes after this much silence, every interval, this many times (libpq
# keepalives_* parameters), and unacknowledged data for this long closes the connection
# (libpq tcp_user_timeout, ms): a vanished server is noticed in ~20 s, not hours.
PG_KEEPALIVES_IDLE_S = 10
PG_KEEPALIVES_INTERVAL_S = 5
PG_KEEPALIVES_COUNT = 2
PG_TCP_USER_TIMEOUT_MS = 20_000


@dataclass(frozen=True, slots=True)
class DbTimeouts:
    """How long anything may wait for the database (0 ms statement timeout: none)."""

    pool_timeout_s: float = 30.0
    lock_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS
    statement_timeout_ms: int = 0


def normalize_url(url: str) -> URL:
    """The URL with psycopg 3 as the PostgreSQL driver unless another one is named."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _sqlite_pragmas(busy_timeout_ms: int, dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _sqlite_engine(parsed: URL, pool_size: int, timeouts: DbTimeouts) -> Engine:
    database = parsed.database or ""
    if database in ("", ":memory:"):  # one shared connection, or every one sees its own DB
        engine = create_engine(
            parsed, poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        if not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            parsed,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_timeout=timeouts.pool_timeout_s,
            connect_args={
                "check_same_thread": False,
                "timeout": timeouts.lock_timeout_ms / 1000,
            },
        )
    event.listen(engine, "connect", partial(_sqlite_pragmas, timeouts.lock_timeout_ms))
    return engine


def _pg_options(parsed: URL, timeouts: DbTimeouts) -> str:
    """Server settings for every session (libpq ``options``), after those the URL gives."""
    given = parsed.query.get("options", "")
    options = [given] if isinstance(given, str) and given else list(given)
    options.append(f"-c lock_timeout={timeouts.lock_timeout_ms}")
    if timeouts.statement_timeout_ms:
        options.append(f"-c statement_timeout={timeouts.statement_timeout_ms}")
    return " ".join(options)


def create_db_engine(
    url: str, *, pool_size: int = 10, timeouts: DbTimeouts | None = None
) -> Engine:
    """An engine for ``url``; a SQLite file's directory is created when missing."""
    parsed = normalize_url(url)
    timeouts = timeouts or DbTimeouts()
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed, pool_size, timeouts)
    return create_engine(
        parsed,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        pool_timeout=timeouts.pool_timeout_s,
        connect_args={
            "connect_timeout": PG_CONNECT_TIMEOUT_S,
            "options": _pg_options(parsed, timeouts),
            "keepalives": 1,
            "keepalives_idle": PG_KEEPALIVES_IDLE_S,
            "keepalives_interval": PG_KEEPALIVES_INTERVAL_S,
            "keepalives_count": PG_KEEPALIVES_COUNT,
            "tcp_user_timeout": PG_TCP_USER_TIMEOUT_MS,
        },
    )


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def ping(engine: Engine) -> None:
    """Round-trip ``SELECT 1``; raises the driver's error when the database is unreachable."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


class Database:
    """An engine and its session factory; ``session()`` commits on success, rolls back on error."""

    def __init__(
        self, url: str, *, pool_size: int = 10, timeouts: DbTimeouts | None = None
    ) -> None:
        self.engine = create_db_engine(url, pool_size=pool_size, timeouts=timeouts)
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
