"""Settings come from RECOMMENDER_* variables when built, never from a module-level global."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from recommender.catalog import default_catalog_dir
from recommender.settings import DEFAULT_DATABASE_URL, Settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "CATALOG_DIR", "REQUIRE_KEY_FOR_READS"):
        monkeypatch.delenv(f"RECOMMENDER_{name}", raising=False)
    s = Settings()
    assert s.database_url == DEFAULT_DATABASE_URL == "sqlite:///.recommender/recommender.db"
    assert s.require_key_for_reads is False and s.auto_migrate is True
    assert s.resolved_catalog_dir == default_catalog_dir()
    assert s.catalog_max_age_seconds == s.catalog_max_age_days * 86400


def test_environment_is_read_each_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RECOMMENDER_DATABASE_URL", "postgresql+psycopg://u@h/db")
    monkeypatch.setenv("RECOMMENDER_REQUIRE_KEY_FOR_READS", "true")
    monkeypatch.setenv("RECOMMENDER_CATALOG_DIR", str(tmp_path))
    monkeypatch.setenv("RECOMMENDER_CATALOG_MAX_AGE_DAYS", "0")
    s = Settings()
    assert s.database_url == "postgresql+psycopg://u@h/db" and s.require_key_for_reads
    assert s.resolved_catalog_dir == tmp_path and s.catalog_max_age_seconds is None
    monkeypatch.setenv("RECOMMENDER_REQUIRE_KEY_FOR_READS", "false")
    assert Settings().require_key_for_reads is False


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("database_url", "mysql://x/y"),
        ("max_body_bytes", 10),
        ("catalog_poll_seconds", -1),
        ("log_level", "loud"),
    ],
)
def test_bad_values_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        Settings(**{field: value})


def test_settings_are_frozen() -> None:
    with pytest.raises(ValidationError):
        Settings().database_url = "sqlite:///other.db"  # type: ignore[misc]
