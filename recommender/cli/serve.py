"""``recommender serve``: the HTTP API under uvicorn (settings from ``RECOMMENDER_*``).

The database is migrated once here, before any worker starts; the workers then start with
``auto_migrate`` off. With ``--workers`` > 1 each worker binds its own ``SO_REUSEPORT``
socket (see :mod:`recommender.cli._server`) and the workers share a runtime directory:
Prometheus multiprocess metrics and catalog reload signals live there.
"""

from __future__ import annotations

import copy
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from recommender.cli._app import CatalogDirOption, app
from recommender.cli._output import err
from recommender.cli._service import DatabaseUrlOption, open_database, settings_or_exit

if TYPE_CHECKING:
    from fastapi import FastAPI

    from recommender.settings import Settings

__all__ = [  # noqa: F822 (HTTP_PROTOCOL and NoDelayH11Protocol come from __getattr__)
    "HTTP_PROTOCOL",
    "NoDelayH11Protocol",
    "RedactKeysFilter",
    "log_config",
    "serve",
    "worker_app",
]


def __getattr__(name: str) -> Any:
    """uvicorn's protocol classes, imported only when asked for (uvicorn is slow to load, and
    ``recommender --help`` must not pay for it). ``NoDelayH11Protocol`` is the name earlier
    versions exported for what is now the guarded protocol."""
    if name in ("HTTP_PROTOCOL", "GuardedH11Protocol", "NoDelayH11Protocol"):
        from recommender.cli import _server

        return (
            _server.GuardedH11Protocol if name == "NoDelayH11Protocol" else getattr(_server, name)
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Open files a worker may hold: its connection limit plus the database, logs and catalog.
SPARE_FILES = 256


class RedactKeysFilter(logging.Filter):
    """Replaces credentials in a logged request line (``?api_key=...``) by ``REDACTED``."""

    def filter(self, record: logging.LogRecord) -> bool:
        from recommender.api.keys_in_query import redact_query

        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_query(a) if isinstance(a, str) and "=" in a else a for a in record.args
            )
        return True


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging setup plus the service's own ``recommender`` loggers."""
    import uvicorn.config

    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_keys"] = {"()": RedactKeysFilter}
    config["handlers"]["access"]["filters"] = ["redact_keys"]
    # Which worker answered (its pid): with several workers, how the load spreads.
    config["formatters"]["access"]["fmt"] = (
        '%(levelprefix)s [%(process)d] %(client_addr)s - "%(request_line)s" %(status_code)s'
    )
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


def tune_process(settings: Settings | None = None) -> None:
    """Process settings for serving: a short GIL switch interval (see above), the connection
    rules, and an open-file limit that admits them."""
    from recommender.cli._server import ConnectionLimits, GuardedH11Protocol, raise_open_file_limit

    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    if settings is not None:
        limits = ConnectionLimits(
            header_timeout_s=settings.server_header_timeout_seconds,
            max_connections=settings.server_max_connections,
        )
        GuardedH11Protocol.configure(limits)
        raise_open_file_limit(settings.server_max_connections + SPARE_FILES)


def worker_app() -> FastAPI:
    """What each worker process serves (``uvicorn --factory``): settings from the environment."""
    from recommender.api import create_app
    from recommender.settings import Settings

    settings = Settings()
    tune_process(settings)
    return create_app(settings)


def _export(settings: Settings, runtime: Path) -> None:
    """Hand the settings to worker processes (they read the environment)."""
    os.environ["RECOMMENDER_DATABASE_URL"] = settings.database_url
    os.environ["RECOMMENDER_AUTO_MIGRATE"] = "false"
    os.environ["RECOMMENDER_RUNTIME_DIR"] = str(runtime)
    metrics = runtime / "metrics"
    metrics.mkdir()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
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
    from recommender.cli._server import HTTP_PROTOCOL, Supervisor

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
        "access_log": access_log,
        "log_config": log_config(settings.log_level),
        "log_level": settings.log_level,
        "http": HTTP_PROTOCOL,
        "timeout_keep_alive": settings.server_keepalive_seconds,
        "backlog": 2048,
    }
    if workers == 1:
        tune_process(settings)
        served = create_app(settings.model_copy(update={"auto_migrate": False}))
        uvicorn.run(served, host=host, port=port, **common)
        return
    runtime = Path(tempfile.mkdtemp(prefix="recommender-serve-"))
    try:
        _export(settings, runtime)
        Supervisor(workers, host, port, common).run()
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
