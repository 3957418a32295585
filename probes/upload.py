"""Send a profile to the service: ``POST /v1/profiles`` with the ``X-API-Key`` header.

A bare service address (``https://host:8000``) gets ``/v1/profiles`` appended; an address
with a path is used as given. Failures become a :class:`PostError` whose message says what
went wrong (unreachable, refused key, rejected profile) and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from recommender.profile import Profile

__all__ = ["ENDPOINT", "PostError", "PostResult", "endpoint_url", "post_profile"]

ENDPOINT = "/v1/profiles"


class PostError(RuntimeError):
    """The profile did not reach the service; the message names the cause."""


@dataclass(frozen=True)
class PostResult:
    url: str
    status: int
    body: Any


def endpoint_url(url: str) -> str:
    """``url`` itself, or the service's profile endpoint when ``url`` has no path."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise PostError(f"--post-to {url!r} is not a URL: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise PostError(f"--post-to {url!r} must be an http:// or https:// address")
    if parsed.path in ("", "/"):
        return str(parsed.copy_with(path=ENDPOINT))
    return url


def _detail(response: httpx.Response) -> str:
    """A problem+json ``detail`` / ``title``, FastAPI's ``detail``, or the start of the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if isinstance(body, dict):
        detail = body.get("detail") or body.get("title")
        if detail:
            return str(detail)[:300]
    return str(body)[:300]


def post_profile(
    profile: Profile,
    url: str,
    api_key: str | None,
    *,
    timeout_s: float = 30.0,
    transport: httpx.BaseTransport | None = None,
) -> PostResult:
    """POST the profile JSON; return the response or raise :class:`PostError`."""
    target = endpoint_url(url)
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["X-API-Key"] = api_key
    options: dict[str, Any] = {"timeout": timeout_s}
    if transport is not None:
        options["transport"] = transport
    try:
        with httpx.Client(**options) as client:
            response = client.post(target, content=profile.to_json(), headers=headers)
    except httpx.TimeoutException as exc:
        raise PostError(f"{target}: no answer within {timeout_s:g} s ({exc})") from exc
    except httpx.HTTPError as exc:
        raise PostError(f"cannot reach {target}: {exc}; is the service running?") from exc
    status = response.status_code
    if status in (401, 403):
        hint = "pass --api-key" if not api_key else "check --api-key (or RECOMMENDER_API_KEY)"
        raise PostError(
            f"{target} refused the API key (HTTP {status}: {_detail(response)}); {hint}"
        )
    if status >= 400:
        raise PostError(f"{target} rejected the profile (HTTP {status}): {_detail(response)}")
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return PostResult(target, status, body)
