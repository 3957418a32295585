"""Reading a workload file as strictly as the HTTP API reads a request body.

The API validates bodies in pydantic's strict JSON mode; a file goes through the same
checks, so that a workload the service refuses is not accepted on the command line:

- size: a file over the API's body limit is refused before it is parsed;
- encoding: UTF-8 only (a BOM is allowed); the first undecodable byte is named by offset;
- syntax: ``.json`` files (or text starting with ``{``) are parsed as JSON, so a trailing
  comma, ``NaN`` or a duplicate key is an error; other files as YAML, with YAML 1.2 numbers
  (``3.4e8`` is a number, as in JSON; PyYAML alone reads it as a string);
- values: no ``.inf`` / ``.nan``, and strict types (``true`` is not 1, ``"32"`` is not 32).

Every problem is a :class:`~recommender.catalog.problems.Problem` with file, line and field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import yaml
from pydantic import ValidationError

from recommender.catalog.problems import Problem, WorkloadError, display_path
from recommender.catalog.yamlfile import (
    DUPLICATE_KEY,
    LineMap,
    PathKey,
    compose_yaml,
    validation_problems,
)
from recommender.workload import Workload

__all__ = [
    "MAX_WORKLOAD_FILE_BYTES",
    "locate",
    "non_finite_paths",
    "parse_workload_text",
    "read_workload",
    "read_workload_document",
]

# The API's request-body limit (recommender.settings.Settings.max_body_bytes, default
# 1 MiB; tests/test_workload.py checks that the two agree).
MAX_WORKLOAD_FILE_BYTES = 1_048_576


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML with YAML 1.2 / JSON exponent floats (``1e8``, ``3.4e8``) read as numbers."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _yaml(text: str, file: str) -> tuple[object, LineMap, list[PathKey]]:
    return compose_yaml(text, file, WorkloadError, _Loader)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _json(text: str, file: str) -> object:
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise WorkloadError(
            [Problem(file, exc.lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise WorkloadError([Problem(file, None, "", f"invalid JSON: {exc}")]) from exc


def non_finite_paths(data: object, path: PathKey = ()) -> Iterator[PathKey]:
    """Where ``data`` (parsed JSON/YAML) holds an infinite or NaN number."""
    if isinstance(data, float) and not math.isfinite(data):
        yield path
    elif isinstance(data, Mapping):
        for key, value in data.items():
            yield from non_finite_paths(value, (*path, str(key)))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from non_finite_paths(value, (*path, i))


def parse_workload_text(
    text: str, file: str, *, as_json: bool, base_dir: Path | None = None
) -> tuple[Workload, LineMap]:
    """Parse and validate a workload document (strict types, finite numbers); the model and
    the line of each field (to place problems found later, e.g. an unknown region).
    ``base_dir``: where a relative ``model.hf_config`` is looked up (the file's folder)."""
    if as_json:
        data = _json(text, file)
        try:  # JSON is YAML: the YAML node tree gives each field its line
            _, lines, dups = _yaml(text, file)
        except WorkloadError:
            lines, dups = LineMap(file), []
    else:
        data, lines, dups = _yaml(text, file)
    problems = [lines.problem(d, DUPLICATE_KEY, check="") for d in dups]
    problems += [
        lines.problem(p, "must be a finite number (no .inf, .nan, Infinity or NaN)", check="schema")
        for p in non_finite_paths(data)
    ]
    if not problems and not isinstance(data, dict):
        problems.append(Problem(file, 1, "", "expected a mapping at the top of the file"))
    if problems:
        raise WorkloadError(problems)
    try:
        context = {"base_dir": base_dir} if base_dir is not None else None
        return Workload.model_validate(data, strict=True, context=context), lines
    except ValidationError as exc:
        raise WorkloadError(validation_problems(exc, lines)) from exc


def _decode(raw: bytes, file: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        byte = raw[exc.start : exc.start + 1].hex()
        raise WorkloadError(
            [
                Problem(
                    file,
                    line,
                    "",
                    f"not UTF-8 text: byte 0x{byte} at offset {exc.start} cannot be decoded "
                    "(save the file as UTF-8)",
                )
            ]
        ) from exc


def read_workload(path: str | Path) -> Workload:
    """Read a workload file (YAML, or JSON by suffix or a leading ``{``); see the module doc.

    Raises :class:`WorkloadError` naming file, line and field for every problem found.
    """
    return read_workload_document(path)[0]


def read_workload_document(path: str | Path) -> tuple[Workload, LineMap]:
    """:func:`read_workload`, with the line of each field."""
    p = Path(path)
    file = display_path(p)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_WORKLOAD_FILE_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise WorkloadError([Problem(file, None, "", f"cannot read file: {reason}")]) from exc
    if len(raw) > MAX_WORKLOAD_FILE_BYTES:
        raise WorkloadError(
            [
                Problem(
                    file,
                    None,
                    "",
                    f"file is larger than {MAX_WORKLOAD_FILE_BYTES} bytes, the API's request "
                    "limit: a workload is a few hundred bytes (is this the right file?)",
                )
            ]
        )
    text = _decode(raw, file)
    as_json = p.suffix.lower() == ".json" or text.lstrip().startswith("{")
    return parse_workload_text(text, file, as_json=as_json, base_dir=p.parent)


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def locate(problems: Iterable[Problem], lines: LineMap) -> list[Problem]:
    """``problems`` found without a place (e.g. by the engine) placed in ``lines``' file."""
    placed = []
    for p in problems:
        path = [int(i) if i else key for key, i in _PART.findall(p.field)]
        line = p.line if p.line is not None else lines.line_of(path)
        placed.append(Problem(lines.file, line, p.field, p.message, p.severity, p.check))
    return placed
