"""Reading one YAML file into a pydantic model while remembering where each field stood.

PyYAML's node tree carries line numbers; we walk it once to map every field path
(``families[3].instances[0].gpus``) to its line, refuse duplicate keys (which PyYAML would
silently overwrite), and translate pydantic's errors into :class:`Problem` objects that name
the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from recommender.catalog.problems import CatalogError, Problem, ProblemsError, Severity

__all__ = [
    "DUPLICATE_KEY",
    "Document",
    "LineMap",
    "PathKey",
    "compose_yaml",
    "format_path",
    "load_document",
    "parse_yaml",
]

M = TypeVar("M", bound=BaseModel)
# libyaml's parser (shipped in PyYAML's wheels) is ~10x faster; marks and nodes are the same.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PathKey = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """``("families", 3, "gpus")`` -> ``"families[3].gpus"``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


@dataclass(frozen=True)
class LineMap:
    """Field path -> 1-based line number in one file."""

    file: str
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        key = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), None)

    def problem(
        self, path: Sequence[str | int], message: str, *, severity: Severity = "error", check: str
    ) -> Problem:
        return Problem(self.file, self.line_of(path), format_path(path), message, severity, check)


@dataclass(frozen=True)
class Document(Generic[M]):
    """A validated model together with the line map of the file it came from."""

    model: M
    lines: LineMap


def _walk(node: yaml.Node, path: PathKey, lines: dict[PathKey, int], dups: list[PathKey]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = (*path, key)
            if key in seen:
                dups.append(child)
            seen.add(key)
            _walk(value_node, child, lines, dups)
            lines[child] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines, dups)


DUPLICATE_KEY = "duplicate key (the earlier value would be silently replaced)"


def compose_yaml(
    text: str,
    file: str,
    error: type[ProblemsError] = CatalogError,
    loader: type[yaml.SafeLoader] = _Loader,
) -> tuple[object, LineMap, list[PathKey]]:
    """Parse ``text`` with ``loader``: the data, the line of every field, and the paths of
    duplicate keys (PyYAML keeps the last value silently; the caller refuses them). Bad YAML,
    or a value the loader cannot construct, raises ``error`` naming the line."""
    parser = loader(text)
    try:
        node = parser.get_single_node()
        data = parser.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise error([Problem(file, line, "", f"invalid YAML: {exc.problem}")]) from exc
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        raise error([Problem(file, None, "", f"invalid YAML: {exc}")]) from exc
    finally:
        parser.dispose()
    lines: dict[PathKey, int] = {}
    dups: list[PathKey] = []
    if node is not None:
        _walk(node, (), lines, dups)
    return data, LineMap(file, lines), dups


def parse_yaml(
    text: str, file: str, error: type[ProblemsError] = CatalogError
) -> tuple[object, LineMap]:
    """Parse ``text``; raise ``error`` (a :class:`ProblemsError`) naming the line on bad YAML
    or a duplicate key."""
    data, lines, dups = compose_yaml(text, file, error)
    if dups:
        raise error([lines.problem(d, DUPLICATE_KEY, check="schema") for d in dups])
    return data, lines


_MESSAGES = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field (a typo? see the catalog format in the README)",
}


def _message(err: ErrorDetails) -> str:
    ctx = err.get("ctx") or {}
    kind = err["type"]
    if kind in _MESSAGES:
        return _MESSAGES[kind]
    if kind == "greater_than":
        return f"must be > {ctx['gt']} (got {err['input']!r})"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']} (got {err['input']!r})"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']} (got {err['input']!r})"
    if kind == "literal_error":
        return f"must be one of {ctx['expected']} (got {err['input']!r})"
    return f"{err['msg']} (got {err['input']!r})" if "input" in err else err["msg"]


def validation_problems(exc: ValidationError, lines: LineMap) -> list[Problem]:
    out = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and "[" in p)]
        out.append(lines.problem(loc, _message(err), check="schema"))
    return out


def load_document(
    path: Path,
    model: type[M],
    *,
    display: str | None = None,
    error: type[ProblemsError] = CatalogError,
) -> Document[M]:
    """Load ``path`` as ``model``; every problem is raised at once as ``error``."""
    name = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error([Problem(name, None, "", f"cannot read file: {exc.strerror}")]) from exc
    data, lines = parse_yaml(text, name, error)
    if not isinstance(data, dict):
        raise error([Problem(name, 1, "", "expected a mapping at the top of the file")])
    try:
        return Document(model.model_validate(data), lines)
    except ValidationError as exc:
        raise error(validation_problems(exc, lines)) from exc
