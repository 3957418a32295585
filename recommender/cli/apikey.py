"""``recommender apikey create|list|revoke``: the keys the HTTP API accepts.

A key is printed once, at creation, and stored only as a SHA-256 digest: keep it safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from recommender.cli._app import app
from recommender.cli._output import Format, FormatOption, err, out, print_json, table
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit

if TYPE_CHECKING:  # the database stack loads when a command runs
    from recommender.store import ApiKeyInfo

__all__ = ["apikey_app", "create", "list_", "revoke"]

apikey_app = typer.Typer(
    help="Create, list and revoke API keys for the HTTP API.", no_args_is_help=True
)
app.add_typer(apikey_app, name="apikey")


def _public(info: ApiKeyInfo) -> dict[str, object]:
    return {
        "id": info.id,
        "name": info.name,
        "prefix": f"rk_{info.prefix}",
        "admin": info.admin,
        "created_at": info.created_at.isoformat(),
        "revoked_at": info.revoked_at.isoformat() if info.revoked_at else None,
    }


@apikey_app.command()
def create(
    name: Annotated[str, typer.Option("--name", help="Who or what uses the key.")],
    admin: Annotated[
        bool, typer.Option("--admin", help="May also call /v1/admin/* (catalog reload).")
    ] = False,
    fmt: FormatOption = Format.table,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Create a key and print it once (only its digest is stored)."""
    from recommender.store import create_key

    db = open_database(settings_or_exit(database_url=database_url))
    try:
        with db.session() as session:
            minted = create_key(session, name, admin=admin)
    except ValueError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    finally:
        db.dispose()
    if fmt is Format.json:
        print_json({**_public(minted.info), "key": minted.key})
        return
    typer.echo(minted.key)
    kind = "admin key" if admin else "key"
    err.print(
        f"Created {kind} {minted.info.name!r} (prefix rk_{minted.info.prefix}). It is shown "
        "only now: send it as `Authorization: Bearer <key>`.",
        highlight=False,
    )


@apikey_app.command("list")
def list_(fmt: FormatOption = Format.table, database_url: DatabaseUrlOption = None) -> None:
    """List keys (name, prefix, admin, dates); never the keys themselves."""
    from recommender.store import list_keys

    db = open_database(settings_or_exit(database_url=database_url))
    try:
        with db.session() as session:
            rows = [_public(k) for k in list_keys(session)]
    finally:
        db.dispose()
    if fmt is Format.json:
        print_json(rows)
        return
    columns = ["prefix", "name", "admin", "created", "revoked"]
    cells = [
        (
            r["prefix"],
            r["name"],
            "yes" if r["admin"] else "",
            r["created_at"],
            r["revoked_at"] or "",
        )
        for r in rows
    ]
    out.print(table(f"{len(rows)} API key(s)", columns, cells))


@apikey_app.command()
def revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (rk_xxxxxxxx) or the key.")],
    fmt: FormatOption = Format.table,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Revoke a key: requests carrying it get 401 from now on."""
    from recommender.store import revoke_key

    db = open_database(settings_or_exit(database_url=database_url))
    try:
        with db.session() as session:
            info = revoke_key(session, prefix)
    except LookupError as exc:
        err.print(f"[bold red]error:[/] {exc.args[0]}", highlight=False)
        raise typer.Exit(1) from exc
    finally:
        db.dispose()
    if fmt is Format.json:
        print_json(_public(info))
    else:
        err.print(f"Revoked rk_{info.prefix} ({info.name}).", highlight=False)
