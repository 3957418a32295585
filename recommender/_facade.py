"""The library's front door: ``recommend`` and ``predict`` with every argument checked.

The scoring engine takes a validated :class:`~recommender.workload.Workload` and a loaded
catalog; this facade accepts what a caller has (a model, a mapping, or a file path; a
profile model or mapping), loads the bundled catalog when none is given, and turns every
bad argument into a :class:`~recommender.catalog.problems.RecommenderError` subclass that
names the field, never a bare ``KeyError`` or a raw pydantic ``ValidationError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, get_args

from pydantic import ValidationError

from recommender.catalog.problems import InvalidOptionError, ProblemsError, WorkloadError
from recommender.catalog.yamlfile import LineMap, validation_problems
from recommender.errors import ProfileError
from recommender.profile import Profile
from recommender.scoring.results import Objective
from recommender.workload import Workload, load_workload
from recommender.workload_file import non_finite_paths

if TYPE_CHECKING:
    from recommender.catalog import Catalog
    from recommender.scoring import Calibration, Prediction, Recommendation

__all__ = ["as_profile", "as_workload", "predict", "recommend"]

OBJECTIVES: tuple[str, ...] = get_args(Objective)
MAX_TOP = 50  # the CLI's --top bound and the API's; more picks are not a recommendation
MAX_GPUS = 64  # the CLI's --gpus bound: no catalog instance has more
MAX_NODES = 4096  # constraints.max_nodes' bound


M = TypeVar("M", Workload, Profile)


def _validated(model: type[M], value: object, what: str, error: type[ProblemsError]) -> M:
    """``value`` as ``model``: strict types, as the API and workload files have them."""
    lines = LineMap(what)
    infinite = [
        lines.problem(p, "must be a finite number (no inf or nan)", check="schema")
        for p in non_finite_paths(value)
    ]
    if infinite:
        raise error(infinite)
    try:
        # a profile holds timestamps as text (JSON): strict types are for workloads
        return model.model_validate(value, strict=model is Workload)
    except ValidationError as exc:
        raise error(validation_problems(exc, lines)) from exc


def as_workload(workload: Workload | Mapping[str, object] | str | Path) -> Workload:
    """A :class:`Workload` from a model, a mapping or a YAML/JSON file path.

    Mappings are validated with strict types (``True`` is not 1, ``"32"`` is not 32) and
    finite numbers only, as the API validates its JSON bodies.
    """
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, str | Path):
        return load_workload(workload)
    return _validated(Workload, workload, "workload", WorkloadError)


def as_profile(profile: Profile | Mapping[str, object] | None) -> Profile | None:
    """A :class:`Profile` from a model or a mapping (``None`` stays ``None``)."""
    if profile is None or isinstance(profile, Profile):
        return profile
    try:
        return _validated(Profile, profile, "profile", ProblemsError)
    except ProblemsError as exc:
        problems = exc.problems
        raise ProfileError(
            "the profile is not a probe profile:\n" + "\n".join(f"  {p}" for p in problems),
            field=exc.field,
            problems=problems,
        ) from exc


def _count(field: str, value: object, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InvalidOptionError(field, value, f">= 1 and <= {most} (a whole number)")
    return value


def _catalog(catalog: Catalog | None) -> Catalog:
    from recommender.catalog import load_catalog

    return catalog if catalog is not None else load_catalog()


def recommend(
    workload: Workload | Mapping[str, object] | str | Path,
    *,
    catalog: Catalog | None = None,
    objective: Objective = "balanced",
    top: int = 5,
    profile: Profile | Mapping[str, object] | None = None,
    calibration: Calibration | None = None,
    landscape: bool = False,
) -> Recommendation:
    """Rank every offer of ``catalog`` (default: the bundled one) for ``workload``;
    ``landscape``: also every feasible offer's cost and time (the web page's chart).

    Raises :class:`WorkloadError`, :class:`ProfileError`, :class:`InvalidOptionError`
    (objective, top) or :class:`CatalogError`, each naming the field.
    """
    from recommender.scoring import recommend as engine_recommend

    if objective not in OBJECTIVES:
        raise InvalidOptionError("objective", objective, "one of " + ", ".join(OBJECTIVES))
    w = as_workload(workload)
    return engine_recommend(
        w,
        catalog=_catalog(catalog),
        objective=objective,
        top=_count("top", top, MAX_TOP),
        profile=as_profile(profile),
        calibration=calibration,
        landscape=landscape,
    )


def predict(
    workload: Workload | Mapping[str, object] | str | Path,
    accelerator: str,
    gpus: int = 1,
    *,
    nodes: int = 1,
    catalog: Catalog | None = None,
    profile: Profile | Mapping[str, object] | None = None,
    calibration: Calibration | None = None,
) -> Prediction:
    """Predict ``workload`` on ``gpus`` x ``accelerator`` (any spelling of its name).

    Raises :class:`UnknownAcceleratorError` (a :class:`NotFoundError`) with did-you-mean
    suggestions, and the errors :func:`recommend` raises.
    """
    from recommender.scoring import predict as engine_predict

    if not isinstance(accelerator, str) or not accelerator.strip():
        raise InvalidOptionError("accelerator", accelerator, "an accelerator name")
    return engine_predict(
        as_workload(workload),
        accelerator,
        _count("gpus", gpus, MAX_GPUS),
        nodes=_count("nodes", nodes, MAX_NODES),
        catalog=_catalog(catalog),
        profile=as_profile(profile),
        calibration=calibration,
    )
