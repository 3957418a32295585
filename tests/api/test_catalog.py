"""GET /v1/catalog/offers filters like `catalog list`; /v1/accelerators; /v1/catalog/status."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from recommender.catalog.query import select_offers
from tests.api.conftest import assert_problem, services_of


def test_offers_cheapest_first_with_total(client: TestClient) -> None:
    body = client.get("/v1/catalog/offers").json()
    prices = [o["price_per_hour"] for o in body["items"]]
    assert prices == sorted(prices)
    assert body["total"] == len(body["items"]) == 18 and body["next_offset"] is None


def test_filters_match_the_cli_selection(client: TestClient, app: FastAPI) -> None:
    catalog = services_of(app).catalogs.catalog
    assert catalog is not None
    query = "cloud=gcp&gpu=A100-80GB&gpu=L4&max_price=50&spot=false&min_gpu_memory=20"
    body = client.get(f"/v1/catalog/offers?{query}").json()
    index = select_offers(
        catalog,
        clouds=["gcp"],
        gpus=["A100-80GB", "L4"],
        max_price=50,
        spot=False,
        min_gpu_memory_gb=20,
    )
    expected = [o.as_dict() for o in catalog.offers.offers(index)]
    assert body["items"] == expected and body["total"] == len(expected) > 0
    assert {o["accelerator"] for o in body["items"]} == {"A100-SXM4-80GB", "L4"}
    assert all(o["pricing"] == "on-demand" for o in body["items"])


def test_region_filter_and_pagination(client: TestClient) -> None:
    first = client.get("/v1/catalog/offers?region=us-central1&limit=3").json()
    assert first["total"] == 8 and len(first["items"]) == 3 and first["next_offset"] == 3
    rest = client.get("/v1/catalog/offers?region=us-central1&limit=10&offset=3").json()
    assert rest["next_offset"] is None
    ids = [(o["instance_type"], o["pricing"]) for o in first["items"] + rest["items"]]
    assert len(set(ids)) == 8
    assert all(o["region"] == "us-central1" for o in rest["items"])


def test_bad_filters_are_422(client: TestClient) -> None:
    body = assert_problem(client.get("/v1/catalog/offers?gpu=H1000"), 422, "gpu")
    assert "did you mean" in body["detail"]
    assert_problem(client.get("/v1/catalog/offers?cloud=ibm"), 422, "cloud.0")
    assert_problem(client.get("/v1/catalog/offers?limit=0"), 422, "limit")
    assert_problem(client.get("/v1/catalog/offers?max_price=-1"), 422, "max_price")


def test_accelerators(client: TestClient) -> None:
    body = client.get("/v1/accelerators").json()
    ids = {a["id"] for a in body}
    assert {"H100-SXM5-80GB", "L4", "A100-SXM4-40GB"} <= ids
    h100 = next(a for a in body if a["id"] == "H100-SXM5-80GB")
    assert h100["memory_gb"] == 80 and h100["peak_tflops"]["bf16"] > 0 and h100["source"]


def test_catalog_status(client: TestClient) -> None:
    body = client.get("/v1/catalog/status").json()
    assert body["loaded"] and body["offers"] == 18 and body["clouds"] == ["aws", "gcp"]
    assert body["prices_as_of"].startswith("2026-01-15")  # the older of the two sources
    assert body["last_reload"]["loaded"] is True and body["stale"] is False
