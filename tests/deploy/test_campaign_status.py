"""``recommender campaign status``: which candidates have posted profiles, asked of a real
service (the app on a fresh SQLite file) through the command's own HTTP client."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from recommender.api import create_app
from recommender.cli import app, campaign
from recommender.settings import Settings
from recommender.store import create_key
from tests.deploy.conftest import REPO

PROFILE = REPO / "tests" / "api" / "data" / "profile.json"
runner = CliRunner()


@pytest.fixture
def service(tmp_path: Path) -> Iterator[TestClient]:
    api = create_app(Settings(database_url=f"sqlite:///{tmp_path}/r.db", catalog_poll_seconds=0))
    with TestClient(api) as client:
        yield client


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    out = tmp_path / "plan"
    args = ["probe-plan", str(REPO / "examples" / "llm-finetune.yaml"), "--top", "2"]
    result = runner.invoke(app, [*args, "--post-to", "http://testserver", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out / "campaign.json"


def _post(client: TestClient, instance_type: str, cloud: str, workload: str | None) -> str:
    services = client.app.state.services  # type: ignore[attr-defined]
    with services.db.session() as session:
        key = create_key(session, "probes").key
    doc: dict[str, Any] = json.loads(PROFILE.read_text())
    doc["machine"] |= {"instance_type": instance_type, "cloud": cloud}
    if workload is None:
        doc["workload"] = None  # the probe could not run it
    else:
        doc["workload"]["name"] = workload
    response = client.post("/v1/profiles", json=doc, headers={"X-API-Key": key})
    assert response.status_code == 201, response.text
    profile_id: str = response.json()["id"]
    return profile_id


def _status(monkeypatch: pytest.MonkeyPatch, client: httpx.Client, plan: Path, *args: str) -> Any:
    seen: list[tuple[str, str | None]] = []

    def connect(base_url: str, api_key: str | None) -> Any:
        seen.append((base_url, api_key))
        return contextlib.nullcontext(client)

    monkeypatch.setattr(campaign, "_client", connect)
    result = runner.invoke(app, ["campaign", "status", str(plan), *args])
    assert seen == [("http://testserver", None)]
    return result


def test_reports_the_candidates_that_posted(
    service: TestClient, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned = json.loads(plan.read_text())
    first, second = planned["candidates"]
    posted = _post(service, first["instance_type"], first["cloud"], planned["probe_workload"])
    _post(service, second["instance_type"], first["cloud"], "reference:llm-decode")  # other
    result = _status(monkeypatch, service, plan, "--format", "json")
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert status["campaign"] == planned["id"] and status["reported"] == 1
    one, two = status["candidates"]
    assert (one["instance_type"], one["reported"], one["profiles"]) == (
        first["instance_type"],
        True,
        1,
    )
    assert one["latest_profile_id"] == posted
    assert (two["reported"], two["profiles"], two["latest_profile_id"]) == (False, 0, None)


def test_table_says_how_many_reported(
    service: TestClient, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _status(monkeypatch, service, plan)
    assert result.exit_code == 0, result.output
    assert "0 of 2 reported" in result.stdout and "waiting" in result.stdout


def test_a_profile_without_the_workload_is_counted_apart(
    service: TestClient, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = json.loads(plan.read_text())["candidates"][0]
    _post(service, first["instance_type"], first["cloud"], None)
    result = _status(monkeypatch, service, plan, "--format", "json")
    assert result.exit_code == 0, result.output
    one = json.loads(result.stdout)["candidates"][0]
    assert (one["reported"], one["profiles"], one["without_workload"]) == (False, 0, 1)
    table = _status(monkeypatch, service, plan)
    # the table may wrap the cell ("1 without" / "workload") to fit the terminal
    assert "1 without" in table.stdout.split("waiting")[0]


def test_profiles_from_before_the_campaign_do_not_count(
    service: TestClient, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned = json.loads(plan.read_text())
    first = planned["candidates"][0]
    _post(service, first["instance_type"], first["cloud"], planned["probe_workload"])
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    plan.write_text(json.dumps(planned | {"created_at": later.isoformat()}))
    result = _status(monkeypatch, service, plan, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["reported"] == 0


def test_a_refusing_service_is_an_error(tmp_path: Path, plan: Path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"status": 401, "detail": "an API key is required"})

    client = httpx.Client(base_url="http://testserver", transport=httpx.MockTransport(refuse))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(campaign, "_client", lambda url, key: contextlib.nullcontext(client))
        result = runner.invoke(app, ["campaign", "status", str(plan)])
    assert result.exit_code == 1
    assert "HTTP 401" in result.stderr and "--api-key" in result.stderr


def test_not_a_campaign_file(tmp_path: Path) -> None:
    bad = tmp_path / "campaign.json"
    bad.write_text('{"id": "x"}')
    result = runner.invoke(app, ["campaign", "status", str(bad)])
    assert result.exit_code == 2
    assert "is not a campaign file" in result.stderr
