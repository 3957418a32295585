"""Which family an instance type belongs to, and which accelerator it carries.

Clouds name their GPU machines by pattern (``a2-ultragpu-8g``, ``p4de.24xlarge``,
``Standard_ND96amsr_A100_v4``). This table maps each pattern to our family name, its title,
the canonical accelerator id of ``accelerators.yaml`` and, where the cloud's own data is known
to be wrong, the true GPU count. Both the SkyPilot importer and the cloud refreshers use it, so
an instance type is named the same whichever way the catalog was built.

GCP machines that take attached GPUs (``n1-*``) have no accelerator of their own: their family
is chosen by the GPU attached (``n1`` + T4 -> ``n1-t4``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recommender.catalog.schema import CloudName

__all__ = ["FAMILIES", "FamilySpec", "classify"]


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One instance family of one cloud."""

    cloud: CloudName
    pattern: str  # full match on the instance type name
    family: str
    title: str
    accelerator: str  # canonical id in accelerators.yaml
    attached: str | None = None  # GCP: the attached GPU's SkyPilot name (n1 hosts)
    true_gpus: int | None = None  # override a count the cloud's data gets wrong
    price_model: str | None = None
    note: str | None = None

    def matches(self, instance_type: str, attached: str | None = None) -> bool:
        if not re.fullmatch(self.pattern, instance_type):
            return False
        return self.attached is None or (attached or "").lower() == self.attached.lower()


_GCP_HOST_PLUS_GPU = "host + attached GPUs (SkyPilot host row + accelerator row, same zone)"
_WHOLE = "whole instance"

FAMILIES: tuple[FamilySpec, ...] = (
    # --- GCP -----------------------------------------------------------------------------
    FamilySpec(
        "gcp",
        r"a2-highgpu-\d+g",
        "a2-highgpu",
        "A2 High",
        "A100-SXM4-40GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a2-megagpu-16g",
        "a2-megagpu",
        "A2 Mega",
        "A100-SXM4-40GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a2-ultragpu-\d+g",
        "a2-ultragpu",
        "A2 Ultra",
        "A100-SXM4-80GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a3-highgpu-\d+g",
        "a3-highgpu",
        "A3 High",
        "H100-SXM5-80GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a3-edgegpu-\d+g(-nolssd)?",
        "a3-edgegpu",
        "A3 Edge",
        "H100-SXM5-80GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a3-megagpu-\d+g",
        "a3-megagpu",
        "A3 Mega",
        "H100-SXM5-80GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a3-ultragpu-\d+g(-nolssd)?",
        "a3-ultragpu",
        "A3 Ultra",
        "H200-SXM-141GB",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a4-highgpu-\d+g(-nolssd)?",
        "a4-highgpu",
        "A4",
        "B200",
        price_model=_GCP_HOST_PLUS_GPU,
        note="host rows are 0.0: the B200 row carries the whole price",
    ),
    FamilySpec(
        "gcp", r"g2-standard-\d+", "g2-standard", "G2", "L4", price_model=_GCP_HOST_PLUS_GPU
    ),
    FamilySpec(
        "gcp",
        r"n1-(standard|highmem|highcpu)-\d+",
        "n1-t4",
        "N1 + T4",
        "T4",
        attached="T4",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"n1-(standard|highmem|highcpu)-\d+",
        "n1-v100",
        "N1 + V100",
        "V100-SXM2-16GB",
        attached="V100",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"n1-(standard|highmem|highcpu)-\d+",
        "n1-p100",
        "N1 + P100",
        "P100-PCIe-16GB",
        attached="P100",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"n1-(standard|highmem|highcpu)-\d+",
        "n1-p4",
        "N1 + P4",
        "P4",
        attached="P4",
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    # --- AWS -----------------------------------------------------------------------------
    FamilySpec("aws", r"g4dn\.\w+", "g4dn", "G4dn", "T4", price_model=_WHOLE),
    FamilySpec("aws", r"g5g\.\w+", "g5g", "G5g (Graviton2 + T4G)", "T4", price_model=_WHOLE),
    FamilySpec("aws", r"g5\.\w+", "g5", "G5", "A10G", price_model=_WHOLE),
    FamilySpec("aws", r"g6\.\w+", "g6", "G6", "L4", price_model=_WHOLE),
    FamilySpec("aws", r"g6e\.\w+", "g6e", "G6e", "L40S", price_model=_WHOLE),
    FamilySpec("aws", r"p3dn\.\w+", "p3dn", "P3dn", "V100-SXM2-32GB", price_model=_WHOLE),
    FamilySpec("aws", r"p3\.\w+", "p3", "P3", "V100-SXM2-16GB", price_model=_WHOLE),
    FamilySpec("aws", r"p4d\.\w+", "p4d", "P4d", "A100-SXM4-40GB", price_model=_WHOLE),
    FamilySpec("aws", r"p4de\.\w+", "p4de", "P4de", "A100-SXM4-80GB", price_model=_WHOLE),
    FamilySpec("aws", r"p5\.\w+", "p5", "P5", "H100-SXM5-80GB", price_model=_WHOLE),
    FamilySpec("aws", r"p5e\.\w+", "p5e", "P5e", "H200-SXM-141GB", price_model=_WHOLE),
    FamilySpec("aws", r"p5en\.\w+", "p5en", "P5en", "H200-SXM-141GB", price_model=_WHOLE),
    FamilySpec("aws", r"inf2\.\w+", "inf2", "Inf2", "Inferentia2", price_model=_WHOLE),
    FamilySpec("aws", r"trn1n?\.\w+", "trn1", "Trn1", "Trainium1", price_model=_WHOLE),
    # --- Azure ---------------------------------------------------------------------------
    FamilySpec(
        "azure", r"Standard_NC\d+as_T4_v3", "NCasT4_v3", "NCas T4 v3", "T4", price_model=_WHOLE
    ),
    FamilySpec(
        "azure",
        r"Standard_NC\d+ads_A100_v4",
        "NC_A100_v4",
        "NC A100 v4",
        "A100-PCIe-80GB",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure",
        r"Standard_ND96amsr_A100_v4",
        "NDm_A100_v4",
        "NDm A100 v4",
        "A100-SXM4-80GB",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure",
        r"Standard_ND96asr_v4",
        "ND_A100_v4",
        "ND A100 v4",
        "A100-SXM4-40GB",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure",
        r"Standard_ND96isr_H100_v5",
        "ND_H100_v5",
        "ND H100 v5",
        "H100-SXM5-80GB",
        true_gpus=8,
        price_model=_WHOLE,
        note="SkyPilot v8 lists 12 x H100; the ND96isr_H100_v5 has 8",
    ),
    FamilySpec(
        "azure",
        r"Standard_NC\d+adis?_H100_v5",
        "NC_H100_v5",
        "NC H100 v5",
        "H100-NVL-94GB",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure",
        r"Standard_NCC\d+ads_H100_v5",
        "NCC_H100_v5",
        "NCC H100 v5 (confidential)",
        "H100-NVL-94GB",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure",
        r"Standard_ND96isr_H200_v5",
        "ND_H200_v5",
        "ND H200 v5",
        "H200-SXM-141GB",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure",
        r"Standard_ND96isr_MI300X_v5",
        "ND_MI300X_v5",
        "ND MI300X v5",
        "MI300X",
        price_model=_WHOLE,
    ),
    FamilySpec(
        "azure", r"Standard_NC\d+r?s_v3", "NCv3", "NCv3", "V100-PCIe-16GB", price_model=_WHOLE
    ),
    FamilySpec(
        "azure", r"Standard_ND40rs_v2", "NDv2", "NDv2", "V100-SXM2-32GB", price_model=_WHOLE
    ),
    FamilySpec(
        "azure", r"Standard_NC\d+ads_A10_v4", "NC_A10_v4", "NC A10 v4", "A10", price_model=_WHOLE
    ),
    FamilySpec(
        "azure",
        r"Standard_NV\d+ads?m?_A10_v5",
        "NVadsA10_v5",
        "NVads A10 v5",
        "A10",
        price_model=_WHOLE,
    ),
)


def classify(cloud: str, instance_type: str, attached: str | None = None) -> FamilySpec | None:
    """The family of ``instance_type`` (with GPU ``attached`` on GCP n1), or ``None``."""
    for spec in FAMILIES:
        if spec.cloud == cloud and spec.matches(instance_type, attached):
            return spec
    return None
