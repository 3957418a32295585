"""The OpenAPI document: stable operation ids, problem+json declared for every error."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

OPERATIONS = {
    ("post", "/v1/recommendations"): "createRecommendation",
    ("get", "/v1/recommendations/{recommendation_id}"): "getRecommendation",
    ("post", "/v1/predictions"): "createPrediction",
    ("get", "/v1/catalog/offers"): "listOffers",
    ("get", "/v1/catalog/status"): "catalogStatus",
    ("get", "/v1/accelerators"): "listAccelerators",
    ("post", "/v1/profiles"): "uploadProfile",
    ("get", "/v1/profiles/{profile_id}"): "getProfile",
    ("get", "/v1/profiles"): "listProfiles",
    ("post", "/v1/admin/reload"): "reloadCatalog",
    ("get", "/healthz"): "health",
    ("get", "/readyz"): "readiness",
    ("get", "/metrics"): "metrics",
}


def _operations(schema: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): op for path, ops in schema["paths"].items() for method, op in ops.items()
    }


def test_operation_ids_are_stable(client: TestClient) -> None:
    ops = _operations(client.get("/openapi.json").json())
    assert {key: op["operationId"] for key, op in ops.items()} == OPERATIONS


def test_every_error_is_declared_as_problem_json(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    for key, op in _operations(schema).items():
        errors = {s: r for s, r in op["responses"].items() if s[0] in "45"}
        if key[1].startswith("/v1/"):
            assert "503" in errors, key
        for status, response in errors.items():
            assert list(response["content"]) == ["application/problem+json"], (key, status)
            ref = response["content"]["application/problem+json"]["schema"]["$ref"]
            assert ref.endswith("/Problem")
    problem = schema["components"]["schemas"]["Problem"]
    assert {"type", "title", "status", "detail", "errors"} <= set(problem["properties"])


def test_bodies_and_their_failures_are_declared(client: TestClient) -> None:
    ops = _operations(client.get("/openapi.json").json())
    for key in [("post", "/v1/recommendations"), ("post", "/v1/predictions")]:
        op = ops[key]
        body = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert body.split("/")[-1] in ("RecommendationRequest", "PredictionRequest")
        assert {"400", "413", "415", "422"} <= set(op["responses"])
    upload = ops[("post", "/v1/profiles")]
    assert {"401", "413", "422"} <= set(upload["responses"])
    assert upload["requestBody"]["required"] is True


def test_docs_are_served(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
