"""From what a cloud reports (instance type, GPU name) to our family and accelerator id.

:mod:`recommender.catalog.families` decides first, so a refreshed catalog names families
exactly as the SkyPilot importer does. An instance type no family pattern covers is still
taken when the GPU name the cloud reports resolves to exactly one accelerator of
``accelerators.yaml`` (a new family of a known GPU); otherwise it is *reported* as a
:class:`~recommender.catalog.refresh.base.Skipped`, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from recommender.catalog.families import classify
from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh.base import Skipped

__all__ = ["FamilyMatch", "resolve_family"]

_WHOLE = "whole instance"


@dataclass(frozen=True, slots=True)
class FamilyMatch:
    """The family an instance type belongs to and the accelerator it carries."""

    family: str
    title: str
    price_model: str | None
    accelerator: str
    true_gpus: int | None = None
    note: str | None = None


def resolve_family(
    cloud: str,
    instance_type: str,
    reported: str | None,
    names: AcceleratorNames,
    *,
    attached: str | None = None,
    family_guess: str | None = None,
) -> FamilyMatch | Skipped:
    """Map ``instance_type`` (GPU ``reported`` by the cloud, if it names one) to a family.

    ``attached`` is the GPU attached to a GCP n1 host; ``family_guess`` names the family used
    when family_table.py has none (e.g. the part of an AWS type before the dot).
    """
    spec = classify(cloud, instance_type, attached)
    if spec is not None:
        if names.by_id(spec.accelerator) is None:
            return Skipped(
                instance_type,
                "unknown-accelerator",
                f"family_table.py maps it to {spec.accelerator!r}, which accelerators.yaml lacks",
                reported or spec.accelerator,
            )
        return FamilyMatch(
            spec.family, spec.title, spec.price_model, spec.accelerator, spec.true_gpus
        )
    if reported is None:
        return Skipped(
            instance_type,
            "unknown-accelerator",
            "the cloud reports GPUs but names no model, and no family in family_table.py "
            "matches this instance type",
        )
    found = names.resolve_all(reported, strict=False)
    if not found:
        close = names.suggest(reported)
        hint = f" (closest: {', '.join(close)})" if close else ""
        return Skipped(
            instance_type,
            "unknown-accelerator",
            f"GPU {reported!r} is not in accelerators.yaml{hint}; add its spec sheet there "
            "and a family to family_table.py",
            reported,
        )
    if len(found) > 1:
        ids = " or ".join(a.id for a in found)
        return Skipped(
            instance_type,
            "ambiguous-accelerator",
            f"GPU {reported!r} could be {ids}; add a family for this instance type to "
            "family_table.py",
            reported,
        )
    family = family_guess or instance_type
    return FamilyMatch(
        family,
        family,
        _WHOLE,
        found[0].id,
        note=f"family {family!r} is not in family_table.py; {reported!r} resolved by name to "
        f"{found[0].id}",
    )
