"""API keys: required for writes (401 problem), optional for reads, admin routes need admin."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from recommender.api import create_app
from recommender.settings import Settings
from recommender.store import revoke_key
from tests.api.conftest import assert_problem, bearer, mint, services_of, workload


def test_upload_without_a_key_is_401(client: TestClient, profile_doc: dict[str, Any]) -> None:
    r = client.post("/v1/profiles", json=profile_doc)
    body = assert_problem(r, 401)
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert "recommender apikey create" in body["detail"]


@pytest.mark.parametrize(
    "header",
    [
        "Bearer rk_00000000_" + "A" * 43,  # well-formed, unknown
        "Bearer not-a-key",
        "Basic dXNlcjpwYXNz",
    ],
)
def test_wrong_keys_are_401(client: TestClient, profile_doc: dict[str, Any], header: str) -> None:
    r = client.post("/v1/profiles", json=profile_doc, headers={"Authorization": header})
    assert_problem(r, 401)


def test_tampered_and_revoked_keys_are_401(
    client: TestClient, app: FastAPI, api_key: str, profile_doc: dict[str, Any]
) -> None:
    tampered = api_key[:-1] + ("A" if api_key[-1] != "A" else "B")
    assert_problem(client.post("/v1/profiles", json=profile_doc, headers=bearer(tampered)), 401)
    assert client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key)).status_code == 201
    with services_of(app).db.session() as session:
        revoke_key(session, api_key)
    assert_problem(client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key)), 401)


def test_key_material_never_logged(
    client: TestClient, api_key: str, profile_doc: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = api_key[:-4] + "zzzz"
    client.post("/v1/profiles", json=profile_doc, headers=bearer(wrong))
    client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key))
    assert "rejected API key prefix" in caplog.text
    secret = api_key.split("_", 2)[2]
    assert secret not in caplog.text and wrong.split("_", 2)[2] not in caplog.text


def test_x_api_key_header_works_too(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    ok = client.post("/v1/profiles", json=profile_doc, headers={"X-API-Key": api_key})
    assert ok.status_code == 201
    bad = client.post("/v1/profiles", json=profile_doc, headers={"X-API-Key": api_key + "x"})
    assert_problem(bad, 401)


def test_reads_are_open_by_default(client: TestClient) -> None:
    assert client.get("/v1/profiles").status_code == 200
    assert client.post("/v1/recommendations", json=workload()).status_code == 201
    schema = client.get("/openapi.json").json()
    assert "security" not in schema["paths"]["/v1/profiles"]["get"]
    assert schema["paths"]["/v1/profiles"]["post"]["security"] == [
        {"ApiKey": []},
        {"ApiKeyHeader": []},
    ]


def test_reads_can_require_a_key(make_settings: Callable[..., Settings]) -> None:
    app = create_app(make_settings(require_key_for_reads=True))
    with TestClient(app) as client:
        key = mint(app)
        assert_problem(client.get("/v1/profiles"), 401)
        assert_problem(client.get("/v1/catalog/offers"), 401)
        assert_problem(client.post("/v1/recommendations", json=workload()), 401)
        assert client.get("/v1/profiles", headers=bearer(key)).status_code == 200
        r = client.post("/v1/recommendations", json=workload(), headers=bearer(key))
        assert r.status_code == 201
        assert client.get("/healthz").status_code == 200  # probes stay open
        assert client.get("/metrics").status_code == 200
        schema = client.get("/openapi.json").json()
        assert {"ApiKey": []} in schema["paths"]["/v1/profiles"]["get"]["security"]
        assert "401" in schema["paths"]["/v1/profiles"]["get"]["responses"]


def test_admin_route_needs_an_admin_key(client: TestClient, api_key: str, admin_key: str) -> None:
    assert_problem(client.post("/v1/admin/reload"), 401)
    body = assert_problem(client.post("/v1/admin/reload", headers=bearer(api_key)), 403)
    assert "--admin" in body["detail"]
    r = client.post("/v1/admin/reload", headers=bearer(admin_key))
    assert r.status_code == 200 and r.json()["loaded"] is True
