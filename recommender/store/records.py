"""Reading and writing the stored documents: probe profiles and served recommendations."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from recommender.profile import Profile
from recommender.store.models import ProfileRow, RecommendationRow

__all__ = [
    "ProfileFilter",
    "add_profile",
    "add_recommendation",
    "get_profile",
    "get_recommendation",
    "list_profiles",
]


def _clip(value: str | None, length: int) -> str | None:
    """Index columns hold a prefix of very long values; the document keeps them whole."""
    return None if value is None else value[:length]


def add_profile(session: Session, profile: Profile, *, api_key_id: int | None) -> ProfileRow:
    """Store a validated profile with its index columns; returns the new row (id assigned)."""
    machine = profile.machine
    workload = profile.workload
    row = ProfileRow(
        measured_at=profile.created_at,
        hostname=_clip(machine.hostname, 255) or "",
        cloud=machine.cloud,
        instance_type=_clip(machine.instance_type, 100),
        accelerator=_clip(machine.accelerator or machine.accelerator_name_raw, 100),
        workload_name=_clip(workload.name if workload else None, 200),
        bound=profile.classification.bound if profile.classification else None,
        api_key_id=api_key_id,
        document=profile.model_dump(mode="json"),
    )
    session.add(row)
    session.flush()
    return row


def get_profile(session: Session, profile_id: uuid.UUID) -> ProfileRow | None:
    return session.get(ProfileRow, profile_id)


@dataclass(frozen=True, slots=True)
class ProfileFilter:
    """``machine`` matches hostname or instance type; ``accelerators`` any of the spellings
    given (case-insensitive); ``workload`` the workload name. ``None`` means no filter."""

    machine: str | None = None
    accelerators: Sequence[str] | None = None
    workload: str | None = None

    def clauses(self) -> list[ColumnElement[bool]]:
        out: list[ColumnElement[bool]] = []
        if self.machine is not None:
            m = self.machine.lower()
            out.append(
                or_(func.lower(ProfileRow.hostname) == m, func.lower(ProfileRow.instance_type) == m)
            )
        if self.accelerators is not None:
            names = sorted({a.lower() for a in self.accelerators})
            out.append(func.lower(ProfileRow.accelerator).in_(names))
        if self.workload is not None:
            out.append(func.lower(ProfileRow.workload_name) == self.workload.lower())
        return out


def list_profiles(
    session: Session, where: ProfileFilter, *, limit: int, offset: int
) -> tuple[list[ProfileRow], int]:
    """One page of profiles, newest first, and how many match in all."""
    clauses = where.clauses()
    total = session.scalar(select(func.count()).select_from(ProfileRow).where(*clauses)) or 0
    rows = session.scalars(
        select(ProfileRow)
        .where(*clauses)
        .order_by(ProfileRow.received_at.desc(), ProfileRow.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), total


def add_recommendation(
    session: Session,
    *,
    request: dict[str, Any],
    result: dict[str, Any],
    workload_name: str,
    objective: str,
    profile_id: uuid.UUID | None,
    api_key_id: int | None = None,
) -> RecommendationRow:
    """Store a served recommendation; ``api_key_id`` counts it against that key's quota
    (``None``: an anonymous one, kept for the anonymous retention period)."""
    row = RecommendationRow(
        workload_name=_clip(workload_name, 200) or "",
        objective=objective,
        profile_id=profile_id,
        request=request,
        result=result,
        api_key_id=api_key_id,
    )
    session.add(row)
    session.flush()
    return row


def get_recommendation(session: Session, rec_id: uuid.UUID) -> RecommendationRow | None:
    return session.get(RecommendationRow, rec_id)
