"""Request and response bodies of the HTTP API (the JSON the OpenAPI document describes).

Requests reuse the public contracts: a recommendation or prediction request *is* a
:class:`~recommender.workload.Workload` with a few more fields, and a profile upload *is* a
:class:`~recommender.profile.Profile` (bodies are parsed by :mod:`recommender.api.body`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from recommender.api.problems import CatalogProblem
from recommender.profile import Profile
from recommender.scoring.results import Objective, Recommendation
from recommender.workload import Workload

__all__ = [
    "BODY_MODELS",
    "CatalogStatus",
    "Health",
    "OfferOut",
    "OfferPage",
    "PredictionRequest",
    "ProfilePage",
    "ProfileSummary",
    "ProfileUpload",
    "Readiness",
    "RecommendationRequest",
    "ReloadReport",
    "StoredProfile",
    "StoredRecommendation",
]

# Query-string text: bounded, and without NUL (which no database column can hold).
QueryText = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00]+$")]


def _workload_of(request: Workload) -> Workload:
    """The workload part of a request, from its validated parts as they are: dumping and
    validating again would meet a model resolved by name (``name`` and the registry's
    ``architecture`` both set) as a model that gives two of them."""
    given = set(Workload.model_fields) & request.model_fields_set
    return Workload.model_validate({name: getattr(request, name) for name in given})


class RecommendationRequest(Workload):
    """A workload (the public contract) plus how to rank and how many picks to return."""

    objective: Objective = "balanced"
    top: int = Field(default=5, ge=1, le=50, description="Picks to return.")
    profile_id: uuid.UUID | None = Field(
        default=None,
        description="A stored probe profile: of this workload it calibrates the predictions; of "
        "another (a reference workload) it lends its measured matmul and memory rates only.",
    )
    landscape: bool = Field(
        default=False,
        description="Also return every feasible offer's cost and time (the web page's chart).",
    )

    def workload(self) -> Workload:
        return _workload_of(self)

    def as_sent(self) -> dict[str, Any]:
        """The request as the client wrote it: a model given by name or ``hf_config`` without
        the architecture resolved from it (so the stored request can be sent again)."""
        out: dict[str, Any] = self.model_dump(mode="json", exclude_unset=True)
        model = out.get("model", {})
        if model.get("name") is not None or model.get("hf_config") is not None:
            model.pop("architecture", None)
        return out


class PredictionRequest(Workload):
    """A workload plus the accelerator (any spelling) and how many of them."""

    accelerator: str = Field(min_length=1, max_length=100)
    gpus: int = Field(default=1, ge=1, le=64)
    nodes: int = Field(
        default=1, ge=1, le=4096, description="Instances of gpus x accelerator (multi-node)."
    )
    profile_id: uuid.UUID | None = Field(
        default=None,
        description="A stored probe profile: of this workload it calibrates the prediction; of "
        "another (a reference workload) it lends its measured matmul and memory rates only.",
    )

    def workload(self) -> Workload:
        return _workload_of(self)


class StoredRecommendation(Recommendation):
    """A recommendation as served and stored: ``GET /v1/recommendations/{id}`` returns it again."""

    id: uuid.UUID
    created_at: dt.datetime
    profile_id: uuid.UUID | None = None
    request: dict[str, Any] = Field(description="The request this answers, as sent.")
    catalog_version: str | None = Field(
        default=None, description="The catalog version (manifest) the answer was computed from."
    )


class OfferOut(BaseModel):
    """One offer: an instance type in a region at a pricing model (USD per instance-hour)."""

    cloud: str
    region: str
    family: str
    instance_type: str
    accelerator: str
    gpus: int
    gpu_memory_gb: float
    vcpus: float
    memory_gib: float
    local_disk_gb: float
    pricing: Literal["on-demand", "spot"]
    price_per_hour: float
    gpu_fraction: float = Field(default=1.0, description="Share of one device (AWS g6f: 0.125).")
    arch: Literal["x86_64", "arm64"] = "x86_64"
    purchase: Literal["on-demand", "spot", "reservation"] = Field(
        default="on-demand",
        description="How the price is bought: on demand, spot, or only through a reservation.",
    )


class _Page(BaseModel):
    total: int = Field(description="Items matching the filters, on every page.")
    limit: int
    offset: int
    next_offset: int | None = Field(description="Offset of the next page; null on the last.")


class OfferPage(_Page):
    items: list[OfferOut]


class ProfileUpload(Profile):
    """The probe's profile JSON (``recommender probe --output``), as it writes it."""

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: dt.datetime) -> dt.datetime:
        """An instant: with a UTC offset (the probe writes one), stored as UTC."""
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("needs a UTC offset, e.g. 2026-12-01T10:00:00Z")
        try:
            return value.astimezone(dt.UTC)
        except OverflowError:
            raise ValueError("is outside the years 1-9999 once converted to UTC") from None


class ProfileSummary(BaseModel):
    id: uuid.UUID
    received_at: dt.datetime
    measured_at: dt.datetime
    hostname: str
    cloud: str | None
    instance_type: str | None
    accelerator: str | None
    workload: str | None
    bound: str | None


class StoredProfile(ProfileSummary):
    profile: Profile


class ProfilePage(_Page):
    items: list[ProfileSummary]


class ReloadReport(BaseModel):
    at: dt.datetime
    loaded: bool
    problems: list[CatalogProblem]


class CatalogStatus(BaseModel):
    """What the service is answering from, and whether the files on disk were accepted."""

    directory: str = Field(description="The catalog directory's name (not its path).")
    loaded: bool
    version: str | None = Field(
        default=None, description="The serving catalog's version (from its manifest)."
    )
    loaded_at: dt.datetime | None
    accelerators: int
    offers: int
    clouds: list[str]
    warnings: int
    prices_as_of: dt.datetime | None = Field(description="When the oldest price was read.")
    age_seconds: float | None
    max_age_seconds: float | None
    stale: bool
    last_reload: ReloadReport | None = Field(
        description="The last load attempt; loaded=false means the files were refused and "
        "the previous catalog is still serving."
    )


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    status: Literal["ready"] = "ready"
    checks: dict[str, Any]


# Request bodies parsed by ``recommender.api.body.json_body`` (their schemas join the OpenAPI).
BODY_MODELS: tuple[type[BaseModel], ...] = (RecommendationRequest, PredictionRequest, ProfileUpload)
