"""The HTTP API takes the multi-node constraints and answers with node counts."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import workload


def test_multi_node_fields_are_in_the_schema_and_the_answer(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert {"nodes", "total_gpus"} <= set(schema["Pick"]["properties"])
    limits = {"max_nodes": 8, "network": "ethernet", "multi_node_spot": False}
    r = client.post("/v1/recommendations", json={**workload(constraints=limits), "top": 2})
    assert r.status_code == 201, r.text
    for pick in r.json()["picks"]:  # one instance holds BERT: single-node picks
        assert pick["nodes"] == 1 and pick["total_gpus"] == pick["gpus"]
    bad = client.post("/v1/recommendations", json=workload(constraints={"max_nodes": 0}))
    assert bad.status_code == 422 and "max_nodes" in bad.text


def test_a_prediction_takes_a_node_count(client: TestClient) -> None:
    body = {**workload(), "accelerator": "A100-SXM4-40GB", "gpus": 8, "nodes": 2}
    r = client.post("/v1/predictions", json=body)
    assert r.status_code in (200, 201), r.text
    assert r.json()["nodes"] == 2 and r.json()["total_gpus"] == 16
    assert client.post("/v1/predictions", json={**body, "nodes": 0}).status_code == 422
