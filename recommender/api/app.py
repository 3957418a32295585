"""The app factory: ``create_app(settings)`` builds a self-contained FastAPI application.

Each app owns its database engine, catalog state and metrics registry (nothing is global),
so tests can run several side by side. Startup applies the database migrations (unless
``auto_migrate`` is off), loads the catalog and starts the catalog poller; shutdown stops
the poller and closes the database pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Depends, FastAPI, Request, Response
from fastapi.openapi.utils import get_openapi
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.concurrency import run_in_threadpool

from recommender import __version__
from recommender.api import reload_signal
from recommender.api.body import bounded_body_schemas, request_body_schemas
from recommender.api.catalog_state import CatalogState, ReloadOutcome
from recommender.api.deps import Services, require_key
from recommender.api.http_basics import (
    HeadAsGetMiddleware,
    SecurityHeadersMiddleware,
    install_docs,
)
from recommender.api.keys_in_query import KeysInQueryMiddleware
from recommender.api.limits import BodyLimitMiddleware
from recommender.api.metrics import Metrics, MetricsMiddleware
from recommender.api.offload import install_cpu_lock
from recommender.api.problems import (
    PROBLEM_MEDIA_TYPE,
    ProblemError,
    install_problem_handlers,
    problem_response,
    problem_responses,
)
from recommender.api.ratelimit import RateLimitMiddleware
from recommender.api.routers import (
    admin,
    catalog,
    health,
    predictions,
    profiles,
    recommendations,
)
from recommender.api.schemas import BODY_MODELS
from recommender.api.web import install as install_web
from recommender.settings import Settings
from recommender.store import Database, prune, upgrade

__all__ = ["create_app", "create_app_from_env"]

log = logging.getLogger("recommender.api")

DESCRIPTION = """\
Which cloud GPU instance (or edge device) should an ML workload run on? `POST` a workload
to `/v1/recommendations` for ranked picks with predicted time, cost and the reason.

Errors are RFC 9457 `application/problem+json`. Writes (`POST /v1/profiles`) need an API key
(`Authorization: Bearer <key>`, from `recommender apikey create`); admin routes an admin key.
"""


def _record(services: Services, outcome: ReloadOutcome) -> None:
    services.metrics.record_reload(outcome.loaded, services.catalogs.current)


async def _poll_catalog(services: Services, interval: float) -> None:
    """Reload the catalog whenever its files change; never dies on an error."""
    while True:
        await asyncio.sleep(interval)
        try:
            outcome = await run_in_threadpool(services.catalogs.reload_if_changed)
        except Exception:  # a bug here must not stop future reloads
            log.exception("catalog poll failed")
            continue
        if outcome is not None:
            _record(services, outcome)


def _prune_now(services: Services) -> None:
    with services.db.session() as session:
        report = prune(session, services.settings.retention_policy(), now=dt.datetime.now(dt.UTC))
    if report.total:
        log.info("pruned stored answers: %s", report)


async def _prune_periodically(services: Services, interval: float) -> None:
    """Apply the storage bounds every ``interval`` seconds; never dies on an error."""
    while True:
        await asyncio.sleep(interval)
        try:
            await run_in_threadpool(_prune_now, services)
        except Exception:  # a busy database now must not stop later prunes
            log.exception("pruning stored answers failed")


def _reload_and_record(services: Services) -> None:
    _record(services, services.catalogs.reload())


def _lifespan(services: Services) -> Any:
    settings = services.settings

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.auto_migrate:
            await run_in_threadpool(upgrade, services.db.engine)
        _record(services, await run_in_threadpool(services.catalogs.reload))
        tasks = []
        if settings.catalog_poll_seconds > 0:
            tasks.append(
                asyncio.create_task(_poll_catalog(services, settings.catalog_poll_seconds))
            )
        if settings.prune_interval_seconds > 0:
            tasks.append(
                asyncio.create_task(_prune_periodically(services, settings.prune_interval_seconds))
            )
        signal = reload_signal.signal_path(settings.runtime_dir)
        if signal is not None:
            follower = reload_signal.follow(
                signal,
                lambda: _reload_and_record(services),
                own=lambda: services.catalogs.announced or "",
            )
            tasks.append(asyncio.create_task(follower))
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            services.db.dispose()

    return lifespan


# The largest valid recommendation or prediction body is ~11 KB of characters (64 regions of
# 64, 64 accelerators of 100, a 200-character name: recommender.workload's bounds), ~70 KB if
# every character is sent as a \uXXXX escape; past this a body is refused before it is read.
WORKLOAD_BODY_BYTES = 131_072
WORKLOAD_PATHS = ("/v1/recommendations", "/v1/predictions")

# Seconds a client should wait after a 503 for a busy or unreachable database: longer than
# the default lock timeout, short enough that a retry lands soon after a blip.
DATABASE_RETRY_AFTER_S = 2


async def _database_unavailable(request: Request, exc: Exception) -> Response:
    log.error("database error on %s %s: %s", request.method, request.url.path, exc)
    problem = ProblemError(
        503,
        "database-unavailable",
        "The database is unreachable or busy; retry shortly (GET /readyz says why).",
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
    )
    return problem_response(request, problem)


def _query_params_never_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional query parameter is absent, never ``null`` (a query string cannot say null):
    ``anyOf: [X, null]`` becomes ``X``, so clients and fuzzers see the real type."""
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for param in operation.get("parameters", []):
                inner = param.get("schema", {})
                options = inner.get("anyOf")
                if param.get("in") != "query" or not options:
                    continue
                kept = [o for o in options if o.get("type") != "null"]
                if len(kept) == 1 and len(kept) < len(options):
                    rest = {k: v for k, v in inner.items() if k != "anyOf"}
                    param["schema"] = {**kept[0], **rest}
    return schema


def _problem_media_types(schema: dict[str, Any]) -> dict[str, Any]:
    """Declare every 4xx/5xx response as ``application/problem+json``."""
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                content = response.get("content")
                if status[0] in "45" and content and "application/json" in content:
                    content[PROBLEM_MEDIA_TYPE] = content.pop("application/json")
    return schema


def _add_body_schemas(schema: dict[str, Any]) -> None:
    """The request bodies parsed by :func:`~recommender.api.body.json_body` (FastAPI does not
    see them), with the shape bounds the parser enforces; a name FastAPI already uses must
    describe the same schema (it then gets the bounds too: responses hold what was accepted)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    bounded = bounded_body_schemas(list(BODY_MODELS))
    for name, body_schema in request_body_schemas(list(BODY_MODELS)).items():
        known = components.get(name)
        if known is not None and _sans_defaults(known) != _sans_defaults(body_schema):
            raise RuntimeError(f"OpenAPI component {name!r} differs between request and response")
        components[name] = bounded[name]


def _sans_defaults(node: Any) -> Any:
    """``node`` without ``default`` keys (FastAPI drops ``default: null``; pydantic keeps it)."""
    if isinstance(node, dict):
        return {k: _sans_defaults(v) for k, v in node.items() if k != "default"}
    if isinstance(node, list):
        return [_sans_defaults(v) for v in node]
    return node


def _install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
                separate_input_output_schemas=False,
            )
            _query_params_never_null(schema)
            _problem_media_types(schema)
            _add_body_schemas(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(settings: Settings) -> FastAPI:
    """A ready-to-serve application configured by ``settings``."""
    services = Services(
        settings=settings,
        db=Database(
            settings.database_url, pool_size=settings.db_pool_size, timeouts=settings.db_timeouts()
        ),
        catalogs=CatalogState(
            settings.resolved_catalog_dir,
            require_manifest=settings.catalog_require_manifest,
            max_offer_drop=settings.catalog_max_offer_drop,
        ),
        metrics=Metrics(),
    )
    services.metrics.watch_catalog_age(services.catalogs.age_seconds)
    app = FastAPI(
        title="instance-recommender",
        version=__version__,
        description=DESCRIPTION,
        lifespan=_lifespan(services),
        docs_url=None,  # served from local files by install_docs
        redoc_url=None,
    )
    app.state.services = services
    install_cpu_lock(app)
    install_docs(app)
    install_problem_handlers(app)
    app.add_exception_handler(OperationalError, _database_unavailable)
    app.add_exception_handler(PoolTimeoutError, _database_unavailable)
    app.include_router(health.router)
    v1: dict[str, Any] = {"responses": problem_responses(429, 503)}
    if settings.require_key_for_reads:
        v1 = {
            "dependencies": [Depends(require_key)],
            "responses": problem_responses(401, 429, 503),
        }
    for module in (recommendations, predictions, catalog, profiles, admin):
        app.include_router(module.router, **v1)
    install_web(app)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        timeout_s=settings.server_body_timeout_seconds,
        max_buffered_bytes=settings.max_buffered_body_bytes,
        per_path={
            path: min(WORKLOAD_BODY_BYTES, settings.max_body_bytes) for path in WORKLOAD_PATHS
        },
    )
    app.add_middleware(RateLimitMiddleware, settings=settings)
    app.add_middleware(KeysInQueryMiddleware)
    app.add_middleware(MetricsMiddleware, metrics=services.metrics)
    app.add_middleware(HeadAsGetMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    _install_openapi(app)
    return app


def create_app_from_env() -> FastAPI:
    """``create_app(Settings())``: the factory ``uvicorn --factory`` and workers call."""
    return create_app(Settings())
