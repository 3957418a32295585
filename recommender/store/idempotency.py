"""Idempotency records: the stored answer to a POST sent with an ``Idempotency-Key``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from recommender.store.models import IdempotencyRow

__all__ = ["find_idempotent", "save_idempotent"]


def find_idempotent(session: Session, scope: str, key: str) -> IdempotencyRow | None:
    """The answer stored for ``key`` in ``scope``, if any."""
    return session.scalar(
        select(IdempotencyRow).where(IdempotencyRow.scope == scope, IdempotencyRow.key == key)
    )


def save_idempotent(
    session: Session,
    *,
    scope: str,
    key: str,
    request_sha256: str,
    status: int,
    location: str | None,
    response: dict[str, Any],
) -> None:
    """Store the answer; a concurrent twin makes the flush raise ``IntegrityError``."""
    session.add(
        IdempotencyRow(
            scope=scope,
            key=key,
            request_sha256=request_sha256,
            status=status,
            location=location,
            response=response,
        )
    )
    session.flush()
