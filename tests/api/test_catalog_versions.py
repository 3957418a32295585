"""Catalogs as one versioned unit: answers name the version they came from, an incomplete
or shrunken catalog is refused, and an admin reload reaches every worker."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from recommender.api import create_app
from recommender.catalog.manifest import read_manifest, write_manifest
from recommender.settings import Settings
from tests.api.conftest import assert_problem, bearer, mint, workload


def _wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_answers_carry_the_catalog_version(client: TestClient, catalog_dir: Path) -> None:
    version = read_manifest(catalog_dir).version
    assert client.get("/v1/catalog/status").json()["version"] == version
    assert client.get("/v1/catalog/offers").headers["x-catalog-version"] == version
    r = client.post("/v1/recommendations", json=workload())
    assert r.status_code == 201
    assert r.headers["x-catalog-version"] == version
    assert r.json()["catalog_version"] == version
    assert client.get(r.headers["location"]).json()["catalog_version"] == version


def test_a_deleted_file_is_refused_even_with_a_fresh_manifest(
    client: TestClient, admin_key: str, catalog_dir: Path
) -> None:
    before = client.get("/v1/catalog/status").json()
    (catalog_dir / "gcp.yaml").unlink()
    refused = assert_problem(client.post("/v1/admin/reload", headers=bearer(admin_key)), 422)
    assert any("missing" in p["message"] for p in refused["problems"])
    write_manifest(catalog_dir)  # as if a writer had dropped the file on purpose
    refused = assert_problem(client.post("/v1/admin/reload", headers=bearer(admin_key)), 422)
    assert any(p["check"] == "drop" for p in refused["problems"])
    after = client.get("/v1/catalog/status").json()
    assert (after["version"], after["offers"]) == (before["version"], before["offers"])
    assert after["directory"] == "catalog"  # the name, never the server's path


def test_admin_reload_reaches_every_worker(
    make_settings: Callable[..., Settings], catalog_dir: Path, tmp_path: Path
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    settings = make_settings(runtime_dir=runtime)
    first, second = create_app(settings), create_app(settings)
    with TestClient(first) as a, TestClient(second) as b:
        old = read_manifest(catalog_dir).version
        assert a.get("/v1/catalog/status").json()["version"] == old
        aws = catalog_dir / "aws.yaml"
        aws.write_text(aws.read_text().replace("on_demand: 1.123", "on_demand: 1.125"))
        new = write_manifest(catalog_dir).version
        assert new != old
        r = a.post("/v1/admin/reload", headers=bearer(mint(first, admin=True)))
        assert r.status_code == 200 and r.json()["version"] == new
        _wait_for(lambda: b.get("/v1/catalog/status").json()["version"] == new)
