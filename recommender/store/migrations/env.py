"""Alembic environment: runs the migrations on the connection the caller hands over.

:func:`recommender.store.migrate.upgrade` passes an open connection in
``config.attributes["connection"]``; the ``alembic`` command line (with a ``sqlalchemy.url``)
works too, for people who prefer it.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from recommender.store.database import create_db_engine
from recommender.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database: set sqlalchemy.url or pass a connection")
    engine = create_db_engine(url, pool_size=1)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
