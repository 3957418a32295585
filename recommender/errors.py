"""The library's error base and the errors that need no catalog (stdlib only, so that the
probe, which must not import the catalog, raises the same classes).

:mod:`recommender.catalog.problems` adds the errors that carry file/line/field problems
(:class:`~recommender.catalog.problems.CatalogError`, ``WorkloadError``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["InvalidOptionError", "NotFoundError", "ProfileError", "RecommenderError"]


class RecommenderError(Exception):
    """Base of every error the library raises on purpose; ``field`` names the input at fault
    (a dotted path such as ``constraints.regions[0]``, or ``""`` when no one field is)."""

    field: str = ""


class InvalidOptionError(RecommenderError, ValueError):
    """An argument outside its allowed values (``objective="bogus"``, ``top=0``)."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} must be {allowed} (got {value!r})")


class NotFoundError(RecommenderError, LookupError):
    """A name that nothing in the catalog answers to (accelerator, edge device, region...)."""


class ProfileError(RecommenderError, ValueError):
    """A probe profile could not be read, validated or used; the message names file and
    field, ``problems`` lists each one when there are several."""

    def __init__(self, message: str, *, field: str = "", problems: Sequence[object] = ()) -> None:
        self.field = field
        self.problems = tuple(problems)
        super().__init__(message)
