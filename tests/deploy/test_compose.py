"""deploy/compose.yaml: PostgreSQL, a one-shot migration, then the API, wired consistently."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from tests.deploy.conftest import DEPLOY, REPO, SERVICE_IMAGE, SERVICE_PORT, known_env_name

COMPOSE = DEPLOY / "compose.yaml"


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text())  # resolves the x- anchors as compose does
    found: dict[str, Any] = doc["services"]
    return found


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    return {k: str(v) for k, v in env.items()}


def test_three_services(services: dict[str, Any]) -> None:
    assert set(services) == {"postgres", "migrate", "api"}


def test_migration_runs_once_before_the_api(services: dict[str, Any]) -> None:
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["api"]["depends_on"] == {
        "migrate": {"condition": "service_completed_successfully"}
    }
    assert _env(services["api"])["RECOMMENDER_AUTO_MIGRATE"] == "false"


def test_both_run_the_service_image_built_from_the_dockerfile(services: dict[str, Any]) -> None:
    for name in ("migrate", "api"):
        service = services[name]
        assert service["image"].split(":")[0] == SERVICE_IMAGE
        build = service["build"]
        assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == (
            DEPLOY / "Dockerfile"
        )
        assert build["args"]["PROJECT_VERSION"] == service["image"].split(":")[1]


def test_api_port_and_healthcheck(services: dict[str, Any], service: TestClient) -> None:
    api = services["api"]
    command = api["command"]
    port = int(command[command.index("--port") + 1])
    assert port == SERVICE_PORT
    (published,) = api["ports"]
    assert published.startswith("127.0.0.1:") and published.endswith(f":{port}")
    probe = " ".join(api["healthcheck"]["test"])
    url = re.search(rf"http://127\.0\.0\.1:{port}(/\w+)", probe)
    assert url, probe
    assert service.get(url.group(1)).status_code == 200


def test_database_url_names_the_postgres_service(services: dict[str, Any]) -> None:
    pg = services["postgres"]["environment"]
    for name in ("migrate", "api"):
        env = _env(services[name])
        assert all(known_env_name(k) for k in env), env
        url = make_url(env["RECOMMENDER_DATABASE_URL"])
        assert url.drivername == "postgresql+psycopg"  # the `postgres` extra, in the lock
        assert (url.host, url.database, url.username) == (
            "postgres",
            pg["POSTGRES_DB"],
            pg["POSTGRES_USER"],
        )
        assert url.password == pg["POSTGRES_PASSWORD"]  # the same ${POSTGRES_PASSWORD}
    assert "psycopg-binary" in (REPO / "deploy" / "lock" / "service.txt").read_text()


def test_catalog_override_mount_is_where_the_image_reads(services: dict[str, Any]) -> None:
    text = COMPOSE.read_text()
    mount = re.search(r"#\s+- \./my-catalogs:(\S+):ro", text)
    assert mount, "the commented catalog volume is gone"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert f"RECOMMENDER_CATALOG_DIR={mount.group(1)}" in dockerfile
