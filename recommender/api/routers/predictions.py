"""``/v1/predictions``: time one workload on one accelerator x count (like ``predict``)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter

from recommender.api.body import json_body, request_body_openapi
from recommender.api.deps import CatalogDep, ServicesDep
from recommender.api.errors import unknown_accelerator, unusable_request
from recommender.api.problems import FieldError, ProblemError, problem_responses
from recommender.api.schemas import PredictionRequest
from recommender.catalog import UnknownAcceleratorError
from recommender.profile import Profile
from recommender.scoring import predict
from recommender.scoring.results import Prediction
from recommender.store import get_profile
from recommender.workload import Workload

__all__ = ["accelerator_field", "load_profile", "router"]

router = APIRouter(tags=["predictions"])


def load_profile(services: ServicesDep, profile_id: uuid.UUID | None) -> Profile | None:
    """The stored profile a request refers to; 422 naming ``profile_id`` when there is none."""
    if profile_id is None:
        return None
    with services.db.session() as session:
        row = get_profile(session, profile_id)
        document = row.document if row else None
    if document is None:
        raise ProblemError(
            422,
            "unknown-profile",
            f"profile_id: no stored profile {profile_id} (GET /v1/profiles lists them)",
            title="Unknown profile",
            errors=[
                FieldError(
                    location="body",
                    field="profile_id",
                    message=f"no stored profile {profile_id}",
                    type="unknown",
                )
            ],
        )
    return Profile.model_validate(document)


def accelerator_field(workload: Workload, name: str, default: str = "(workload)") -> str:
    """Which field of the request named the unknown accelerator ``name``."""
    if workload.baseline is not None and workload.baseline.accelerator == name:
        return "baseline.accelerator"
    for i, acc in enumerate(workload.constraints.accelerators or ()):
        if acc == name:
            return f"constraints.accelerators[{i}]"
    return default


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
