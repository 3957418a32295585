"""``recommender db upgrade|downgrade|prune``: migrate the service's database, undo a
migration, apply the storage bounds."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from recommender.cli._app import app
from recommender.cli._output import Format, FormatOption, err, fail, print_json
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit

__all__ = ["db_app", "downgrade", "prune", "upgrade"]

db_app = typer.Typer(help="The service's database (SQLite or PostgreSQL).", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command()
def upgrade(fmt: FormatOption = Format.table, database_url: DatabaseUrlOption = None) -> None:
    """Apply every pending migration (the service also does this when it starts)."""
    from recommender.store import current_revision

    settings = settings_or_exit(database_url=database_url)
    db = open_database(settings)
    try:
        revision = current_revision(db.engine)
        url = db.engine.url.render_as_string(hide_password=True)
    finally:
        db.dispose()
    if fmt is Format.json:
        print_json({"database": url, "revision": revision})
    else:
        err.print(f"{url} is at revision {revision} (the latest).", highlight=False)


@db_app.command()
def downgrade(
    revision: Annotated[
        str, typer.Argument(help="Target revision: -1 (one step back), base (empty) or an id.")
    ] = "-1",
    fmt: FormatOption = Format.table,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Undo migrations (data held only by the undone ones is lost)."""
    from alembic.util import CommandError
    from sqlalchemy.exc import SQLAlchemyError

    from recommender.store import current_revision
    from recommender.store import downgrade as store_downgrade

    settings = settings_or_exit(database_url=database_url)
    db = open_database(settings, migrate=False)
    try:
        before = current_revision(db.engine)
        after = store_downgrade(db.engine, revision)
        url = db.engine.url.render_as_string(hide_password=True)
    except (CommandError, SQLAlchemyError) as exc:
        fail(f"cannot downgrade to {revision!r}: {str(exc).splitlines()[0]}", code=1)
    finally:
        db.dispose()
    if fmt is Format.json:
        print_json({"database": url, "from": before, "revision": after})
    else:
        err.print(f"{url}: revision {before} -> {after or 'base (empty)'}.", highlight=False)


@db_app.command()
def prune(fmt: FormatOption = Format.table, database_url: DatabaseUrlOption = None) -> None:
    """Delete what the storage bounds no longer keep (the service also does this every
    RECOMMENDER_PRUNE_INTERVAL_SECONDS): anonymous recommendations past their retention or
    over the anonymous bound, a key's over its quota, expired idempotency records."""
    from recommender.store import prune as store_prune

    settings = settings_or_exit(database_url=database_url)
    db = open_database(settings)
    try:
        with db.session() as session:
            report = store_prune(session, settings.retention_policy(), now=dt.datetime.now(dt.UTC))
    finally:
        db.dispose()
    counts = {
        "anonymous_expired": report.anonymous_expired,
        "anonymous_over_quota": report.anonymous_over_quota,
        "keyed_over_quota": report.keyed_over_quota,
        "idempotency_expired": report.idempotency_expired,
    }
    if fmt is Format.json:
        print_json({**counts, "total": report.total})
    else:
        listed = ", ".join(f"{n.replace('_', ' ')} {c}" for n, c in counts.items())
        err.print(f"Deleted {report.total} row(s): {listed}.", highlight=False)
