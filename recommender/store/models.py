"""The database tables, as typed SQLAlchemy 2 ORM models: API keys, profiles, recommendations.

Documents (a probe profile, a recommendation with its request) are kept whole as JSON; the
columns beside them are what lists filter and sort on. The schema itself is created and
changed only by the Alembic migrations in :mod:`recommender.store.migrations`.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, MetaData, String, UniqueConstraint, Uuid
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = [
    "ApiKeyRow",
    "Base",
    "IdempotencyRow",
    "ProfileRow",
    "RecommendationRow",
    "UtcDateTime",
    "utcnow",
]

Document = JSON().with_variant(JSONB(), "postgresql")

# Stable constraint names, so that migrations can refer to them on every backend.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UtcDateTime(TypeDecorator[dt.datetime]):
    """Timezone-aware UTC on the way in and out, on SQLite (which drops the zone) as well."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: store aware UTC datetimes only")
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class ApiKeyRow(Base):
    """An API key: only its SHA-256 is kept; ``prefix`` is the visible part used for lookup."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(32), unique=True)
    key_sha256: Mapped[str] = mapped_column(String(64))
    admin: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, default=None)


class ProfileRow(Base):
    """A probe profile as uploaded (validated), with the fields lists filter on."""

    __tablename__ = "profiles"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    received_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)
    measured_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    hostname: Mapped[str] = mapped_column(String(255), index=True)
    cloud: Mapped[str | None] = mapped_column(String(16))
    instance_type: Mapped[str | None] = mapped_column(String(100), index=True)
    accelerator: Mapped[str | None] = mapped_column(String(100), index=True)
    workload_name: Mapped[str | None] = mapped_column(String(200), index=True)
    bound: Mapped[str | None] = mapped_column(String(32))
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id"))
    document: Mapped[dict[str, Any]] = mapped_column(Document)


class RecommendationRow(Base):
    """A recommendation served, kept so that its link can be shared."""

    __tablename__ = "recommendations"
    __table_args__ = (
        Index("ix_recommendations_created_at", "created_at"),
        Index("ix_recommendations_api_key_id_created_at", "api_key_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    workload_name: Mapped[str] = mapped_column(String(200))
    objective: Mapped[str] = mapped_column(String(16))
    profile_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("profiles.id", ondelete="SET NULL")
    )
    request: Mapped[dict[str, Any]] = mapped_column(Document)
    result: Mapped[dict[str, Any]] = mapped_column(Document)
    api_key_id: Mapped[int | None] = mapped_column(
        ForeignKey("api_keys.id", name="fk_recommendations_api_key_id_api_keys"), default=None
    )


class IdempotencyRow(Base):
    """The answer to a POST sent with an ``Idempotency-Key``: a retry gets it again.

    ``scope`` is whose key it is (an API key, or a client address without one), so two
    callers never see each other's answers; ``request_sha256`` tells a retry from a reuse.
    """

    __tablename__ = "idempotency_keys"
    __table_args__ = (
        UniqueConstraint("scope", "key", name="uq_idempotency_keys_scope"),
        Index("ix_idempotency_keys_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    scope: Mapped[str] = mapped_column(String(80))
    key: Mapped[str] = mapped_column(String(255))
    request_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[int] = mapped_column()
    location: Mapped[str | None] = mapped_column(String(200), default=None)
    response: Mapped[dict[str, Any]] = mapped_column(Document)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
