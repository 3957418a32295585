"""Strict JSON request bodies: a body is accepted only when it matches its published schema.

FastAPI's own body handling validates in pydantic's lax mode, which takes ``"0.5"`` for a
number and ``1`` for ``true`` -- input the OpenAPI document calls invalid. Here the raw bytes
are checked against the shape bounds of :mod:`recommender.api.bounds`, then validated in
pydantic's strict JSON mode; a number with a zero fraction (``23770.0``) is an integer, as
JSON Schema says. Bodies over :data:`OFFLOAD_BYTES` are parsed on a worker thread, never on
the event loop. :func:`request_body_openapi` publishes the same schema for the operation.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from recommender.api.bounds import bound_schema, shape_errors
from recommender.api.offload import compute
from recommender.api.problems import MAX_FIELD_ERRORS, ProblemError, is_json_media_type

__all__ = [
    "OFFLOAD_BYTES",
    "CountedValidationError",
    "bounded_body_schemas",
    "json_body",
    "request_body_openapi",
    "request_body_schemas",
    "validate_body",
]

M = TypeVar("M", bound=BaseModel)
# What a body must contain for _screen to find anything: a NUL escape, NaN, Infinity, or an
# exponent of three digits (1e309 overflows to inf). Most bodies skip the walk.
_MAYBE_UNUSABLE = re.compile(rb"\\u0000|NaN|Infinity|[eE][+]?\d{3}")
REF = "#/components/schemas/{model}"
# Bodies up to this size are parsed on the event loop (a thread hop costs more than the
# parse); larger ones on a worker thread. A typical workload is under 1 KB.
OFFLOAD_BYTES = 16_384
# Where strict JSON mode refuses a float for an integer field.
_INT_ERRORS = frozenset({"int_type", "int_from_float"})


class CountedValidationError(RequestValidationError):
    """A validation error that keeps only the first errors, and how many there were."""

    def __init__(self, errors: Sequence[Any], total: int) -> None:
        super().__init__(errors)
        self.total = total


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
        if len(raw) > OFFLOAD_BYTES:
            return await compute(request, validate_body, model, raw)
        return validate_body(model, raw)

    return Depends(parse)


def validate_body(model: type[M], raw: bytes) -> M:
    """``raw`` as ``model``: shape bounds first, then pydantic's strict JSON mode."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        document = None  # pydantic says where the JSON breaks
    if document is not None:
        errors, total = shape_errors(document, cap=MAX_FIELD_ERRORS)
        if errors:
            raise CountedValidationError(errors, total)
    try:
        parsed = model.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        parsed = _with_integral_floats(model, document, exc)
    unusable = _screen(parsed, ()) if _MAYBE_UNUSABLE.search(raw) else None
    if unusable is not None:
        loc, message = unusable
        raise RequestValidationError([{"type": "value_error", "loc": loc, "msg": message}])
    return parsed


def _with_integral_floats(model: type[M], document: Any, exc: ValidationError) -> M:
    """Validate again with ``23770.0`` read as ``23770`` where an integer was refused; raise
    the (capped) errors when that is not what was wrong."""
    errors = exc.errors(include_url=False, include_input=False)
    fixed = False
    if document is not None and all(e["type"] in _INT_ERRORS for e in errors):
        fixed = all(_integral_to_int(document, e["loc"]) for e in errors)
    if fixed:
        try:
            return model.model_validate_json(json.dumps(document), strict=True)
        except ValidationError as again:
            errors = again.errors(include_url=False, include_input=False)
    raise CountedValidationError(
        [{**e, "loc": ("body", *e["loc"])} for e in errors[:MAX_FIELD_ERRORS]], len(errors)
    ) from None


def _integral_to_int(document: Any, loc: tuple[str | int, ...]) -> bool:
    """Replace the float at ``loc`` by the integer it equals; ``False`` when it is none."""
    parent: Any = None
    node = document
    for part in loc:
        parent = node
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    if parent is None or not isinstance(node, float) or not node.is_integer():
        return False
    parent[loc[-1]] = int(node)
    return True


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


def bounded_body_schemas(models: list[type[BaseModel]]) -> dict[str, Any]:
    """:func:`request_body_schemas` with the service-wide shape bounds written in."""
    bounded: dict[str, Any] = bound_schema(request_body_schemas(models))
    return bounded
