"""``/v1/predictions``: time one workload on one accelerator x count (like ``predict``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from recommender.api.body import json_body, request_body_openapi
from recommender.api.deps import CatalogDep, ServicesDep
from recommender.api.errors import unknown_accelerator, unusable_request
from recommender.api.inputs import accelerator_field, load_profile
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
def create_prediction(
    body: Annotated[PredictionRequest, json_body(PredictionRequest)],
    catalog: CatalogDep,
    services: ServicesDep,
) -> Prediction:
    profile = load_profile(services, body.profile_id)
    workload = body.workload()
    try:
        result = predict(workload, body.accelerator, body.gpus, catalog=catalog, profile=profile)
    except UnknownAcceleratorError as exc:
        field = "accelerator" if exc.name == body.accelerator else None
        raise unknown_accelerator(
            exc, field=field or accelerator_field(workload, exc.name)
        ) from exc
    except (ValueError, ArithmeticError) as exc:
        raise unusable_request(exc) from exc
    services.metrics.predictions.inc()
    return result
