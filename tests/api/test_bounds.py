"""Bounded input: every string and list of a request states its bound, and the service
enforces it cheaply (a capped error list, integral floats read as integers)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from recommender.api.bounds import MAX_ITEMS, MAX_STRING_CHARS, shape_errors
from recommender.api.problems import MAX_FIELD_ERRORS
from tests.api.conftest import assert_problem, bearer, workload

BODIES = ("RecommendationRequest", "PredictionRequest", "ProfileUpload")


def _unbounded(node: Any, where: str, schemas: dict[str, Any], seen: set[str]) -> list[str]:
    """Places in a schema where a string has no maxLength or an array no maxItems."""
    if isinstance(node, list):
        return [
            p for i, v in enumerate(node) for p in _unbounded(v, f"{where}[{i}]", schemas, seen)
        ]
    if not isinstance(node, dict):
        return []
    out: list[str] = []
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            out += _unbounded(schemas[name], name, schemas, seen)
        return out
    bounded = "enum" in node or "const" in node or node.get("format") == "uuid"
    if node.get("type") == "string" and not bounded and "maxLength" not in node:
        out.append(where)
    if node.get("type") == "array" and "maxItems" not in node:
        out.append(where)
    for key, value in node.items():
        if key not in ("enum", "const", "default", "examples"):
            out += _unbounded(value, f"{where}.{key}", schemas, seen)
    return out


def test_every_request_string_and_list_is_bounded_in_the_schema(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    seen: set[str] = set()
    found = [p for name in BODIES for p in _unbounded({"$ref": f"#/{name}"}, name, schemas, seen)]
    assert set(BODIES) <= seen
    params = [
        (path, p)
        for path, ops in doc["paths"].items()
        for op in ops.values()
        for p in op.get("parameters", [])
    ]
    assert params
    for path, p in params:
        found += _unbounded(p["schema"], f"{path} {p['name']}", schemas, seen)
    assert found == []


def test_workload_lists_state_their_own_tighter_bounds(client: TestClient) -> None:
    constraints = client.get("/openapi.json").json()["components"]["schemas"]["Constraints"]
    regions = constraints["properties"]["regions"]["anyOf"][0]
    assert regions["maxItems"] == 64 and regions["items"]["maxLength"] == 64


def test_a_huge_region_is_refused_and_not_stored(client: TestClient) -> None:
    body = workload(constraints={"regions": ["r" * 100_000]})
    problem = assert_problem(client.post("/v1/recommendations", json=body), 422)
    assert problem["errors"][0]["field"] == "constraints.regions.0"


def test_many_bad_items_give_a_capped_error_list_with_the_count(client: TestClient) -> None:
    doc = {"name": "x", "items": [{"bad": i} for i in range(MAX_ITEMS + 1)]}
    errors, total = shape_errors(doc, cap=3)
    assert total == 1 and errors[0]["loc"] == ("body", "items")
    many = {f"k{i}": "v" * (MAX_STRING_CHARS + 1) for i in range(300)}
    errors, total = shape_errors(many, cap=MAX_FIELD_ERRORS)
    assert (len(errors), total) == (MAX_FIELD_ERRORS, 300)


def test_the_answer_to_a_flood_of_invalid_fields_stays_small(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    profile_doc["capabilities"]["skipped"] = [7] * 5_000  # strings expected: 5,000 errors
    r = client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key))
    problem = assert_problem(r, 422)
    assert len(problem["errors"]) == MAX_FIELD_ERRORS
    assert problem["error_count"] == 5_000
    assert "and 4999 more" in problem["detail"]
    assert len(r.content) < 10_000


def test_an_integral_float_is_an_integer(client: TestClient) -> None:
    r = client.post("/v1/recommendations", json=workload(batch_size=8.0, top=2.0))
    assert r.status_code == 201, r.text
    assert len(r.json()["picks"]) <= 2
    problem = assert_problem(client.post("/v1/recommendations", json=workload(batch_size=8.5)), 422)
    assert problem["errors"][0]["field"] == "batch_size"


def test_a_large_body_is_parsed_like_a_small_one(client: TestClient) -> None:
    body = workload(constraints={"regions": [f"region-{i:04d}" + "x" * 40 for i in range(64)]})
    r = client.post("/v1/recommendations", json=body)
    assert len(r.request.content) > 3_000
    assert r.status_code in (201, 422), r.text
    assert r.headers["content-type"].startswith(
        "application/json" if r.status_code == 201 else "application/problem+json"
    )


def test_a_list_filter_is_bounded(client: TestClient) -> None:
    many = [("region", f"r{i}") for i in range(51)]
    assert_problem(client.get("/v1/catalog/offers", params=many), 422, "region")
