"""Bounded storage: what ``recommender db prune`` and the service's pruner delete.

Stored recommendations are links to share, not an archive: one made without an API key is
kept for the retention period, and at most ``anonymous_max`` of them are kept in all; a key
keeps its newest ``per_key_max``. Idempotency records live for their own retention period.
Every bound is a setting; deleting the oldest first keeps the newest links working.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.orm import Session

from recommender.store.models import IdempotencyRow, RecommendationRow

__all__ = ["PruneReport", "RetentionPolicy", "prune"]


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How much is kept. ``None`` means no bound of that kind."""

    anonymous_retention: dt.timedelta | None
    anonymous_max: int | None
    per_key_max: int | None
    idempotency_retention: dt.timedelta


@dataclass(frozen=True, slots=True)
class PruneReport:
    anonymous_expired: int
    anonymous_over_quota: int
    keyed_over_quota: int
    idempotency_expired: int

    @property
    def total(self) -> int:
        return (
            self.anonymous_expired
            + self.anonymous_over_quota
            + self.keyed_over_quota
            + self.idempotency_expired
        )


def _keep_newest(session: Session, where: ColumnElement[bool], keep: int) -> int:
    """Delete all but the ``keep`` newest recommendations matching ``where``."""
    cutoff = session.scalar(
        select(RecommendationRow.created_at)
        .where(where)
        .order_by(RecommendationRow.created_at.desc())
        .offset(keep)
        .limit(1)
    )
    if cutoff is None:
        return 0
    result = session.execute(
        delete(RecommendationRow).where(where, RecommendationRow.created_at <= cutoff)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def _over_quota_keys(session: Session, per_key_max: int) -> list[int]:
    rows = session.execute(
        select(RecommendationRow.api_key_id)
        .where(RecommendationRow.api_key_id.is_not(None))
        .group_by(RecommendationRow.api_key_id)
        .having(func.count() > per_key_max)
    )
    return [r[0] for r in rows if r[0] is not None]


def prune(session: Session, policy: RetentionPolicy, *, now: dt.datetime) -> PruneReport:
    """Apply ``policy`` as of ``now``; returns how many rows of each kind went."""
    anonymous = RecommendationRow.api_key_id.is_(None)
    expired = 0
    if policy.anonymous_retention is not None:
        cutoff = now - policy.anonymous_retention
        result = session.execute(
            delete(RecommendationRow).where(anonymous, RecommendationRow.created_at < cutoff)
        )
        expired = int(result.rowcount or 0)  # type: ignore[attr-defined]
    over = _keep_newest(session, anonymous, policy.anonymous_max) if policy.anonymous_max else 0
    keyed = 0
    if policy.per_key_max is not None:
        for key_id in _over_quota_keys(session, policy.per_key_max):
            keyed += _keep_newest(
                session, RecommendationRow.api_key_id == key_id, policy.per_key_max
            )
    stale = session.execute(
        delete(IdempotencyRow).where(IdempotencyRow.created_at < now - policy.idempotency_retention)
    )
    return PruneReport(expired, over, keyed, int(stale.rowcount or 0))  # type: ignore[attr-defined]
