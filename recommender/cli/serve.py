"""``recommender serve``: the HTTP API under uvicorn (settings from ``RECOMMENDER_*``).

The database is migrated once here, before any worker starts, so that several workers
never race to create tables; the workers then start with ``auto_migrate`` off.
"""

from __future__ import annotations

import copy
import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from recommender.cli._app import CatalogDirOption, app
from recommender.cli._output import err
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit

if TYPE_CHECKING:
    from fastapi import FastAPI

    from recommender.cli._nodelay import HTTP_PROTOCOL, NoDelayH11Protocol
    from recommender.settings import Settings

__all__ = ["HTTP_PROTOCOL", "NoDelayH11Protocol", "log_config", "serve", "worker_app"]


def __getattr__(name: str) -> Any:
    """The uvicorn protocol classes, imported only when asked for (uvicorn is slow to load)."""
    if name in ("HTTP_PROTOCOL", "NoDelayH11Protocol"):
        from recommender.cli import _nodelay

        return getattr(_nodelay, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    from recommender.cli._nodelay import HTTP_PROTOCOL

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
