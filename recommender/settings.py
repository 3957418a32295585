"""The service's configuration, read from ``RECOMMENDER_*`` environment variables.

Nothing here is a module-level singleton: ``Settings()`` reads the environment when it is
called, and the app factory, the CLI and the tests each build (and pass around) their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from recommender.catalog import default_catalog_dir

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
