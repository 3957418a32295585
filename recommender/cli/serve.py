"""``recommender serve``: the HTTP API under uvicorn (settings from ``RECOMMENDER_*``).

The database is migrated once here, before any worker starts, so that several workers
never race to create tables; the workers then start with ``auto_migrate`` off.
"""

from __future__ import annotations

import asyncio
import copy
import os
import socket
from typing import Annotated, Any

import typer
from uvicorn.protocols.http.h11_impl import H11Protocol

from recommender.cli._app import CatalogDirOption, app
from recommender.cli._output import err
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit
from recommender.settings import Settings

__all__ = ["NoDelayH11Protocol", "log_config", "serve"]


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with TCP_NODELAY on every connection.

    With ``--workers`` > 1 uvicorn binds the listening socket itself with ``proto`` 0, and
    asyncio only disables Nagle's algorithm on accepted sockets whose ``proto`` is TCP; each
    keep-alive response then waits ~40 ms for the client's delayed ACK
    (https://github.com/Kludex/uvicorn/issues/3149). Setting the option here fixes both paths.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging setup plus the service's own ``recommender`` loggers."""
    import uvicorn.config

    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["loggers"]["recommender"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    return config


def _export(settings: Settings) -> None:
    """Hand the settings to worker processes (they read the environment)."""
    os.environ["RECOMMENDER_DATABASE_URL"] = settings.database_url
    os.environ["RECOMMENDER_AUTO_MIGRATE"] = "false"
    if settings.catalog_dir is not None:
        os.environ["RECOMMENDER_CATALOG_DIR"] = str(settings.catalog_dir)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, max=64, help="Worker processes (each one a full app).")
    ] = 1,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log every request line.")
    ] = True,
    database_url: DatabaseUrlOption = None,
    catalog_dir: CatalogDirOption = None,
) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs)."""
    import uvicorn

    from recommender.api import create_app

    settings = settings_or_exit(database_url=database_url, catalog_dir=catalog_dir)
    open_database(settings).dispose()
    err.print(
        f"Serving on http://{host}:{port} (docs at /docs), database "
        f"{settings.database_url.split('://', 1)[0]}, catalog {settings.resolved_catalog_dir}",
        highlight=False,
    )
    common: dict[str, Any] = {
        "host": host,
        "port": port,
        "access_log": access_log,
        "log_config": log_config(settings.log_level),
        "log_level": settings.log_level,
        "http": NoDelayH11Protocol,
    }
    if workers == 1:
        uvicorn.run(create_app(settings.model_copy(update={"auto_migrate": False})), **common)
        return
    _export(settings)
    uvicorn.run("recommender.api.app:create_app_from_env", factory=True, workers=workers, **common)
