"""What the service commands share: settings from the environment and the command line,
and opening (and migrating) the database with a clear error when it is unreachable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from recommender.cli._output import fail

if TYPE_CHECKING:  # the settings, database and migration stacks load when a command runs
    from recommender.settings import Settings
    from recommender.store import Database

__all__ = ["DatabaseUrlOption", "open_database", "settings_or_exit"]

DatabaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="SQLAlchemy URL (default: $RECOMMENDER_DATABASE_URL, else "
        "sqlite:///.recommender/recommender.db).",
        show_default=False,
    ),
]


def settings_or_exit(**overrides: Any) -> Settings:
    """``Settings()`` from ``RECOMMENDER_*`` variables, with the options given on top."""
    from pydantic import ValidationError

    from recommender.settings import Settings

    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        fail(
            f"setting {field} (RECOMMENDER_{field.upper()}): {first['msg']}",
            hint="see the settings table in README.md, section HTTP API",
        )


def open_database(settings: Settings, *, migrate: bool = True) -> Database:
    """Open the database and bring its schema up to date, or exit 1 saying why."""
    from sqlalchemy.exc import SQLAlchemyError

    from recommender.store import Database, upgrade

    db = Database(settings.database_url, pool_size=1)
    if migrate:
        try:
            upgrade(db.engine)
        except (SQLAlchemyError, OSError) as exc:
            db.dispose()
            reason = str(exc).splitlines()[0]
            fail(
                f"cannot open the database {db.engine.url!r}: {reason}",
                code=1,
                hint="check RECOMMENDER_DATABASE_URL (PostgreSQL: is the server running?)",
            )
    return db
