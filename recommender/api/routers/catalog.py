"""``/v1/catalog/offers`` (the ``catalog list`` filters, paginated), ``/v1/catalog/status``
and ``/v1/accelerators``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from recommender.api.deps import CatalogDep, ServicesDep
from recommender.api.errors import unknown_accelerator
from recommender.api.offload import compute
from recommender.api.problems import CatalogProblem, FieldError, ProblemError, problem_responses
from recommender.api.schemas import CatalogStatus, OfferOut, OfferPage, QueryText, ReloadReport
from recommender.catalog import Accelerator, Catalog, UnknownAcceleratorError
from recommender.catalog.query import select_offers

__all__ = ["router", "status_of"]

router = APIRouter(tags=["catalog"])

Limit = Annotated[int, Query(ge=1, le=1000, description="Items per page.")]
# Values one list filter may repeat (there are 3 clouds, ~40 regions per cloud, ~30 GPUs).
MAX_FILTER_VALUES = 50
Offset = Annotated[int, Query(ge=0, le=10_000_000, description="Items to skip.")]
OFFER_FILTERS = frozenset(
    {
        "cloud",
        "region",
        "gpu",
        "gpus",
        "min_gpu_memory",
        "max_price",
        "spot",
        "purchase",
        "limit",
        "offset",
    }
)


def _refuse_unknown_parameters(request: Request) -> None:
    """A misspelt filter (``gpu_count=8``) is a 422 naming it, not silently ignored."""
    unknown = sorted(set(request.query_params) - OFFER_FILTERS)
    if not unknown:
        return
    known = ", ".join(sorted(OFFER_FILTERS))
    raise ProblemError(
        422,
        "unknown-parameter",
        f"unknown query parameter(s): {', '.join(unknown)} (known: {known})",
        title="Unknown query parameter",
        errors=[
            FieldError(
                location="query",
                field=name,
                message=f"unknown query parameter {name!r}; known: {known}",
                type="unknown",
            )
            for name in unknown
        ],
    )


@router.get(
    "/v1/catalog/offers",
    operation_id="listOffers",
    summary="Offers (instance x region x pricing) matching the filters, cheapest first",
    responses=problem_responses(422, 503),
)
async def list_offers(
    request: Request,
    catalog: CatalogDep,
    cloud: Annotated[
        list[Literal["aws", "gcp", "azure"]] | None, Query(max_length=MAX_FILTER_VALUES)
    ] = None,
    region: Annotated[
        list[QueryText] | None, Query(description="Region id.", max_length=MAX_FILTER_VALUES)
    ] = None,
    gpu: Annotated[
        list[QueryText] | None,
        Query(
            description="Accelerator, any spelling (e.g. A100-80GB).",
            max_length=MAX_FILTER_VALUES,
        ),
    ] = None,
    min_gpu_memory: Annotated[float | None, Query(ge=0, description="GB per GPU.")] = None,
    max_price: Annotated[float | None, Query(gt=0, description="USD per hour.")] = None,
    spot: Annotated[
        bool | None, Query(description="true: spot rows only; false: on-demand only.")
    ] = None,
    gpus: Annotated[
        int | None, Query(ge=1, le=10_000, description="Exactly this many GPUs per instance.")
    ] = None,
    purchase: Annotated[
        list[Literal["on-demand", "spot", "reservation"]] | None,
        Query(description="How the price is bought (repeatable; default all).", max_length=3),
    ] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> OfferPage:
    _refuse_unknown_parameters(request)
    query = _OfferQuery(cloud, region, gpu, min_gpu_memory, max_price, spot, gpus, purchase)
    return await compute(request, _offer_page, catalog, query, limit, offset)


@dataclass(frozen=True, slots=True)
class _OfferQuery:
    cloud: list[Literal["aws", "gcp", "azure"]] | None
    region: list[str] | None
    gpu: list[str] | None
    min_gpu_memory: float | None
    max_price: float | None
    spot: bool | None
    gpus: int | None
    purchase: list[Literal["on-demand", "spot", "reservation"]] | None


def _offer_page(catalog: Catalog, q: _OfferQuery, limit: int, offset: int) -> OfferPage:
    cloud, region, gpu = q.cloud, q.region, q.gpu
    min_gpu_memory, max_price, spot = q.min_gpu_memory, q.max_price, q.spot
    try:
        index = select_offers(
            catalog,
            clouds=cloud,
            regions=region,
            gpus=gpu,
            min_gpu_memory_gb=min_gpu_memory,
            max_price=max_price,
            spot=spot,
            gpu_count=q.gpus,
            purchase=q.purchase,
        )
    except UnknownAcceleratorError as exc:
        raise unknown_accelerator(exc, location="query", field="gpu") from exc
    total = len(index)
    page = catalog.offers.offers(index[offset : offset + limit])
    return OfferPage(
        items=[OfferOut(**o.as_dict()) for o in page],
        total=total,
        limit=limit,
        offset=offset,
        next_offset=offset + limit if offset + limit < total else None,
    )


@router.get(
    "/v1/accelerators",
    operation_id="listAccelerators",
    summary="Accelerator spec sheets (dense peak TFLOPS per precision, memory, links)",
    tags=["accelerators"],
    responses=problem_responses(503),
)
async def list_accelerators(catalog: CatalogDep) -> list[Accelerator]:
    return catalog.accelerators


def status_of(services: ServicesDep) -> CatalogStatus:
    state = services.catalogs
    current = state.current
    catalog = current.catalog if current else None
    age = state.age_seconds(time.time())
    max_age = services.settings.catalog_max_age_seconds
    last = state.last
    return CatalogStatus(
        directory=state.directory.name,
        loaded=current is not None,
        version=current.version if current else None,
        loaded_at=current.loaded_at if current else None,
        accelerators=len(catalog.accelerators) if catalog else 0,
        offers=len(catalog.offers) if catalog else 0,
        clouds=sorted(catalog.cloud_docs) if catalog else [],
        warnings=len(catalog.warnings) if catalog else 0,
        prices_as_of=current.prices_as_of if current else None,
        age_seconds=age,
        max_age_seconds=max_age,
        stale=bool(max_age is not None and age is not None and age > max_age),
        last_reload=ReloadReport(
            at=last.at,
            loaded=last.loaded,
            problems=[CatalogProblem.public(p) for p in last.problems],
        )
        if last
        else None,
    )


@router.get(
    "/v1/catalog/status",
    operation_id="catalogStatus",
    summary="The serving catalog, its age, and whether the files on disk were accepted",
)
async def catalog_status(services: ServicesDep) -> CatalogStatus:
    return status_of(services)
