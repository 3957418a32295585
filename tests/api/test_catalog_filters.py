"""GET /v1/catalog/offers: the GPU-count and purchase filters; unknown parameters are 422."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import assert_problem


def test_gpus_keeps_instances_with_exactly_that_many(client: TestClient) -> None:
    every = client.get("/v1/catalog/offers?limit=1000").json()["items"]
    counts = {o["gpus"] for o in every}
    assert len(counts) > 1
    n = max(counts)
    body = client.get(f"/v1/catalog/offers?gpus={n}&limit=1000").json()
    assert body["total"] == sum(o["gpus"] == n for o in every) > 0
    assert {o["gpus"] for o in body["items"]} == {n}


def test_purchase_filter_and_field(client: TestClient) -> None:
    body = client.get("/v1/catalog/offers?purchase=spot&limit=1000").json()
    assert body["total"] > 0
    assert {(o["purchase"], o["pricing"]) for o in body["items"]} == {("spot", "spot")}


def test_an_unknown_query_parameter_is_a_422_naming_it(client: TestClient) -> None:
    r = client.get("/v1/catalog/offers?gpu_count=8&cloud=gcp")
    body = assert_problem(r, 422, "gpu_count")
    assert "gpus" in body["detail"]
    assert_problem(client.get("/v1/catalog/offers?gpus=0"), 422, "gpus")
