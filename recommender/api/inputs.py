"""References inside a request, resolved: the stored profile a ``profile_id`` names, and
which field named an accelerator the catalog does not know."""

from __future__ import annotations

import uuid

from recommender.api.deps import Services
from recommender.api.problems import FieldError, ProblemError
from recommender.profile import Profile
from recommender.store import get_profile
from recommender.workload import Workload

__all__ = ["accelerator_field", "load_profile"]


def load_profile(services: Services, profile_id: uuid.UUID | None) -> Profile | None:
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
