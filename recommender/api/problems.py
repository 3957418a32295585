"""RFC 9457 problem details: every error the service answers is ``application/problem+json``.

A problem has ``type`` (a URI naming the kind of problem), ``title``, ``status`` and
``detail``; validation problems add ``errors`` (each failing field with its location and
message), a refused catalog adds ``problems`` (file, line, field, message).
:func:`install_problem_handlers` turns every exception (HTTP errors, validation errors,
:class:`ProblemError`, and anything unexpected) into one; :func:`problem_responses`
declares them in the OpenAPI document.
"""

from __future__ import annotations

import http
import logging
from collections.abc import Iterator, Sequence
from pathlib import PurePath
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

__all__ = [
    "MAX_FIELD_ERRORS",
    "PROBLEM_MEDIA_TYPE",
    "FieldError",
    "Problem",
    "ProblemError",
    "ProblemResponse",
    "install_problem_handlers",
    "is_json_media_type",
    "problem_response",
    "problem_responses",
    "problem_type",
]

PROBLEM_MEDIA_TYPE = "application/problem+json"
# A validation problem lists at most this many failing fields (``error_count`` says how many
# there were): a body with 300,000 bad items must not become a 40 MB answer.
MAX_FIELD_ERRORS = 20
log = logging.getLogger("recommender.api")


def problem_type(slug: str) -> str:
    """A stable, non-dereferenceable URI for a kind of problem (RFC 9457 §3.1.1, tag URI)."""
    return f"tag:instance-recommender,2026:problems/{slug}"


class FieldError(BaseModel):
    """One failing input: where it is (``body``, ``query``, ``path``, ``header``), which
    field (dotted path inside it), and what is wrong."""

    location: str
    field: str
    message: str
    type: str = Field(description="Machine-readable error kind, e.g. missing, greater_than.")


class CatalogProblem(BaseModel):
    file: str = Field(description="The catalog file's name (never its path on the server).")
    line: int | None
    field: str
    message: str
    severity: str
    check: str

    @classmethod
    def public(cls, problem: Any) -> CatalogProblem:
        """A :class:`recommender.catalog.Problem` as answered: the file by name only."""
        fields = problem.as_dict()
        fields["file"] = PurePath(str(fields["file"])).name
        return cls.model_validate(fields)


class Problem(BaseModel):
    """An RFC 9457 problem details object."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[FieldError] | None = Field(
        default=None,
        description=f"Validation problems: the failing fields (the first {MAX_FIELD_ERRORS}).",
        max_length=MAX_FIELD_ERRORS,
    )
    error_count: int | None = Field(
        default=None, description="Validation problems: how many fields failed in all."
    )
    problems: list[CatalogProblem] | None = Field(
        default=None, description="A refused catalog: every problem with its place."
    )
    checks: dict[str, Any] | None = Field(
        default=None, description="/readyz: the state of each readiness check."
    )


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


class ProblemError(Exception):
    """Raise to answer with a problem: ``ProblemError(404, "not-found", "no profile X")``."""

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.detail = detail
        self.title = title or http.HTTPStatus(status).phrase
        self.headers = headers
        self.extensions = extensions


def _respond(
    request: Request,
    problem: Problem,
    headers: dict[str, str] | None = None,
) -> ProblemResponse:
    problem.instance = request.url.path
    return ProblemResponse(
        problem.model_dump(mode="json", exclude_none=True),
        status_code=problem.status,
        headers=headers,
    )


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def problem_response(request: Request, exc: ProblemError) -> ProblemResponse:
    """The response a :class:`ProblemError` stands for."""
    problem = Problem(
        type=problem_type(exc.slug),
        title=exc.title,
        status=exc.status,
        detail=exc.detail,
        **exc.extensions,
    )
    return _respond(request, problem, exc.headers)


async def _on_problem(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, ProblemError)
    return problem_response(request, exc)


def _leaf_routes(routes: Sequence[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(prefix, route) of every route, inside included routers too."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            context = getattr(route, "include_context", None)
            yield from _leaf_routes(inner.routes, prefix + getattr(context, "prefix", ""))
        else:
            yield prefix, route


def _allowed_methods(request: Request) -> str:
    """Every method some route of this path accepts (HEAD wherever GET is)."""
    path = request.url.path
    methods: set[str] = set()
    for prefix, route in _leaf_routes(request.app.router.routes):
        regex = getattr(route, "path_regex", None)
        route_methods = getattr(route, "methods", None)
        if regex is None or not route_methods or not path.startswith(prefix):
            continue
        if regex.match(path[len(prefix) :]):
            methods |= set(route_methods)
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


async def _on_http(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else _phrase(exc.status_code)
    problem = Problem(title=_phrase(exc.status_code), status=exc.status_code, detail=detail)
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 405:
        headers["Allow"] = _allowed_methods(request)
        problem.detail = f"{request.method} is not allowed here; use {headers['Allow']}."
    return _respond(request, problem, headers or None)


def field_errors(raw: Sequence[Any]) -> list[FieldError]:
    out = []
    for err in raw:
        loc = [str(p) for p in err.get("loc", ())]
        location = loc[0] if loc else "body"
        message = str(err.get("msg", "invalid"))
        kind = str(err.get("type", "value_error"))
        if kind == "json_invalid":  # loc is (body, character offset)
            reason = (err.get("ctx") or {}).get("error", "not JSON")
            message = f"{reason} at character {loc[1] if len(loc) > 1 else 0}"
            loc = loc[:1]
        out.append(
            FieldError(
                location=location,
                field=".".join(loc[1:]) or f"(whole {location})",
                message=message,
                type=kind,
            )
        )
    return out


def is_json_media_type(content_type: str | None) -> bool:
    """``application/json`` or any ``application/*+json``, parameters ignored."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def _on_validation(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, RequestValidationError)
    raw = exc.errors()
    total = max(getattr(exc, "total", len(raw)), len(raw))
    errors = field_errors(raw[:MAX_FIELD_ERRORS])
    if any(e.type == "json_invalid" for e in errors):
        problem = Problem(
            type=problem_type("malformed-json"),
            title="Malformed JSON",
            status=400,
            detail="The request body is not valid JSON: "
            + "; ".join(e.message for e in errors if e.type == "json_invalid"),
            errors=[e for e in errors if e.type == "json_invalid"],
        )
        return _respond(request, problem)
    first = errors[0] if errors else None
    summary = f"{first.location} field {first.field!r}: {first.message}" if first else ""
    more = f" (and {total - 1} more)" if total > 1 else ""
    problem = Problem(
        type=problem_type("validation-error"),
        title="Invalid request",
        status=422,
        detail=f"{summary}{more}",
        errors=errors,
        error_count=total,
    )
    return _respond(request, problem)


async def _on_unexpected(request: Request, exc: Exception) -> ProblemResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    problem = Problem(
        type=problem_type("internal-error"),
        title="Internal Server Error",
        status=500,
        detail="The server failed to answer this request; the error is in its log.",
    )
    return _respond(request, problem)


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ProblemError, _on_problem)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(Exception, _on_unexpected)


_DESCRIPTIONS = {
    400: "Malformed request (e.g. the body is not JSON).",
    401: "Missing, malformed, unknown or revoked API key.",
    403: "The API key is valid but not allowed to do this (admin keys only).",
    404: "No such resource.",
    413: "The request body is larger than the service accepts.",
    415: "The body is not sent as JSON (Content-Type: application/json).",
    422: "The request is well-formed but invalid; `errors` names the failing fields.",
    429: "Too many requests from this client address or API key; see Retry-After.",
    503: "The service cannot answer now (no catalog loaded, database unreachable or busy); "
    "see Retry-After.",
}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for these statuses, all ``application/problem+json``."""
    return {
        status: {"model": Problem, "description": _DESCRIPTIONS.get(status, _phrase(status))}
        for status in statuses
    }
