"""``/healthz`` (the process answers), ``/readyz`` (it can serve) and ``/metrics``.

These stay open without an API key: orchestrators and Prometheus call them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from recommender.api.deps import Services, ServicesDep
from recommender.api.problems import ProblemError, problem_responses
from recommender.api.schemas import Health, Readiness

__all__ = ["router"]

router = APIRouter(tags=["operations"])
log = logging.getLogger("recommender.api.health")


@router.get("/healthz", operation_id="health", summary="The process is alive")
async def healthz() -> Health:
    return Health()


def _catalog_check(services: Services) -> tuple[bool, dict[str, Any]]:
    state = services.catalogs
    max_age = services.settings.catalog_max_age_seconds
    age = state.age_seconds(time.time())
    check: dict[str, Any] = {
        "loaded": state.current is not None,
        "age_seconds": age,
        "max_age_seconds": max_age,
        "last_reload_refused": state.refused,
    }
    if state.current is None:
        check["reason"] = "no catalog loaded: the files were refused (GET /v1/catalog/status)"
        return False, check
    if max_age is not None and age is not None and age > max_age:
        check["reason"] = (
            f"the prices are {age / 86400:.0f} days old, over the "
            f"{max_age / 86400:g}-day limit (RECOMMENDER_CATALOG_MAX_AGE_DAYS): refresh them"
        )
        return False, check
    if state.refused:
        check["note"] = "the catalog files on disk were refused; the last good one is serving"
    return True, check


async def _database_check(services: Services) -> tuple[bool, dict[str, Any]]:
    """``SELECT 1`` within the readiness timeout. The reason names the error's kind only:
    driver messages carry host names and ports, which stay in the log."""
    started = time.perf_counter()
    limit_s = services.settings.readiness_db_timeout_seconds
    try:
        await asyncio.wait_for(run_in_threadpool(services.db.ping), timeout=limit_s)
    except TimeoutError:
        reason = f"database did not answer within {limit_s:g} s"
        return False, {"backend": services.db.backend, "reason": reason}
    except (SQLAlchemyError, OSError) as exc:
        log.warning("readiness: database check failed: %s", exc)
        reason = f"database unreachable ({type(exc).__name__}; the service log has the cause)"
        return False, {"backend": services.db.backend, "reason": reason}
    ms = (time.perf_counter() - started) * 1000
    return True, {"backend": services.db.backend, "ping_ms": round(ms, 3)}


@router.get(
    "/readyz",
    operation_id="readiness",
    summary="The service can answer: catalog loaded and fresh, database reachable",
    responses=problem_responses(503),
)
async def readyz(services: ServicesDep) -> Readiness:
    catalog_ok, catalog = _catalog_check(services)
    db_ok, database = await _database_check(services)
    checks = {"catalog": catalog, "database": database}
    if catalog_ok and db_ok:
        return Readiness(checks=checks)
    reasons = [c["reason"] for ok, c in ((catalog_ok, catalog), (db_ok, database)) if not ok]
    raise ProblemError(
        503, "not-ready", "Not ready: " + "; ".join(reasons), title="Not Ready", checks=checks
    )


@router.get(
    "/metrics",
    operation_id="metrics",
    summary="Prometheus metrics (text exposition format)",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
)
async def metrics(services: ServicesDep) -> Response:
    return Response(services.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
