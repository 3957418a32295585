"""``recommender db upgrade``: create or migrate the service's database."""

from __future__ import annotations

import typer

from recommender.cli._app import app
from recommender.cli._output import Format, FormatOption, err, print_json
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit

__all__ = ["db_app", "upgrade"]

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
