"""POSTing a profile to the service, against httpx.MockTransport."""

from __future__ import annotations

import json

import httpx
import pytest

from probes.upload import PostError, endpoint_url, post_profile
from recommender.profile import Profile
from tests.test_profile import make_profile


def _transport(status: int, body: object, seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handler)


def test_the_profile_is_posted_with_the_api_key() -> None:
    seen: list[httpx.Request] = []
    result = post_profile(
        make_profile(),
        "https://recommender.example.com",
        "k-123",
        transport=_transport(201, {"id": "p-1"}, seen),
    )
    (request,) = seen
    assert request.method == "POST"
    assert str(request.url) == "https://recommender.example.com/v1/profiles"
    assert request.headers["X-API-Key"] == "k-123"
    assert request.headers["Content-Type"] == "application/json"
    assert Profile.model_validate_json(request.content) == make_profile()
    assert (result.status, result.body) == (201, {"id": "p-1"})


def test_an_address_with_a_path_is_used_as_given() -> None:
    assert endpoint_url("http://h:8000/") == "http://h:8000/v1/profiles"
    assert endpoint_url("http://h:8000/api/v1/profiles") == "http://h:8000/api/v1/profiles"
    with pytest.raises(PostError, match="http:// or https://"):
        endpoint_url("ftp://h/x")


def test_a_refused_key_says_so() -> None:
    problem = {"type": "about:blank", "title": "Unauthorized", "detail": "unknown API key"}
    with pytest.raises(PostError, match=r"refused the API key \(HTTP 401: unknown API key\)"):
        post_profile(make_profile(), "http://svc", "bad", transport=_transport(401, problem, []))
    with pytest.raises(PostError, match="pass --api-key"):
        post_profile(make_profile(), "http://svc", None, transport=_transport(401, problem, []))


def test_a_rejected_profile_shows_the_service_detail() -> None:
    detail = {"detail": [{"loc": ["body", "machine"], "msg": "Field required"}]}
    with pytest.raises(PostError, match=r"rejected the profile \(HTTP 422\).*Field required"):
        post_profile(make_profile(), "http://svc", "k", transport=_transport(422, detail, []))


def test_an_unreachable_service() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    with pytest.raises(PostError, match=r"cannot reach http://svc/v1/profiles.*Connection refused"):
        post_profile(make_profile(), "http://svc", "k", transport=httpx.MockTransport(refuse))


def test_a_non_json_success_body_is_kept_as_text() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(202, text="queued"))
    result = post_profile(make_profile(), "http://svc", "k", transport=transport)
    assert (result.status, result.body) == (202, "queued")
    assert json.loads(make_profile().to_json())["schema_version"] == 1
