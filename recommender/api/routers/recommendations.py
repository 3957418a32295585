"""``/v1/recommendations``: rank every offer for a workload, store the answer, share its link."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from sqlalchemy.exc import IntegrityError

from recommender.api.body import json_body, request_body_openapi
from recommender.api.deps import CATALOG_VERSION_HEADER, CatalogDep, OptionalKey, ServicesDep
from recommender.api.errors import not_found, unknown_accelerator, unusable_request
from recommender.api.idempotency import IdempotencyKeyHeader, idempotent
from recommender.api.inputs import accelerator_field, load_profile
from recommender.api.offload import cpu_bound
from recommender.api.problems import problem_responses
from recommender.api.schemas import RecommendationRequest, StoredRecommendation
from recommender.catalog import UnknownAcceleratorError
from recommender.scoring import recommend
from recommender.store import RecommendationRow, add_recommendation, get_recommendation

__all__ = ["router"]

router = APIRouter(tags=["recommendations"])


def _stored(row: RecommendationRow) -> StoredRecommendation:
    return StoredRecommendation.model_validate(
        {
            **row.result,
            "id": row.id,
            "created_at": row.created_at,
            "profile_id": row.profile_id,
            "request": row.request,
        }
    )


@router.post(
    "/v1/recommendations",
    operation_id="createRecommendation",
    summary="Rank offers for a workload (like `recommender recommend`) and store the answer",
    description="No API key is needed; one sent (`Authorization: Bearer` or `X-API-Key`) must "
    "be valid, and the answer is then kept under that key's quota instead of the anonymous "
    "retention period.",
    status_code=201,
    response_model=StoredRecommendation,
    responses=problem_responses(400, 401, 413, 415, 422, 503),
    openapi_extra=request_body_openapi(RecommendationRequest),
)
def create_recommendation(
    body: Annotated[RecommendationRequest, json_body(RecommendationRequest)],
    catalog: CatalogDep,
    services: ServicesDep,
    request: Request,
    response: Response,
    key: OptionalKey,
    idempotency_key: IdempotencyKeyHeader = None,
) -> StoredRecommendation | Response:
    asked: dict[str, Any] = body.as_sent()
    once = idempotent(request, idempotency_key, key, asked)
    replay = once.replay(services) if once else None
    if replay is not None:
        return replay
    profile = load_profile(services, body.profile_id)
    workload = body.workload()
    try:
        with cpu_bound(request):
            rec = recommend(
                workload,
                catalog=catalog,
                objective=body.objective,
                top=body.top,
                profile=profile,
                landscape=body.landscape,
            )
            result = rec.model_dump(mode="json")
        result["catalog_version"] = response.headers.get(CATALOG_VERSION_HEADER)
    except UnknownAcceleratorError as exc:
        raise unknown_accelerator(exc, field=accelerator_field(workload, exc.name)) from exc
    except (ValueError, ArithmeticError) as exc:
        raise unusable_request(exc) from exc
    try:
        with services.db.session() as session:
            row = add_recommendation(
                session,
                request=asked,
                result=result,
                workload_name=workload.name,
                objective=body.objective,
                profile_id=body.profile_id,
                api_key_id=key.id if key else None,
            )
            stored = StoredRecommendation(
                **dict(rec),
                id=row.id,
                created_at=row.created_at,
                profile_id=row.profile_id,
                request=asked,
                catalog_version=response.headers.get(CATALOG_VERSION_HEADER),
            )
            location = f"/v1/recommendations/{stored.id}"
            if once is not None:
                once.save(session, 201, location, stored.model_dump(mode="json"))
    except IntegrityError as exc:
        if once is None:
            raise
        return once.after_race(services, exc)
    services.metrics.recommendations.labels(body.objective).inc()
    response.headers["Location"] = location
    return stored


@router.get(
    "/v1/recommendations/{recommendation_id}",
    operation_id="getRecommendation",
    summary="A stored recommendation (the link to share)",
    responses=problem_responses(404, 422),
)
def read_recommendation(
    recommendation_id: uuid.UUID, services: ServicesDep
) -> StoredRecommendation:
    with services.db.session() as session:
        row = get_recommendation(session, recommendation_id)
        if row is None:
            raise not_found("recommendation", recommendation_id)
        return _stored(row)
