"""Catalog reload: changed files are picked up; a broken catalog is refused, logged, and
reported, while the last good one keeps serving."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recommender.api import create_app
from recommender.catalog.manifest import write_manifest
from recommender.settings import Settings
from tests.api.conftest import assert_problem, bearer, mint, workload


def _edit(path: Path, old: str, new: str) -> None:
    """Change a catalog file as the importer and refresh do: the file, then the manifest."""
    path.write_text(path.read_text().replace(old, new))
    write_manifest(path.parent)


def _break(catalog_dir: Path) -> None:
    _edit(catalog_dir / "aws.yaml", "gpus: 4", "gpus: 0")


def _wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_broken_catalog_is_refused_and_the_old_one_serves(
    client: TestClient, admin_key: str, catalog_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _break(catalog_dir)
    with caplog.at_level(logging.ERROR, logger="recommender.api.catalog"):
        r = client.post("/v1/admin/reload", headers=bearer(admin_key))
    body = assert_problem(r, 422)
    assert body["type"].endswith("catalog-refused")
    problem = next(p for p in body["problems"] if p["severity"] == "error")
    assert problem["file"].endswith("aws.yaml") and problem["line"] > 0
    assert problem["field"] == "families[0].instances[1].gpus"
    assert "aws.yaml" in caplog.text and "keeping the last good catalog" in caplog.text

    status = client.get("/v1/catalog/status").json()
    assert status["loaded"] is True and status["offers"] == 18
    assert status["last_reload"]["loaded"] is False and status["last_reload"]["problems"]
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"]["catalog"]["last_reload_refused"] is True
    assert client.post("/v1/recommendations", json=workload()).status_code == 201
    assert 'outcome="refused"} 1.0' in client.get("/metrics").text


def test_poller_reloads_changed_files_and_refuses_broken_ones(
    make_settings: Callable[..., Settings], catalog_dir: Path
) -> None:
    app = create_app(make_settings(catalog_poll_seconds=0.02, catalog_max_offer_drop=0.5))
    with TestClient(app) as client:

        def offers() -> int:
            total: int = client.get("/v1/catalog/offers?cloud=aws").json()["total"]
            return total

        assert offers() == 7
        aws = catalog_dir / "aws.yaml"
        eu_row = "          - {region: eu-west-1, on_demand: 1.123}\n"
        _edit(aws, eu_row, "")
        _wait_for(lambda: offers() == 6)

        _break(catalog_dir)
        _wait_for(lambda: client.get("/v1/catalog/status").json()["last_reload"]["loaded"] is False)
        assert offers() == 6  # the last good catalog

        _edit(aws, "gpus: 0", "gpus: 4")
        _wait_for(lambda: client.get("/v1/catalog/status").json()["last_reload"]["loaded"])


def test_starting_on_a_broken_catalog_is_not_ready_until_fixed(
    make_settings: Callable[..., Settings], catalog_dir: Path
) -> None:
    _break(catalog_dir)
    app = create_app(make_settings(catalog_poll_seconds=0.02))
    with TestClient(app) as client:
        body = assert_problem(client.get("/readyz"), 503)
        assert "no catalog loaded" in body["detail"]
        assert_problem(client.post("/v1/recommendations", json=workload()), 503)
        assert_problem(client.get("/v1/catalog/offers"), 503)
        assert client.get("/v1/catalog/status").json()["loaded"] is False
        assert client.get("/v1/profiles").status_code == 200  # the database still answers
        reload = client.post("/v1/admin/reload", headers=bearer(mint(app, admin=True)))
        assert "no catalog is loaded" in assert_problem(reload, 422)["detail"]

        aws = catalog_dir / "aws.yaml"
        _edit(aws, "gpus: 0", "gpus: 4")
        _wait_for(lambda: client.get("/readyz").status_code == 200)
        assert client.post("/v1/recommendations", json=workload()).status_code == 201


def test_an_unexpected_load_failure_is_a_refusal_too(
    client: TestClient, admin_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recommender.api.catalog_state as catalog_state

    def explode(directory: object, **_: object) -> None:
        raise PermissionError(13, "Permission denied", str(directory))

    monkeypatch.setattr(catalog_state, "load_versioned", explode)
    body = assert_problem(client.post("/v1/admin/reload", headers=bearer(admin_key)), 422)
    assert "PermissionError" in body["problems"][0]["message"]
    assert client.get("/v1/catalog/status").json()["offers"] == 18
    assert client.post("/v1/recommendations", json=workload()).status_code == 201
