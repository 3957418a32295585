"""POST /v1/recommendations answers like `recommender recommend`, stores it, and shares it."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from recommender.api.deps import Services
from recommender.scoring import recommend
from recommender.workload import Workload
from tests.api.conftest import assert_problem, bearer, workload


def test_recommendation_has_picks_and_is_stored(client: TestClient, app: FastAPI) -> None:
    r = client.post("/v1/recommendations", json={**workload(), "objective": "cheapest", "top": 3})
    assert r.status_code == 201, r.text
    body = r.json()
    assert r.headers["location"] == f"/v1/recommendations/{body['id']}"
    assert body["objective"] == "cheapest" and body["workload"] == "bert-large-finetune"
    assert 1 <= len(body["picks"]) <= 3
    pick = body["picks"][0]
    for key in ("rank", "cloud", "region", "instance_type", "accelerator", "gpus", "pricing"):
        assert key in pick
    assert pick["predicted"]["bottleneck"] and pick["cost"]["total_usd"] > 0 and pick["why"]
    assert body["request"] == {**workload(), "objective": "cheapest", "top": 3}

    again = client.get(r.headers["location"])
    assert again.status_code == 200
    assert again.json() == body


def test_answer_matches_the_library(client: TestClient, app: FastAPI) -> None:
    services: Services = app.state.services
    catalog = services.catalogs.catalog
    assert catalog is not None
    expected = recommend(Workload.model_validate(workload()), catalog=catalog, top=2)
    body = client.post("/v1/recommendations", json={**workload(), "top": 2}).json()
    picks = [(p["cloud"], p["region"], p["instance_type"], p["pricing"]) for p in body["picks"]]
    want = [(p.cloud, p.region, p.instance_type, p.pricing) for p in expected.picks]
    assert picks == want
    assert body["objective"] == "balanced"


def test_unknown_id_is_404_and_bad_id_422(client: TestClient) -> None:
    assert_problem(client.get(f"/v1/recommendations/{uuid.uuid4()}"), 404)
    assert_problem(client.get("/v1/recommendations/not-a-uuid"), 422, "recommendation_id")


def test_invalid_workload_names_every_field(client: TestClient) -> None:
    bad = workload(kind="training-ish", batch_size=0)
    body = assert_problem(client.post("/v1/recommendations", json=bad), 422, "kind", "batch_size")
    assert body["type"].endswith("validation-error")
    assert all(e["location"] == "body" for e in body["errors"])


def test_cross_field_rule_is_422(client: TestClient) -> None:
    bad = workload(constraints={"min_gpus": 4, "max_gpus": 2})
    body = assert_problem(client.post("/v1/recommendations", json=bad), 422)
    assert "exceeds max_gpus" in body["detail"]


def test_top_and_objective_are_checked(client: TestClient) -> None:
    assert_problem(client.post("/v1/recommendations", json={**workload(), "top": 0}), 422, "top")
    r = client.post("/v1/recommendations", json={**workload(), "objective": "best"})
    assert_problem(r, 422, "objective")


def test_unknown_accelerator_in_constraints_names_the_field(client: TestClient) -> None:
    bad = workload(constraints={"accelerators": ["L4", "H1000"]})
    body = assert_problem(
        client.post("/v1/recommendations", json=bad), 422, "constraints.accelerators[1]"
    )
    assert "H1000" in body["detail"] and "did you mean" in body["detail"]


def test_malformed_json_is_400(client: TestClient) -> None:
    r = client.post(
        "/v1/recommendations", content=b'{"name": ', headers={"content-type": "application/json"}
    )
    body = assert_problem(r, 400)
    assert "not valid JSON" in body["detail"]


def test_body_not_sent_as_json_is_415(client: TestClient) -> None:
    headers = {"content-type": "text/plain"}
    r = client.post("/v1/recommendations", content=b"name=x", headers=headers)
    assert_problem(r, 415)


def test_body_over_the_limit_is_413(make_settings: Any) -> None:
    from recommender.api import create_app

    app = create_app(make_settings(max_body_bytes=2048))
    with TestClient(app) as client:
        big = workload(name="x" * 100, notes="y" * 5000)
        assert_problem(client.post("/v1/recommendations", json=big), 413)

        def chunks() -> Any:  # no Content-Length: counted while read
            for _ in range(10):
                yield b" " * 1000

        r = client.post(
            "/v1/recommendations", content=chunks(), headers={"content-type": "application/json"}
        )
        assert_problem(r, 413)
        assert client.post("/v1/recommendations", json=workload()).status_code == 201


def test_nul_and_non_finite_values_are_refused(client: TestClient) -> None:
    body = assert_problem(client.post("/v1/recommendations", json=workload(name="a\x00b")), 422)
    assert body["errors"][0]["field"] == "name" and "NUL" in body["detail"]
    r = client.post(
        "/v1/recommendations",
        content=b'{"name": "n", "kind": "inference", "model": '
        b'{"parameters": 1e9, "flops_per_sample": 1e9}, "targets": {"budget_usd": Infinity}}',
        headers={"content-type": "application/json"},
    )
    # (model.parameters now has an upper bound, which refuses Infinity before this check)
    body = assert_problem(r, 422, "targets.budget_usd")
    assert "finite" in body["detail"]


def test_profile_id_is_used_and_kept(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    """The stored profile measured a ResNet-50 (12.3 GFLOPs a sample), not this BERT (780): it
    lends its A100's measured figures and does not calibrate, and the answer says so."""
    up = client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key))
    profile_id = up.json()["id"]
    r = client.post("/v1/recommendations", json={**workload(), "profile_id": profile_id})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["profile_id"] == profile_id
    (note,) = [a for a in body["advice"] if "probe profile" in a]
    assert "did not calibrate bert-large-finetune" in note and "A100-SXM4-40GB" in note
    assert not any("calibrated with your" in w for p in body["picks"] for w in p["why"])
    stored = client.get(r.headers["location"]).json()
    assert stored["profile_id"] == profile_id and stored["request"]["profile_id"] == profile_id


def test_a_profile_of_the_workload_itself_calibrates(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    own = {**profile_doc}
    own["workload"] = {
        **profile_doc["workload"],
        "name": "train.py:bert",
        "flops_per_sample": 7.8e11,
    }
    up = client.post("/v1/profiles", json=own, headers=bearer(api_key))
    r = client.post("/v1/recommendations", json={**workload(), "profile_id": up.json()["id"]})
    assert r.status_code == 201, r.text
    body = r.json()
    assert not any("probe profile given" in a for a in body["advice"])
    assert any("calibrated with your probe profile" in w for p in body["picks"] for w in p["why"])


def test_unknown_profile_id_is_422_naming_it(client: TestClient) -> None:
    r = client.post("/v1/recommendations", json={**workload(), "profile_id": str(uuid.uuid4())})
    assert_problem(r, 422, "profile_id")


def test_a_model_named_from_the_registry_is_accepted(client: TestClient) -> None:
    """The request's model resolves by name once; the workload taken from it is not
    re-validated as a model giving both a name and an architecture (that was a 500)."""
    named = {"name": "llama-3.1-8b", "sequence_length": 2048}
    r = client.post("/v1/recommendations", json=workload(model=named, batch_size=1))
    assert r.status_code == 201, r.text
    assert r.json()["request"]["model"] == named
