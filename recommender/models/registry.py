"""The bundled model registry: ``catalogs/models.yaml`` loaded, validated and looked up by name.

Each entry is a model's exact architecture (:mod:`recommender.models.arch`) with the
parameter count its source publishes and the source itself. A name resolves
case-insensitively from the canonical name (``llama-3.1-8b``), any alias, and any Hugging Face
repository id listed as an alias (``meta-llama/Llama-3.1-8B``, or its part after the ``/``);
spaces and ``_`` count as ``-`` (``Llama 3.1 8B``). An unknown name raises
:class:`UnknownModelError` with the closest names. A broken file raises
:class:`ModelRegistryError` listing every problem with its file, line and field.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recommender.catalog import default_catalog_dir
from recommender.catalog.problems import Problem, ProblemsError, display_path
from recommender.catalog.schema import Source
from recommender.catalog.yamlfile import LineMap, parse_yaml, validation_problems
from recommender.models.arch import Architecture

__all__ = [
    "MODELS_FILE_ENV",
    "ModelEntry",
    "ModelFile",
    "ModelRegistry",
    "ModelRegistryError",
    "UnknownModelError",
    "default_models_path",
    "default_registry",
    "load_registry",
    "normalize_model_name",
    "resolve_model",
]

MODELS_FILE_ENV = "RECOMMENDER_MODELS_FILE"
MODELS_FILE = "models.yaml"
SCHEMA_VERSION = 1
# Tags of the Architecture union; pydantic puts them in an error's location.
_ARCH_TAGS = frozenset({"transformer", "vit", "given"})
_SEPARATORS = re.compile(r"[\s_]+")
CanonicalName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")]
PositiveFloat = Annotated[float, Field(gt=0)]


def normalize_model_name(name: str) -> str:
    """Fold case; spaces and ``_`` become ``-``: ``'Llama 3.1_8B'`` -> ``'llama-3.1-8b'``."""
    return _SEPARATORS.sub("-", name.strip()).lower()


class ModelRegistryError(ProblemsError):
    """The model registry file could not be loaded."""

    what = "the model registry"


class UnknownModelError(LookupError):
    """No registry entry answers to the name; the message suggests the closest ones."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown model {name!r}{hint} (`recommender models` lists them all; "
            "or describe it with model.hf_config or model.architecture)"
        )


class ModelEntry(BaseModel):
    """One model: names, the published parameter count with its source, and the shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: CanonicalName
    aliases: tuple[str, ...] = ()
    title: str = Field(min_length=1)
    family: Literal["transformer", "cnn", "diffusion", "vision", "speech"]
    published_parameters: PositiveFloat
    published_active_parameters: PositiveFloat | None = None
    source: Source
    architecture: Architecture

    @property
    def parameters(self) -> float:
        """Parameters computed from the shape (what the engine uses)."""
        return self.architecture.parameters

    @property
    def active_parameters(self) -> float:
        """Parameters one token or sample passes through (MoE: routed and shared experts)."""
        return self.architecture.active_parameters

    @property
    def is_moe(self) -> bool:
        return self.active_parameters < self.parameters

    def names(self) -> tuple[str, ...]:
        """Every spelling this entry answers to (canonical name first)."""
        return (self.name, *self.aliases)


class ModelFile(BaseModel):
    """``catalogs/models.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1]
    models: tuple[ModelEntry, ...]


class ModelRegistry:
    """Index from every spelling of every model to its entry."""

    def __init__(self, entries: Iterable[ModelEntry]) -> None:
        self.entries: tuple[ModelEntry, ...] = tuple(entries)
        self._index: dict[str, ModelEntry] = {}
        tails: dict[str, set[str]] = {}
        for entry in self.entries:
            for name in entry.names():
                self._index.setdefault(normalize_model_name(name), entry)
                if "/" in name:
                    tail = normalize_model_name(name.rsplit("/", 1)[1])
                    tails.setdefault(tail, set()).add(entry.name)
        by_name = {e.name: e for e in self.entries}
        for tail, owners in tails.items():
            if len(owners) == 1 and tail not in self._index:  # an ambiguous tail stays out
                self._index[tail] = by_name[next(iter(owners))]

    def __iter__(self) -> Iterator[ModelEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_model_name(name) in self._index

    def resolve(self, name: str) -> ModelEntry:
        """The entry ``name`` stands for; raises :class:`UnknownModelError`."""
        found = self._index.get(normalize_model_name(name))
        if found is None:
            raise UnknownModelError(name, self.suggest(name))
        return found

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Canonical names of the entries whose spellings are closest to ``name``."""
        close = difflib.get_close_matches(
            normalize_model_name(name), list(self._index), n=n * 3, cutoff=0.6
        )
        out: list[str] = []
        for key in close:
            canonical = self._index[key].name
            if canonical not in out:
                out.append(canonical)
        return out[:n]


def default_models_path() -> Path:
    """``$RECOMMENDER_MODELS_FILE``; else ``models.yaml`` in the catalog directory when it has
    one; else the checkout's ``catalogs/models.yaml``; else the packaged copy."""
    env = os.environ.get(MODELS_FILE_ENV)
    if env:
        return Path(env)
    beside_catalog = default_catalog_dir() / MODELS_FILE
    if beside_catalog.is_file():
        return beside_catalog
    here = Path(__file__).resolve().parent.parent  # recommender/
    checkout = here.parent / "catalogs" / MODELS_FILE
    return checkout if checkout.is_file() else here / "_catalogs" / MODELS_FILE


def _schema_problems(exc: ValidationError, lines: LineMap) -> list[Problem]:
    """pydantic's errors with file, line and field; the union's tag left out of the path."""
    out = []
    errors = exc.errors(include_url=False)
    for err, problem in zip(errors, validation_problems(exc, lines), strict=True):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and "[" in p)]
        path = [
            p
            for i, p in enumerate(loc)
            if not (i and loc[i - 1] == "architecture" and p in _ARCH_TAGS)
        ]
        out.append(lines.problem(path, problem.message, check="schema"))
    return out


def _duplicate_names(models: tuple[ModelEntry, ...], lines: LineMap) -> list[Problem]:
    """A spelling two entries answer to would resolve to whichever came first."""
    owner: dict[str, str] = {}
    out = []
    for i, entry in enumerate(models):
        for j, name in enumerate(entry.names()):
            first = owner.setdefault(normalize_model_name(name), entry.name)
            if first != entry.name:
                where = ("models", i, "name") if j == 0 else ("models", i, "aliases", j - 1)
                message = f"{name!r} already names {first!r}; every spelling must be unique"
                out.append(lines.problem(where, message, check="integrity"))
    return out


def load_registry(path: str | Path | None = None) -> ModelRegistry:
    """Load and check the registry file; raise :class:`ModelRegistryError` with every problem."""
    file = Path(path) if path is not None else default_models_path()
    shown = display_path(file)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelRegistryError(
            [Problem(shown, None, "", f"cannot read file: {exc.strerror}")]
        ) from exc
    data, lines = parse_yaml(text, shown, ModelRegistryError)
    if not isinstance(data, dict):
        raise ModelRegistryError([Problem(shown, 1, "", "expected a mapping at the top")])
    try:
        doc = ModelFile.model_validate(data)
    except ValidationError as exc:
        raise ModelRegistryError(_schema_problems(exc, lines)) from exc
    if not doc.models:
        raise ModelRegistryError([lines.problem(("models",), "lists no model", check="schema")])
    duplicates = _duplicate_names(doc.models, lines)
    if duplicates:
        raise ModelRegistryError(duplicates)
    return ModelRegistry(doc.models)


@functools.cache
def _cached_registry(path: Path) -> ModelRegistry:
    return load_registry(path)


def default_registry() -> ModelRegistry:
    """The registry at :func:`default_models_path`, loaded once per path."""
    return _cached_registry(default_models_path().resolve())


def resolve_model(name: str) -> ModelEntry:
    """The bundled registry's entry for ``name``; raises :class:`UnknownModelError`."""
    return default_registry().resolve(name)
