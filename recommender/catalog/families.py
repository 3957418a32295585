"""Which family an instance type belongs to, and which accelerator it carries.

Clouds name their GPU machines by pattern (``a2-ultragpu-8g``, ``p4de.24xlarge``,
``Standard_ND96amsr_A100_v4``). The table (:mod:`.family_table`) maps each pattern to our
family name, its title, the canonical accelerator id of ``accelerators.yaml`` and, where the
cloud's own data is known to be wrong, the true GPU count. Both the SkyPilot importer and the
cloud refreshers use it, so an instance type is named the same whichever way the catalog was
built.

GCP machines that take attached GPUs (``n1-*``) have no accelerator of their own: their family
is chosen by the GPU attached (``n1`` + T4 -> ``n1-t4``).
"""

from __future__ import annotations

import re

from recommender.catalog.family_table import FAMILIES, FamilySpec

__all__ = ["FAMILIES", "NOT_IMPORTED", "FamilySpec", "classify", "not_imported"]


# Instance types in the sources that are deliberately not imported, and why (each row of
# theirs is reported as skipped with this reason, never dropped silently).
NOT_IMPORTED: tuple[tuple[str, str, str], ...] = (
    (
        "gcp",
        r"g4-standard-\d+",
        "G4 (RTX PRO 6000): the source has no RTXPRO6000 accelerator rows to add to the host "
        "rows and does not say whether the host price includes the GPU, so no price can be "
        "composed (catalogs/sources/skypilot/README.md)",
    ),
    (
        "azure",
        r"Standard_NG\d+ads_V620_v1",
        "NGads V620: AMD Radeon PRO V620, a cloud-gaming GPU sold in fractions; no ML "
        "framework support to rank it for",
    ),
    (
        "azure",
        r"Standard_NV\d+adm?s_V710_v5",
        "NVads V710: AMD Radeon PRO V710, a graphics / VDI GPU sold in fractions; no ML "
        "framework support to rank it for",
    ),
)


def not_imported(cloud: str, instance_type: str) -> str | None:
    """Why ``instance_type`` is deliberately left out of the catalog, or ``None``."""
    for c, pattern, reason in NOT_IMPORTED:
        if c == cloud and re.fullmatch(pattern, instance_type):
            return reason
    return None


def classify(cloud: str, instance_type: str, attached: str | None = None) -> FamilySpec | None:
    """The family of ``instance_type`` (with GPU ``attached`` on GCP n1), or ``None``."""
    for spec in FAMILIES:
        if spec.cloud == cloud and spec.matches(instance_type, attached):
            return spec
    return None
