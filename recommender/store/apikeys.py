"""API keys: minted once, stored as a SHA-256 digest, looked up by a short visible prefix.

A key reads ``rk_<prefix>_<secret>``: ``prefix`` is 8 hex characters (the lookup index,
safe to show and to log), ``secret`` 43 URL-safe characters from :func:`secrets.token_urlsafe`
(256 bits). A plain SHA-256 suffices for keys this random (no dictionary to attack), and
lets every request verify in microseconds. The key itself is printed once and never stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from recommender.store.models import ApiKeyRow, utcnow

__all__ = [
    "ApiKeyInfo",
    "MintedKey",
    "create_key",
    "key_prefix",
    "list_keys",
    "revoke_key",
    "verify_key",
]

_KEY = re.compile(r"^rk_([0-9a-f]{8})_([A-Za-z0-9_\-]{43})$")


@dataclass(frozen=True, slots=True)
class ApiKeyInfo:
    """A key's public facts (never its material)."""

    id: int
    name: str
    prefix: str
    admin: bool
    created_at: dt.datetime
    revoked_at: dt.datetime | None

    @classmethod
    def of(cls, row: ApiKeyRow) -> ApiKeyInfo:
        return cls(row.id, row.name, row.prefix, row.admin, row.created_at, row.revoked_at)


@dataclass(frozen=True, slots=True)
class MintedKey:
    info: ApiKeyInfo
    key: str


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_prefix(key: str) -> str | None:
    """The lookup prefix of a well-formed key (``None`` if malformed); safe to log."""
    match = _KEY.match(key)
    return match.group(1) if match else None


def create_key(session: Session, name: str, *, admin: bool = False) -> MintedKey:
    """Mint a key, store its digest, and return the key (the only time it is known)."""
    if not name.strip():
        raise ValueError("an API key needs a non-empty --name")
    existing = set(session.scalars(select(ApiKeyRow.prefix)))
    prefix = secrets.token_hex(4)
    while prefix in existing:
        prefix = secrets.token_hex(4)
    key = f"rk_{prefix}_{secrets.token_urlsafe(32)}"
    row = ApiKeyRow(name=name.strip(), prefix=prefix, key_sha256=_digest(key), admin=admin)
    session.add(row)
    session.flush()
    return MintedKey(ApiKeyInfo.of(row), key)


def verify_key(session: Session, key: str) -> ApiKeyInfo | None:
    """The key's record when ``key`` is valid and not revoked, else ``None``."""
    prefix = key_prefix(key)
    if prefix is None:
        return None
    row = session.scalar(select(ApiKeyRow).where(ApiKeyRow.prefix == prefix))
    if row is None or row.revoked_at is not None:
        return None
    if not hmac.compare_digest(row.key_sha256, _digest(key)):
        return None
    return ApiKeyInfo.of(row)


def list_keys(session: Session) -> list[ApiKeyInfo]:
    return [ApiKeyInfo.of(r) for r in session.scalars(select(ApiKeyRow).order_by(ApiKeyRow.id))]


def revoke_key(session: Session, prefix: str) -> ApiKeyInfo:
    """Revoke the key with this prefix (``rk_`` optional); raises ``LookupError`` if none."""
    prefix = prefix.removeprefix("rk_")[:8]
    row = session.scalar(select(ApiKeyRow).where(ApiKeyRow.prefix == prefix))
    if row is None:
        raise LookupError(f"no API key with prefix {prefix!r} (`recommender apikey list`)")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    session.flush()
    return ApiKeyInfo.of(row)
