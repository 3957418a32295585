"""Rate limits: per client address and per API key, answered 429 with Retry-After."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from recommender.api import create_app
from recommender.settings import Settings
from tests.api.conftest import assert_problem, bearer, mint, workload


def test_an_address_over_its_limit_gets_429_with_retry_after(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(rate_limit_per_address="3/minute"))
    with TestClient(app) as client:
        answers = [client.get("/v1/accelerators").status_code for _ in range(3)]
        assert answers == [200, 200, 200]
        r = client.post("/v1/recommendations", json=workload())
        problem = assert_problem(r, 429)
        assert (
            problem["type"].endswith("rate-limited")
            and "RATE_LIMIT_PER_ADDRESS" in (problem["detail"])
        )
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert client.get("/healthz").status_code == 200  # operations are never limited
        other = TestClient(app, client=("192.0.2.7", 50000))
        assert other.get("/v1/accelerators").status_code == 200


def test_a_key_over_its_limit_gets_429_whatever_its_address(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(rate_limit_per_key="2/minute", rate_limit_per_address=""))
    with TestClient(app) as client:
        key = mint(app)
        for host in ("192.0.2.1", "192.0.2.2"):
            moved = TestClient(app, client=(host, 1))
            assert moved.get("/v1/accelerators", headers=bearer(key)).status_code == 200
        third = TestClient(app, client=("192.0.2.3", 1))
        assert_problem(third.get("/v1/accelerators", headers=bearer(key)), 429)
        assert client.get("/v1/accelerators").status_code == 200  # no key: not this limit


def test_a_bad_limit_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="rate_limit_per_key"):
        Settings(rate_limit_per_key="lots")
