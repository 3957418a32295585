"""``/v1/admin/reload``: load the catalog files now (admin API key)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from recommender.api import reload_signal
from recommender.api.deps import AdminKey, ServicesDep
from recommender.api.problems import CatalogProblem, ProblemError, problem_responses
from recommender.api.routers.catalog import status_of
from recommender.api.schemas import CatalogStatus

__all__ = ["router"]

router = APIRouter(tags=["admin"])


@router.post(
    "/v1/admin/reload",
    operation_id="reloadCatalog",
    summary="Reload the catalog files now; a broken catalog is refused and the old one kept",
    responses=problem_responses(401, 403, 422),
)
async def reload_catalog(key: AdminKey, services: ServicesDep) -> CatalogStatus:
    """Reloads this worker, then signals the other workers of the same `serve` to reload."""
    outcome = await run_in_threadpool(services.catalogs.reload)
    signal = reload_signal.signal_path(services.settings.runtime_dir)
    services.catalogs.announced = await run_in_threadpool(reload_signal.announce, signal)
    services.metrics.record_reload(outcome.loaded, services.catalogs.current)
    if not outcome.loaded:
        kept = (
            "the previous catalog keeps serving"
            if services.catalogs.current
            else ("no catalog is loaded")
        )
        errors = [p for p in outcome.problems if p.severity == "error"]
        raise ProblemError(
            422,
            "catalog-refused",
            f"The catalog files have {len(errors)} error(s); "
            f"{kept}. First: {errors[0] if errors else '?'}",
            title="Catalog refused",
            problems=[CatalogProblem.public(p) for p in outcome.problems],
        )
    return status_of(services)
