"""``Idempotency-Key`` on POSTs that store something: a retry gets the first answer again.

A client that did not see the answer to a POST (a timeout, a dropped connection) sends it
again with the same ``Idempotency-Key`` header; the service answers with what it stored the
first time (``Idempotent-Replayed: true``) instead of storing a second copy. The same key
with a different body is a 422 (as the IETF httpapi idempotency-key draft advises). Keys are
scoped to the caller (the API key, else the client address) and kept for the idempotency
retention period.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Header, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from recommender.api.deps import Services
from recommender.api.problems import ProblemError
from recommender.store import ApiKeyInfo, find_idempotent, save_idempotent
from recommender.store.models import IdempotencyRow

__all__ = ["IdempotencyKeyHeader", "Idempotent", "idempotent"]

# The draft's example keys are UUIDs; 255 is the column width.
MAX_KEY_CHARS = 255

IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=r"^[\x21-\x7e]+$",
        description="Retry-safe POST: a retry with the same key and body gets the first answer "
        "again instead of storing a second copy (e.g. a UUID).",
    ),
]


@dataclass(frozen=True, slots=True)
class Idempotent:
    """One POST's idempotency context: who, which key, and a digest of what was asked."""

    scope: str
    key: str
    digest: str

    def replay(self, services: Services) -> Response | None:
        """The stored answer to this key (``None``: first time); 422 if the body differs."""
        with services.db.session() as session:
            row = find_idempotent(session, self.scope, self.key)
            return None if row is None else self._answer(row)

    def _answer(self, row: IdempotencyRow) -> Response:
        if row.request_sha256 != self.digest:
            raise ProblemError(
                422,
                "idempotency-key-reused",
                "This Idempotency-Key was already used with a different request body; "
                "use a new key for a new request.",
                title="Idempotency-Key reused",
            )
        headers = {"Idempotent-Replayed": "true"}
        if row.location:
            headers["Location"] = row.location
        return JSONResponse(row.response, status_code=row.status, headers=headers)

    def save(
        self, session: Session, status: int, location: str | None, body: dict[str, Any]
    ) -> None:
        save_idempotent(
            session,
            scope=self.scope,
            key=self.key,
            request_sha256=self.digest,
            status=status,
            location=location,
            response=body,
        )

    def after_race(self, services: Services, exc: IntegrityError) -> Response:
        """A twin request stored its answer first: answer with that one."""
        answer = self.replay(services)
        if answer is None:
            raise exc
        return answer


def idempotent(
    request: Request, key: str | None, api_key: ApiKeyInfo | None, body: dict[str, Any]
) -> Idempotent | None:
    """The idempotency context of a POST (``None`` without an ``Idempotency-Key``)."""
    if key is None:
        return None
    if api_key is not None:
        scope = f"key:{api_key.id}"
    else:
        client = request.client.host if request.client else "unknown"
        scope = "addr:" + hashlib.sha256(client.encode()).hexdigest()[:32]
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return Idempotent(scope, key, hashlib.sha256(canonical).hexdigest())
