"""POST /v1/predictions answers like `recommender predict`."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import assert_problem, workload


def test_prediction_for_any_spelling(client: TestClient) -> None:
    r = client.post("/v1/predictions", json={**workload(), "accelerator": "A100-80GB", "gpus": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["accelerator"].startswith("A100") and body["gpus"] == 2
    for key in ("throughput", "step_time_s", "bottleneck", "fits_in_memory"):
        assert key in body
    assert body["throughput"] > 0
    error = body["expected_error"]  # the held-out error of this kind of prediction
    assert error["accuracy_class"] == "training" and error["with_baseline"] is False
    assert 0 < error["median_pct"] <= error["mean_pct"] and error["scored"] > 0


def test_more_gpus_more_throughput(client: TestClient) -> None:
    def throughput(gpus: int) -> float:
        r = client.post("/v1/predictions", json={**workload(), "accelerator": "H100", "gpus": gpus})
        value: float = r.json()["throughput"]
        return value

    assert throughput(8) > throughput(1)


def test_unknown_accelerator_is_422_naming_the_field(client: TestClient) -> None:
    r = client.post("/v1/predictions", json={**workload(), "accelerator": "H1000"})
    body = assert_problem(r, 422, "accelerator")
    assert body["type"].endswith("unknown-accelerator")
    assert "did you mean" in body["errors"][0]["message"]


def test_missing_accelerator_and_bad_gpus(client: TestClient) -> None:
    assert_problem(client.post("/v1/predictions", json=workload()), 422, "accelerator")
    r = client.post("/v1/predictions", json={**workload(), "accelerator": "L4", "gpus": 0})
    assert_problem(r, 422, "gpus")


def test_a_model_named_from_the_registry_is_predicted(client: TestClient) -> None:
    named = {"name": "llama-3.1-8b", "sequence_length": 2048}
    body = {**workload(model=named, batch_size=1), "accelerator": "A100-80GB", "gpus": 8}
    r = client.post("/v1/predictions", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["throughput"] > 0
