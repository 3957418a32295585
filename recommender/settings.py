"""The service's configuration, read from ``RECOMMENDER_*`` environment variables.

Nothing here is a module-level singleton: ``Settings()`` reads the environment when it is
called, and the app factory, the CLI and the tests each build (and pass around) their own.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from recommender.catalog import default_catalog_dir

if TYPE_CHECKING:
    from recommender.store.database import DbTimeouts
    from recommender.store.retention import RetentionPolicy

__all__ = ["DEFAULT_DATABASE_URL", "Settings"]

DEFAULT_DATABASE_URL = "sqlite:///.recommender/recommender.db"

LogLevel = Literal["critical", "error", "warning", "info", "debug"]


class Settings(BaseSettings):
    """Every knob of the HTTP service; each field is ``RECOMMENDER_<NAME>`` in the environment."""

    model_config = SettingsConfigDict(
        env_prefix="RECOMMENDER_", extra="ignore", frozen=True, validate_default=True
    )

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL: sqlite:///PATH (WAL mode) or postgresql+psycopg://...",
    )
    catalog_dir: Path | None = Field(
        default=None, description="Catalog YAML directory (default: the bundled catalogs)."
    )
    catalog_max_age_days: Annotated[float, Field(ge=0)] = Field(
        default=365.0,
        description="/readyz fails when the catalog's prices were read longer ago (0: never).",
    )
    catalog_poll_seconds: Annotated[float, Field(ge=0)] = Field(
        default=10.0, description="How often to look for changed catalog files (0: never)."
    )
    require_key_for_reads: bool = Field(
        default=False, description="Also require an API key for GET and computing endpoints."
    )
    max_body_bytes: Annotated[int, Field(ge=1024)] = Field(
        default=1_048_576, description="Larger request bodies are refused with 413."
    )
    auto_migrate: bool = Field(
        default=True, description="Apply database migrations when the app starts."
    )
    db_pool_size: Annotated[int, Field(ge=1, le=200)] = Field(
        default=10, description="Database connections kept open per process."
    )
    log_level: LogLevel = "info"

    # -- abuse bounds ------------------------------------------------------------------
    rate_limit_per_address: str = Field(
        default="1200/minute",
        description="Requests to /v1 one client address may make ('N/second|minute|hour', "
        "several joined by ';'; empty: no limit). Answered 429 with Retry-After beyond it.",
    )
    rate_limit_per_key: str = Field(
        default="6000/minute", description="Requests to /v1 one API key may make (as above)."
    )
    rate_limit_storage: str = Field(
        default="async+memory://",
        description="Where the counters live (a `limits` storage URI; memory is per worker, "
        "async+redis://HOST shares them between workers and machines).",
    )
    anonymous_retention_hours: Annotated[float, Field(ge=0)] = Field(
        default=168.0,
        description="Recommendations made without a key are kept this long (0: forever).",
    )
    anonymous_max_stored: Annotated[int, Field(ge=0)] = Field(
        default=100_000,
        description="At most this many recommendations without a key are kept, "
        "the newest (0: no bound).",
    )
    per_key_max_stored: Annotated[int, Field(ge=0)] = Field(
        default=10_000,
        description="Each API key keeps its newest this many recommendations (0: no bound).",
    )
    idempotency_retention_hours: Annotated[float, Field(gt=0)] = Field(
        default=24.0, description="How long a POST's Idempotency-Key answers retries."
    )
    prune_interval_seconds: Annotated[float, Field(ge=0)] = Field(
        default=60.0,
        description="How often the service applies the bounds above (0: never; "
        "`recommender db prune` does it on demand).",
    )

    # -- timeouts ----------------------------------------------------------------------
    db_statement_timeout_ms: Annotated[int, Field(ge=0)] = Field(
        default=5_000, description="PostgreSQL statement_timeout (0: none)."
    )
    db_lock_timeout_ms: Annotated[int, Field(ge=1)] = Field(
        default=1_000,
        description="PostgreSQL lock_timeout; SQLite busy_timeout (how long to wait for a lock).",
    )
    db_pool_timeout_seconds: Annotated[float, Field(gt=0)] = Field(
        default=2.0, description="Longest wait for a free database connection (then 503)."
    )
    readiness_db_timeout_seconds: Annotated[float, Field(gt=0)] = Field(
        default=1.0, description="/readyz fails when the database does not answer this fast."
    )

    server_keepalive_seconds: Annotated[float, Field(gt=0)] = Field(
        default=5.0, description="An idle keep-alive connection is closed after this long."
    )
    server_header_timeout_seconds: Annotated[float, Field(gt=0)] = Field(
        default=10.0,
        description="A connection that has not sent a whole request head this long after "
        "connecting (or after its last answer) is closed.",
    )
    server_body_timeout_seconds: Annotated[float, Field(gt=0)] = Field(
        default=30.0, description="A request body not received within this long is 408."
    )
    server_max_connections: Annotated[int, Field(ge=1)] = Field(
        default=4096, description="Open connections per worker; more are closed at once."
    )
    max_buffered_body_bytes: Annotated[int, Field(ge=1024)] = Field(
        default=64 * 1_048_576,
        description="Request body bytes one worker holds at once; past it a request is 503.",
    )

    # -- catalogs ----------------------------------------------------------------------
    catalog_require_manifest: bool = Field(
        default=True,
        description="Serve a catalog directory only when its manifest.json names every file "
        "and its digest (written last by `catalog import` and `catalog refresh`).",
    )
    catalog_max_offer_drop: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.05,
        description="Refuse a reload that has this share fewer offers than the serving catalog.",
    )
    runtime_dir: Path | None = Field(
        default=None,
        description="A directory the workers of one `serve` share (reload signals, metrics); "
        "`recommender serve` sets it.",
    )

    @field_validator("rate_limit_per_address", "rate_limit_per_key")
    @classmethod
    def _rate_limits(cls, value: str) -> str:
        from limits import parse_many

        if value.strip():
            try:
                parse_many(value)
            except ValueError as exc:
                raise ValueError(f"not a rate limit like '600/minute': {exc}") from None
        return value.strip()

    @field_validator("database_url")
    @classmethod
    def _known_backend(cls, url: str) -> str:
        if not url.startswith(("sqlite", "postgresql")):
            raise ValueError(
                "must be sqlite:///PATH or postgresql+psycopg://USER@HOST/DB "
                f"(got {url.split(':', 1)[0]!r})"
            )
        return url

    @property
    def resolved_catalog_dir(self) -> Path:
        """The catalog directory this service reads (the setting, else the default)."""
        return self.catalog_dir or default_catalog_dir()

    @property
    def catalog_max_age_seconds(self) -> float | None:
        return self.catalog_max_age_days * 86400.0 if self.catalog_max_age_days else None

    def retention_policy(self) -> RetentionPolicy:
        """The storage bounds above, as :func:`recommender.store.prune` takes them."""
        from recommender.store.retention import RetentionPolicy

        hours = self.anonymous_retention_hours
        return RetentionPolicy(
            anonymous_retention=dt.timedelta(hours=hours) if hours else None,
            anonymous_max=self.anonymous_max_stored or None,
            per_key_max=self.per_key_max_stored or None,
            idempotency_retention=dt.timedelta(hours=self.idempotency_retention_hours),
        )

    def db_timeouts(self) -> DbTimeouts:
        from recommender.store.database import DbTimeouts

        return DbTimeouts(
            pool_timeout_s=self.db_pool_timeout_seconds,
            lock_timeout_ms=self.db_lock_timeout_ms,
            statement_timeout_ms=self.db_statement_timeout_ms,
        )
