"""``/v1/predictions``: time one workload on one accelerator x count (like ``predict``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from recommender.api.body import json_body, request_body_openapi
from recommender.api.deps import CatalogDep, ServicesDep
from recommender.api.errors import unknown_accelerator, unusable_request
from recommender.api.inputs import accelerator_field, load_profile
from recommender.api.offload import compute
from recommender.api.problems import problem_responses
from recommender.api.schemas import PredictionRequest
from recommender.catalog import UnknownAcceleratorError
from recommender.scoring import predict
from recommender.scoring.results import Prediction

__all__ = ["router"]

router = APIRouter(tags=["predictions"])


@router.post(
    "/v1/predictions",
    operation_id="createPrediction",
    summary="Predict throughput, step time and bottleneck on an accelerator (like `predict`)",
    responses=problem_responses(400, 413, 415, 422, 503),
    openapi_extra=request_body_openapi(PredictionRequest),
)
async def create_prediction(
    request: Request,
    body: Annotated[PredictionRequest, json_body(PredictionRequest)],
    catalog: CatalogDep,
    services: ServicesDep,
) -> Prediction:
    """Async: without a ``profile_id`` this never waits for the database."""
    profile = None
    if body.profile_id is not None:
        profile = await run_in_threadpool(load_profile, services, body.profile_id)
    workload = body.workload()
    try:
        result = await compute(
            request,
            predict,
            workload,
            body.accelerator,
            body.gpus,
            nodes=body.nodes,
            catalog=catalog,
            profile=profile,
        )
    except UnknownAcceleratorError as exc:
        field = "accelerator" if exc.name == body.accelerator else None
        raise unknown_accelerator(
            exc, field=field or accelerator_field(workload, exc.name)
        ) from exc
    except (ValueError, ArithmeticError) as exc:
        raise unusable_request(exc) from exc
    services.metrics.predictions.inc()
    return result
