"""A workload's constraints against the catalog: unknown names are errors, exclusions counted.

A region typo (``us-central-1``) or an accelerator the catalog does not have would
otherwise filter every offer out and answer with an empty list; here it is a
:class:`~recommender.catalog.problems.WorkloadError` naming the field, with the closest
names. Each constraint that does apply is counted: how many offers it (and it alone, in
order) left out, under a label that names it, so that an answer without a pick says what
to relax, and a workload without constraints reads "spot (on-demand only by default)".
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

from recommender.catalog import Catalog, UnknownAcceleratorError
from recommender.catalog.offers import OffersTable
from recommender.catalog.problems import Problem, WorkloadError
from recommender.workload import Constraints

__all__ = [
    "UnknownConstraintAcceleratorError",
    "check_constraints",
    "constraint_exclusions",
    "did_you_mean",
    "unknown_names",
]

SUGGESTIONS = 3  # closest names offered
SIMILARITY = 0.6  # difflib's default cut-off


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """``"; did you mean a, b?"`` for the closest of ``known``, or ``""``."""
    close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], SUGGESTIONS)
    by_lower = {k.lower(): k for k in known}
    return f"; did you mean {', '.join(by_lower[c] for c in close)}?" if close else ""


def unknown_names(
    kind: str, field: str, names: Sequence[str], known: Sequence[str], listing: str
) -> list[Problem]:
    """One problem per entry of ``names`` that is not in ``known`` (case-insensitive)."""
    lower = {k.lower() for k in known}
    return [
        Problem(
            "workload",
            None,
            f"{field}[{i}]",
            f"unknown {kind} {name!r}{did_you_mean(name, known)} ({listing})",
        )
        for i, name in enumerate(names)
        if name.lower() not in lower
    ]


class UnknownConstraintAcceleratorError(WorkloadError, UnknownAcceleratorError):
    """An accelerator in ``constraints.accelerators`` the catalog lacks: a workload error
    (with every problem placed) that is also the :class:`UnknownAcceleratorError` callers
    (the HTTP API) already answer with the accelerator's suggestions."""

    def __init__(self, problems: Sequence[Problem], unknown: UnknownAcceleratorError) -> None:
        as_workload_error = WorkloadError(problems)  # the message and the placed problems
        self.problems = as_workload_error.problems
        self.field = as_workload_error.field
        self.name = unknown.name
        self.suggestions = unknown.suggestions
        Exception.__init__(self, str(as_workload_error))  # both bases' __init__ differ


def check_constraints(c: Constraints, catalog: Catalog) -> None:
    """Raise :class:`WorkloadError` for every region or accelerator the catalog lacks."""
    table = catalog.offers
    problems = unknown_names(
        "region",
        "constraints.regions",
        c.regions or [],
        table.region_names,
        "`recommender catalog list` lists them",
    )
    unknown: UnknownAcceleratorError | None = None
    for i, name in enumerate(c.accelerators or []):
        try:
            catalog.names.resolve_all(name)
        except UnknownAcceleratorError as exc:
            unknown = unknown or exc
            problems.append(Problem("workload", None, f"constraints.accelerators[{i}]", str(exc)))
    if unknown is not None:
        raise UnknownConstraintAcceleratorError(problems, unknown)
    if problems:
        raise WorkloadError(problems)


def _listed(values: Sequence[object]) -> str:
    return ", ".join(str(v) for v in values)


def _purchase(c: Constraints) -> list[str]:
    """The purchase options the workload accepts (as ``recommend`` applies them)."""
    chosen = list(c.purchase or (["on-demand", "spot"] if c.spot else ["on-demand"]))
    return [*chosen, "spot"] if c.spot_only else chosen


def constraint_exclusions(
    c: Constraints, table: OffersTable, accelerator_ids: Sequence[str] | None
) -> dict[str, int]:
    """Offers each constraint left out (applied in order; zero counts omitted)."""
    spot_label = (
        "on-demand (constraints.spot_only)"
        if c.spot_only
        else "spot (on-demand only by default; constraints.spot: true accepts spot)"
    )
    spot: bool | None = True if c.spot_only else (None if c.spot else False)
    steps: list[tuple[str, dict[str, object]]] = [
        (f"not on constraints.clouds ({_listed(c.clouds or [])})", {"clouds": c.clouds}),
        (f"not in constraints.regions ({_listed(c.regions or [])})", {"regions": c.regions}),
        (
            f"not constraints.accelerators ({_listed(c.accelerators or [])})",
            {"accelerators": accelerator_ids},
        ),
        (spot_label, {"spot": spot}),
        (
            "not bought that way (constraints.purchase; default: on-demand, and spot when "
            "allowed, no reservations)",
            {"purchase": _purchase(c)},
        ),
        (f"more GPUs than constraints.max_gpus ({c.max_gpus})", {"max_gpus": c.max_gpus}),
        (f"fewer GPUs than constraints.min_gpus ({c.min_gpus})", {"min_gpus": c.min_gpus}),
        (
            f"over constraints.max_price_per_hour ({c.max_price_per_hour} USD/h)",
            {"max_price": c.max_price_per_hour},
        ),
    ]
    keep = np.ones(len(table), dtype=bool)
    out: dict[str, int] = {}
    for label, kwargs in steps:
        if all(v is None for v in kwargs.values()):
            continue
        left = keep & table.mask(**kwargs)  # type: ignore[arg-type]
        dropped = int(np.count_nonzero(keep) - np.count_nonzero(left))
        if dropped:
            out[label] = dropped
        keep = left
    return out
