"""Persistence: SQLAlchemy models, packaged Alembic migrations, API keys and stored documents.

SQLite (a file, WAL mode) is the embedded default; PostgreSQL works through the same code
with a ``postgresql+psycopg://`` URL.
"""

from recommender.store.apikeys import (
    ApiKeyInfo,
    MintedKey,
    create_key,
    key_prefix,
    list_keys,
    revoke_key,
    verify_key,
)
from recommender.store.database import Database, DbTimeouts, create_db_engine, normalize_url
from recommender.store.idempotency import find_idempotent, save_idempotent
from recommender.store.migrate import current_revision, downgrade, head_revision, upgrade
from recommender.store.models import (
    ApiKeyRow,
    Base,
    IdempotencyRow,
    ProfileRow,
    RecommendationRow,
)
from recommender.store.records import (
    ProfileFilter,
    add_profile,
    add_recommendation,
    get_profile,
    get_recommendation,
    list_profiles,
)
from recommender.store.retention import PruneReport, RetentionPolicy, prune

__all__ = [
    "ApiKeyInfo",
    "ApiKeyRow",
    "Base",
    "Database",
    "DbTimeouts",
    "IdempotencyRow",
    "MintedKey",
    "ProfileFilter",
    "ProfileRow",
    "PruneReport",
    "RecommendationRow",
    "RetentionPolicy",
    "add_profile",
    "add_recommendation",
    "create_db_engine",
    "create_key",
    "current_revision",
    "downgrade",
    "find_idempotent",
    "get_profile",
    "get_recommendation",
    "head_revision",
    "key_prefix",
    "list_keys",
    "list_profiles",
    "normalize_url",
    "prune",
    "revoke_key",
    "save_idempotent",
    "upgrade",
    "verify_key",
]
