"""Bounds on the shape of every request body: string length, list length, keys per object.

A field of the workload contract states its own bounds (``Constraints.regions`` and the
like); every other string, list and mapping of a request body gets the service-wide bounds
below. :func:`shape_errors` checks a parsed JSON document against them in one pass (before
pydantic builds anything, so 300,000 list items cost one walk, not 300,000 error objects),
and :func:`bound_schema` writes the same bounds into the published JSON Schema, so the
OpenAPI document states what the service enforces.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_PROPERTIES",
    "MAX_STRING_CHARS",
    "ShapeError",
    "bound_schema",
    "shape_errors",
]

# Service-wide bounds (fields of the workload contract state tighter ones). The probe samples
# GPU utilisation every 0.1 s (probes/nvml.py), so a 15-minute profile holds 9,000 samples.
MAX_ITEMS = 10_000
# Hostnames are at most 253 characters (RFC 1035); messages and method notes are sentences.
MAX_STRING_CHARS = 4_096
MAX_PROPERTIES = 1_000
# The deepest request document (a profile) nests 5 levels; anything past this is an attack.
MAX_DEPTH = 32

ShapeError = dict[str, Any]  # pydantic's error shape: type, loc, msg, ctx


def _too_long(loc: tuple[Any, ...], size: int, limit: int, what: str) -> ShapeError:
    kinds = {"string": "string_too_long", "list": "too_long", "object": "too_long"}
    units = {"string": "characters", "list": "items", "object": "keys"}
    return {
        "type": kinds[what],
        "loc": loc,
        "msg": f"{what.capitalize()} should have at most {limit} {units[what]}, not {size}",
        "ctx": {"max_length": limit, "actual_length": size},
    }


def shape_errors(document: Any, *, cap: int) -> tuple[list[ShapeError], int]:
    """The first ``cap`` bound violations in ``document`` (locations start at ``body``), and
    how many there are in all. Iterative: a deeply nested document cannot exhaust the stack."""
    found: list[ShapeError] = []
    total = 0
    stack: list[tuple[Any, tuple[Any, ...]]] = [(document, ("body",))]
    while stack:
        value, loc = stack.pop()
        error: ShapeError | None = None
        children: Any = ()
        if isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                error = _too_long(loc, len(value), MAX_STRING_CHARS, "string")
        elif isinstance(value, list):
            if len(value) > MAX_ITEMS:
                error = _too_long(loc, len(value), MAX_ITEMS, "list")
            else:
                children = enumerate(value)
        elif isinstance(value, dict):
            if len(value) > MAX_PROPERTIES:
                error = _too_long(loc, len(value), MAX_PROPERTIES, "object")
            else:
                children = value.items()
        if error is None and children and len(loc) > MAX_DEPTH:
            error = {
                "type": "too_deep",
                "loc": loc,
                "msg": f"nested deeper than {MAX_DEPTH} levels",
            }
            children = ()
        if error is not None:
            total += 1
            if len(found) < cap:
                found.append(error)
            continue
        for key, item in children:
            if isinstance(key, str) and len(key) > MAX_STRING_CHARS:
                total += 1
                if len(found) < cap:
                    found.append(_too_long((*loc, key[:40]), len(key), MAX_STRING_CHARS, "string"))
                continue
            stack.append((item, (*loc, key)))
    return found, total


def _bound_node(node: dict[str, Any]) -> None:
    kind = node.get("type")
    if "enum" in node or "const" in node:
        return
    if kind == "string":
        node.setdefault("maxLength", MAX_STRING_CHARS)
    elif kind == "array":
        node.setdefault("maxItems", MAX_ITEMS)
    elif kind == "object" and "additionalProperties" in node:
        node.setdefault("maxProperties", MAX_PROPERTIES)
        node.setdefault("propertyNames", {"maxLength": MAX_STRING_CHARS})


def bound_schema(node: Any) -> Any:
    """``node`` (a JSON Schema, changed in place) with the service-wide bounds on every string,
    array and free-form object that states none of its own."""
    if isinstance(node, dict):
        _bound_node(node)
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                bound_schema(value)
    elif isinstance(node, list):
        for value in node:
            bound_schema(value)
    return node
