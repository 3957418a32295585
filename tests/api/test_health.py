"""/healthz, /readyz (catalog fresh, database reachable) and /metrics."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from recommender.api import create_app
from recommender.api.app import DATABASE_RETRY_AFTER_S
from recommender.settings import Settings
from tests.api.conftest import assert_problem, workload

CLOSED_PORT_DB = "postgresql+psycopg://nobody@127.0.0.1:9/none"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_healthz_and_readyz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    r = client.get("/readyz")
    assert r.status_code == 200
    checks = r.json()["checks"]
    assert checks["catalog"]["loaded"] and checks["database"]["backend"] == "sqlite"


def test_stale_catalog_is_not_ready(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(catalog_max_age_days=1))) as client:
        body = assert_problem(client.get("/readyz"), 503)
        assert "days old" in body["detail"] and "MAX_AGE_DAYS" in body["detail"]
        assert body["checks"]["catalog"]["age_seconds"] > 86400
        assert client.get("/v1/catalog/status").json()["stale"] is True
        # Still answers: stale prices are reported, not hidden.
        assert client.post("/v1/recommendations", json=workload()).status_code == 201


def test_unreachable_database_is_503_not_500(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings(database_url=CLOSED_PORT_DB, auto_migrate=False)
    with TestClient(create_app(settings)) as client:
        ready = client.get("/readyz")
        body = assert_problem(ready, 503)
        assert "database unreachable" in body["detail"]
        assert body["checks"]["database"]["backend"] == "postgresql"
        assert "127.0.0.1" not in ready.text and "port" not in ready.text  # no hosts
        r = client.get(f"/v1/profiles/{uuid.uuid4()}")
        assert_problem(r, 503)
        assert r.headers["retry-after"] == str(DATABASE_RETRY_AFTER_S)
        assert client.get("/healthz").status_code == 200


def test_metrics_by_route_template_and_status(client: TestClient) -> None:
    client.post("/v1/recommendations", json={**workload(), "objective": "fastest"})
    client.get(f"/v1/profiles/{uuid.uuid4()}")
    client.get(f"/v1/profiles/{uuid.uuid4()}")
    client.get("/no/such/path")
    r = client.get("/metrics")
    assert r.headers["content-type"].startswith("text/plain")
    samples = _samples(r.text)
    key = (("method", "GET"), ("route", "/v1/profiles/{profile_id}"), ("status", "404"))
    assert samples[("recommender_http_requests_total", key)] == 2
    assert samples[("recommender_http_request_duration_seconds_count", key)] == 2
    unmatched = (("method", "GET"), ("route", "<unmatched>"), ("status", "404"))
    assert samples[("recommender_http_requests_total", unmatched)] == 1
    served = ("recommender_recommendations_served_total", (("objective", "fastest"),))
    assert samples[served] == 1
    assert samples[("recommender_catalog_offers", ())] == 18
    assert samples[("recommender_catalog_age_seconds", ())] > 0
    assert samples[("recommender_catalog_reloads_total", (("outcome", "loaded"),))] == 1


def test_each_app_has_its_own_registry(make_settings: Callable[..., Settings]) -> None:
    one, two = create_app(make_settings()), create_app(make_settings())
    with TestClient(one) as a, TestClient(two) as b:
        a.get("/healthz")
        a.get("/healthz")
        b.get("/healthz")
        key = (("method", "GET"), ("route", "/healthz"), ("status", "200"))
        assert _samples(a.get("/metrics").text)[("recommender_http_requests_total", key)] == 2
        assert _samples(b.get("/metrics").text)[("recommender_http_requests_total", key)] == 1
