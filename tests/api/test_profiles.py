"""/v1/profiles: probe uploads (API key), one profile, filtered and paginated lists."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import assert_problem, bearer


def _variant(doc: dict[str, Any], host: str, acc: str, name: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["machine"]["hostname"] = host
    out["machine"]["accelerator"] = acc
    out["workload"]["name"] = name
    return out


def test_upload_then_read_back(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    r = client.post("/v1/profiles", json=profile_doc, headers=bearer(api_key))
    assert r.status_code == 201, r.text
    summary = r.json()
    assert r.headers["location"] == f"/v1/profiles/{summary['id']}"
    assert summary["hostname"] == "train-a100-1" and summary["instance_type"] == "a2-highgpu-1g"
    assert summary["accelerator"] == "A100-SXM4-40GB" and summary["workload"] == "resnet50-train"
    assert summary["bound"] == "transfer-bound" and summary["cloud"] == "gcp"
    stored = client.get(r.headers["location"]).json()
    assert stored["profile"]["workload"]["throughput_samples_per_s"] == 533.3
    assert stored["profile"]["diagnoses"][0]["code"] == "loader-starved"
    assert stored["id"] == summary["id"]


def test_fields_from_a_newer_probe_are_accepted(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    doc = {**profile_doc, "new_section": {"x": 1}}
    assert client.post("/v1/profiles", json=doc, headers=bearer(api_key)).status_code == 201


def test_invalid_profile_names_the_field(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    doc = copy.deepcopy(profile_doc)
    doc["machine"]["vcpus"] = 0
    del doc["probe_version"]
    r = client.post("/v1/profiles", json=doc, headers=bearer(api_key))
    assert_problem(r, 422, "machine.vcpus", "probe_version")


def test_unknown_profile_is_404(client: TestClient) -> None:
    assert_problem(client.get(f"/v1/profiles/{uuid.uuid4()}"), 404)


def test_list_filters_and_pages(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    docs = [
        _variant(profile_doc, "vm-a", "A100-SXM4-40GB", "resnet"),
        _variant(profile_doc, "vm-b", "H100-SXM5-80GB", "resnet"),
        _variant(profile_doc, "vm-b", "H100-SXM5-80GB", "llama"),
    ]
    for doc in docs:
        assert client.post("/v1/profiles", json=doc, headers=bearer(api_key)).status_code == 201

    def hosts(query: str) -> list[str]:
        body = client.get(f"/v1/profiles?{query}").json()
        assert body["total"] == len(body["items"]) or "limit" in query
        return sorted(p["hostname"] for p in body["items"])

    assert hosts("") == ["vm-a", "vm-b", "vm-b"]
    assert hosts("machine=VM-B") == ["vm-b", "vm-b"]
    assert hosts("machine=a2-highgpu-1g") == ["vm-a", "vm-b", "vm-b"]  # instance type
    assert hosts("accelerator=h100") == ["vm-b", "vm-b"]  # any spelling resolves
    assert hosts("accelerator=NVIDIA H100 80GB HBM3") == ["vm-b", "vm-b"]
    assert hosts("workload=resnet") == ["vm-a", "vm-b"]
    assert hosts("workload=resnet&accelerator=H100") == ["vm-b"]
    assert hosts("accelerator=T4") == []
    page = client.get("/v1/profiles?limit=2").json()
    assert page["total"] == 3 and len(page["items"]) == 2 and page["next_offset"] == 2
    newest_first = [p["workload"] for p in page["items"]]
    assert newest_first == ["llama", "resnet"]
    assert_problem(client.get("/v1/profiles?limit=0"), 422, "limit")
    assert_problem(client.get("/v1/profiles?machine=a%00b"), 422, "machine")


def test_text_that_cannot_be_stored_is_422(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    doc = _variant(profile_doc, "vm\x00x", "L4", "w")
    r = client.post("/v1/profiles", json=doc, headers=bearer(api_key))
    body = assert_problem(r, 422, "machine.hostname")
    assert "NUL" in body["detail"]


def test_very_long_index_values_are_clipped_not_refused(
    client: TestClient, api_key: str, profile_doc: dict[str, Any]
) -> None:
    doc = _variant(profile_doc, "h" * 1000, "x" * 500, "w" * 500)
    r = client.post("/v1/profiles", json=doc, headers=bearer(api_key))
    assert r.status_code == 201
    assert len(r.json()["hostname"]) == 255
    stored = client.get(r.headers["location"]).json()
    assert stored["profile"]["machine"]["hostname"] == "h" * 1000
