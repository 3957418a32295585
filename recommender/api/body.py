"""Strict JSON request bodies: a body is accepted only when it matches its published schema.

FastAPI's own body handling validates in pydantic's lax mode, which takes ``"0.5"`` for a
number and ``1`` for ``true`` -- input the OpenAPI document calls invalid. Here the raw bytes
are validated in pydantic's strict JSON mode (one pass, no intermediate ``json.loads``), and
:func:`request_body_openapi` publishes the same schema for the operation.
"""

from __future__ import annotations

import math
import re
from typing import Any, TypeVar

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from recommender.api.problems import ProblemError, is_json_media_type

__all__ = ["json_body", "request_body_openapi", "request_body_schemas"]

M = TypeVar("M", bound=BaseModel)
# What a body must contain for _screen to find anything: a NUL escape, NaN, Infinity, or an
# exponent of three digits (1e309 overflows to inf). Most bodies skip the walk.
_MAYBE_UNUSABLE = re.compile(rb"\\u0000|NaN|Infinity|[eE][+]?\d{3}")
REF = "#/components/schemas/{model}"


def json_body(model: type[M]) -> Any:
    """A dependency that reads the body and validates it as ``model`` (strict JSON mode)."""

    async def parse(request: Request) -> M:
        raw = await request.body()
        if raw and not is_json_media_type(request.headers.get("content-type")):
            raise ProblemError(
                415,
                "unsupported-media-type",
                "Send the body as JSON with Content-Type: application/json.",
            )
        if not raw:
            raise RequestValidationError(
                [{"type": "missing", "loc": ("body",), "msg": "A JSON body is required"}]
            )
        try:
            parsed = model.model_validate_json(raw, strict=True)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
            raise RequestValidationError(
                [{**e, "loc": ("body", *e["loc"])} for e in errors]
            ) from None
        unusable = _screen(parsed, ()) if _MAYBE_UNUSABLE.search(raw) else None
        if unusable is not None:
            loc, message = unusable
            raise RequestValidationError([{"type": "value_error", "loc": loc, "msg": message}])
        return parsed

    return Depends(parse)


def _screen(value: object, loc: tuple[str | int, ...]) -> tuple[tuple[Any, ...], str] | None:
    """The first value no database or JSON answer can hold: a string with NUL (PostgreSQL
    refuses it) or a non-finite number (``Infinity``, ``NaN``, ``1e999``)."""
    if isinstance(value, str):
        return (("body", *loc), "contains a NUL character (\\u0000)") if "\x00" in value else None
    if isinstance(value, float):
        return None if math.isfinite(value) else (("body", *loc), f"must be finite, got {value}")
    if isinstance(value, BaseModel):
        items: Any = ((name, getattr(value, name)) for name in type(value).model_fields)
    elif isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if isinstance(key, str) and "\x00" in key:
            return ("body", *loc, key), "key contains a NUL character (\\u0000)"
        found = _screen(item, (*loc, key))
        if found is not None:
            return found
    return None


def request_body_openapi(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` declaring ``model`` as the operation's JSON request body."""
    ref = REF.format(model=model.__name__)
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": ref}}},
        }
    }


def request_body_schemas(models: list[type[BaseModel]]) -> dict[str, Any]:
    """Component schemas (validation mode) of ``models`` and everything they refer to."""
    _, top = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    schemas: dict[str, Any] = top.get("$defs", {})
    return schemas
