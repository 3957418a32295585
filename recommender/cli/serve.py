"""``recommender serve``: the HTTP API under uvicorn (settings from ``RECOMMENDER_*``).

The database is migrated once here, before any worker starts, so that several workers
never race to create tables; the workers then start with ``auto_migrate`` off.
"""

from __future__ import annotations

import asyncio
import copy
import os
import socket
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from uvicorn.protocols.http.h11_impl import H11Protocol

from recommender.cli._app import CatalogDirOption, app
from recommender.cli._output import err
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit
from recommender.settings import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["HTTP_PROTOCOL", "NoDelayH11Protocol", "log_config", "serve", "worker_app"]


def _nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with TCP_NODELAY on every connection.

    With ``--workers`` > 1 uvicorn binds the listening socket itself with ``proto`` 0, and
    asyncio only disables Nagle's algorithm on accepted sockets whose ``proto`` is TCP; each
    keep-alive response then waits ~40 ms for the client's delayed ACK
    (https://github.com/Kludex/uvicorn/issues/3149). Setting the option here fixes both paths.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _nodelay(transport)
        super().connection_made(transport)


try:  # the C parser, when installed (`pip install 'uvicorn[standard]'`)
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - depends on the environment
    HTTP_PROTOCOL: type[asyncio.Protocol] = NoDelayH11Protocol
else:

    class NoDelayHttpToolsProtocol(HttpToolsProtocol):
        """:class:`NoDelayH11Protocol`'s fix on uvicorn's httptools-based protocol."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            _nodelay(transport)
            super().connection_made(transport)

    HTTP_PROTOCOL = NoDelayHttpToolsProtocol


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


# The GIL is handed between threads every 5 ms by default: while a request thread computes a
# recommendation, the event loop waits that long to read the next request. 0.5 ms keeps the
# loop responsive (measured with benchmarks/load.py, 2 workers: p99 108 -> 76 ms, +16 % req/s).
GIL_SWITCH_INTERVAL_S = 0.0005


def tune_process() -> None:
    """Process settings for serving: a short GIL switch interval (see above)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


def worker_app() -> FastAPI:
    """What each worker process serves (``uvicorn --factory``): settings from the environment."""
    from recommender.api import create_app_from_env

    tune_process()
    return create_app_from_env()


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
    # RECOMMENDER_AUTO_MIGRATE=false: a separate `recommender db upgrade` (compose's one-shot
    # service, Kubernetes' init container) owns the schema; serving never changes it.
    open_database(settings, migrate=settings.auto_migrate).dispose()
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
        "http": HTTP_PROTOCOL,
    }
    if workers == 1:
        tune_process()
        uvicorn.run(create_app(settings.model_copy(update={"auto_migrate": False})), **common)
        return
    _export(settings)
    uvicorn.run("recommender.cli.serve:worker_app", factory=True, workers=workers, **common)
