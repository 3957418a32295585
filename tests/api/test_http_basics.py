"""HTTP manners: Allow on 405, HEAD where GET works, security headers, local docs, dates."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import assert_problem, bearer


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/healthz", "GET, HEAD"),
        ("GET", "/v1/admin/reload", "POST"),
        ("PUT", "/v1/profiles", "GET, HEAD, POST"),
        ("DELETE", "/v1/recommendations/0b6c3c7e-0000-4000-8000-000000000000", "GET, HEAD"),
    ],
)
def test_405_names_the_allowed_methods(
    client: TestClient, method: str, path: str, allow: str
) -> None:
    r = client.request(method, path)
    assert_problem(r, 405)
    assert r.headers["allow"] == allow


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics", "/v1/catalog/status"])
def test_head_answers_like_get_without_a_body(client: TestClient, path: str) -> None:
    got, head = client.get(path), client.head(path)
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


def test_security_headers_on_every_answer(client: TestClient) -> None:
    for r in (client.get("/healthz"), client.get("/v1/nope"), client.get("/docs")):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert (
        client.get("/healthz").headers["content-security-policy"].startswith("default-src 'none'")
    )


def test_docs_load_swagger_from_the_service_itself(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower() and "http" not in page.text.split("<body>")[-1]
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/docs/assets/{asset}" in page.text
        assert client.get(f"/docs/assets/{asset}").status_code == 200


@pytest.mark.parametrize(
    ("created_at", "answer"),
    [
        ("2026-11-30T10:00:00", 422),  # no offset: which instant?
        ("9999-12-31T23:59:59-14:00", 422),  # past year 9999 in UTC
        ("0001-01-01T00:00:00+14:00", 422),  # before year 1 in UTC
        ("2026-11-30T12:00:00+02:00", 201),
    ],
)
def test_dates_are_normalised_to_utc_or_refused(
    client: TestClient, api_key: str, profile_doc: dict[str, Any], created_at: str, answer: int
) -> None:
    profile_doc["created_at"] = created_at
    r = client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key))
    if answer == 422:
        assert assert_problem(r, 422)["errors"][0]["field"] == "created_at"
        return
    assert r.status_code == 201, r.text
    assert r.json()["measured_at"].startswith("2026-11-30T10:00:00")
