"""``/v1/profiles``: probe uploads (API key required), one profile, and filtered lists."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from sqlalchemy.exc import IntegrityError

from recommender.api.body import json_body, request_body_openapi
from recommender.api.deps import ApiKey, ServicesDep
from recommender.api.errors import not_found
from recommender.api.idempotency import IdempotencyKeyHeader, idempotent
from recommender.api.problems import problem_responses
from recommender.api.schemas import (
    ProfilePage,
    ProfileSummary,
    ProfileUpload,
    QueryText,
    StoredProfile,
)
from recommender.profile import Profile
from recommender.store import ProfileFilter, ProfileRow, add_profile, get_profile, list_profiles

__all__ = ["router", "summary_of"]

router = APIRouter(tags=["profiles"])


def summary_of(row: ProfileRow) -> ProfileSummary:
    return ProfileSummary(
        id=row.id,
        received_at=row.received_at,
        measured_at=row.measured_at,
        hostname=row.hostname,
        cloud=row.cloud,
        instance_type=row.instance_type,
        accelerator=row.accelerator,
        workload=row.workload_name,
        bound=row.bound,
    )


@router.post(
    "/v1/profiles",
    operation_id="uploadProfile",
    summary="Store a probe profile (`recommender probe --post-to`)",
    status_code=201,
    response_model=ProfileSummary,
    responses=problem_responses(400, 401, 413, 415, 422),
    openapi_extra=request_body_openapi(ProfileUpload),
)
def upload_profile(
    key: ApiKey,  # before the body: no key, no parsing
    upload: Annotated[ProfileUpload, json_body(ProfileUpload)],
    services: ServicesDep,
    request: Request,
    response: Response,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ProfileSummary | Response:
    document = upload.model_dump(mode="json", exclude_unset=True)
    once = idempotent(request, idempotency_key, key, document)
    replay = once.replay(services) if once else None
    if replay is not None:
        return replay
    profile = Profile.model_validate(upload.model_dump(exclude_unset=True))
    try:
        with services.db.session() as session:
            row = add_profile(session, profile, api_key_id=key.id)
            summary = summary_of(row)
            location = f"/v1/profiles/{summary.id}"
            if once is not None:
                once.save(session, 201, location, summary.model_dump(mode="json"))
    except IntegrityError as exc:
        if once is None:
            raise
        return once.after_race(services, exc)
    services.metrics.profiles.inc()
    response.headers["Location"] = location
    return summary


@router.get(
    "/v1/profiles/{profile_id}",
    operation_id="getProfile",
    summary="One stored profile, with the document as uploaded",
    responses=problem_responses(404, 422),
)
def read_profile(profile_id: uuid.UUID, services: ServicesDep) -> StoredProfile:
    with services.db.session() as session:
        row = get_profile(session, profile_id)
        if row is None:
            raise not_found("profile", profile_id, hint="GET /v1/profiles lists them.")
        summary = summary_of(row)
        document = row.document
    return StoredProfile(**summary.model_dump(), profile=Profile.model_validate(document))


@router.get(
    "/v1/profiles",
    operation_id="listProfiles",
    summary="Stored profiles, newest first, filtered by machine, accelerator or workload",
    responses=problem_responses(422),
)
def find_profiles(
    services: ServicesDep,
    machine: Annotated[
        QueryText | None, Query(description="Hostname or instance type (exact, any case).")
    ] = None,
    accelerator: Annotated[
        QueryText | None, Query(description="Accelerator, any spelling (e.g. A100-80GB).")
    ] = None,
    workload: Annotated[QueryText | None, Query(description="Workload name (any case).")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> ProfilePage:
    where = ProfileFilter(
        machine=machine,
        accelerators=_spellings(services, accelerator) if accelerator else None,
        workload=workload,
    )
    with services.db.session() as session:
        rows, total = list_profiles(session, where, limit=limit, offset=offset)
        items = [summary_of(r) for r in rows]
    return ProfilePage(
        items=items,
        total=total,
        limit=limit,
        offset=offset,
        next_offset=offset + limit if offset + limit < total else None,
    )


def _spellings(services: ServicesDep, name: str) -> list[str]:
    """The name as given plus the canonical ids it resolves to (profiles store the id)."""
    catalog = services.catalogs.catalog
    found = catalog.names.resolve_all(name, strict=False) if catalog else ()
    return [name, *(a.id for a in found)]
