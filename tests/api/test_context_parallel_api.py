"""Context parallelism over the API: a split the sequence cannot take is a 422 naming the
field; a long-context job gets a plan that says how its sequences are split."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import assert_problem, workload


def _long(**training: Any) -> dict[str, Any]:
    return workload(
        name="llama8b-64k",
        model={"name": "llama-3.1-8b", "sequence_length": 65536},
        batch_size=1,
        training={"global_batch": 8, **training},
    )


def test_a_degree_that_does_not_divide_the_sequence_is_a_422(client: TestClient) -> None:
    problem = assert_problem(
        client.post("/v1/recommendations", json=_long(context_parallel=3)), 422
    )
    assert "does not divide" in str(problem)


def test_a_long_context_plan_says_how_each_sequence_is_split(client: TestClient) -> None:
    r = client.post("/v1/recommendations", json=_long())
    assert r.status_code == 201, r.text
    picks = r.json()["picks"]
    assert any(pick["plan"]["context_parallel"] > 1 for pick in picks)
    for pick in picks:
        assert pick["plan"]["context_parallel"] >= 1
        split = pick["plan"]["context_parallel"] > 1
        assert split == any("context parallel" in line for line in pick["why"])
