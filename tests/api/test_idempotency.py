"""Idempotency-Key on POSTs: a retry gets the first answer, a reuse with another body 422."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from recommender.store import ProfileRow, RecommendationRow
from tests.api.conftest import assert_problem, bearer, services_of, workload


def _count(app: FastAPI, table: type[Any]) -> int:
    with services_of(app).db.session() as s:
        return int(s.scalar(select(func.count()).select_from(table)) or 0)


def test_a_retried_recommendation_is_answered_once(client: TestClient, app: FastAPI) -> None:
    headers = {"Idempotency-Key": "0b6c3c7e-retry-1"}
    first = client.post("/v1/recommendations", json=workload(), headers=headers)
    assert first.status_code == 201, first.text
    again = client.post("/v1/recommendations", json=workload(), headers=headers)
    assert again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["location"] == first.headers["location"]
    assert "idempotent-replayed" not in first.headers
    assert _count(app, RecommendationRow) == 1
    fresh = client.post("/v1/recommendations", json=workload())
    assert fresh.json()["id"] != first.json()["id"]


def test_reusing_a_key_with_another_body_is_422(client: TestClient, app: FastAPI) -> None:
    headers = {"Idempotency-Key": "k-2"}
    assert client.post("/v1/recommendations", json=workload(), headers=headers).status_code == 201
    other = client.post("/v1/recommendations", json=workload(batch_size=4), headers=headers)
    assert assert_problem(other, 422)["type"].endswith("idempotency-key-reused")
    assert _count(app, RecommendationRow) == 1


def test_keys_are_scoped_to_the_caller(client: TestClient, app: FastAPI, api_key: str) -> None:
    headers = {"Idempotency-Key": "shared-name"}
    anon = client.post("/v1/recommendations", json=workload(), headers=headers)
    keyed = client.post(
        "/v1/recommendations", json=workload(), headers={**headers, **bearer(api_key)}
    )
    assert anon.status_code == keyed.status_code == 201
    assert anon.json()["id"] != keyed.json()["id"]
    with services_of(app).db.session() as s:
        owners = sorted((r.api_key_id is not None) for r in s.scalars(select(RecommendationRow)))
    assert owners == [False, True]


def test_a_retried_profile_upload_is_stored_once(
    client: TestClient, app: FastAPI, api_key: str, profile_doc: dict[str, Any]
) -> None:
    headers = {**bearer(api_key), "Idempotency-Key": "upload-1"}
    first = client.post("/v1/profiles", json=profile_doc, headers=headers)
    again = client.post("/v1/profiles", json=profile_doc, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() and _count(app, ProfileRow) == 1


def test_an_invalid_key_on_an_open_endpoint_is_401(client: TestClient) -> None:
    assert_problem(
        client.post("/v1/recommendations", json=workload(), headers=bearer("rk_bad")), 401
    )
