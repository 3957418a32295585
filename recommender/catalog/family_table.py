"""The instance families we import, one :class:`FamilySpec` per pattern, with their sources
(see :mod:`recommender.catalog.families` for how a name is classified)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from recommender.catalog.schema import CloudName, Purchase, Source

__all__ = ["FAMILIES", "FamilySpec"]


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One instance family of one cloud."""

    cloud: CloudName
    pattern: str  # full match on the instance type name
    family: str
    title: str
    accelerator: str  # canonical id in accelerators.yaml
    attached: str | None = None  # GCP: the attached GPU's SkyPilot name (n1 hosts)
    true_gpus: int | None = None  # override a count the cloud's data gets wrong (or omits)
    price_model: str | None = None
    note: str | None = None
    true_gpu_memory_gib: float | None = None  # override a device memory the data gets wrong
    arch: str | None = None  # the host CPU architecture, where the source does not say
    purchase: Purchase | None = None  # how it is sold, where not plain on-demand + spot

    def matches(self, instance_type: str, attached: str | None = None) -> bool:
        if not re.fullmatch(self.pattern, instance_type):
            return False
        return self.attached is None or (attached or "").lower() == self.attached.lower()


_GCP_HOST_PLUS_GPU = "host + attached GPUs (SkyPilot host row + accelerator row, same zone)"
_WHOLE = "whole instance"
_READ = dt.date(2026, 12, 1)
# GCP: A4, A4X and A3 Ultra are not sold on demand (reservations, flex-start or spot);
# A3 High below 8 GPUs (a3-highgpu-1g/2g/4g) comes only through flex-start or spot.
_GCP_NO_ON_DEMAND = Purchase(
    reservation_only=True,
    other=["flex-start"],
    source=Source(
        name="dstack issue #3162, 'GCP reservations': A4X, A4, A3 Ultra are not available on "
        "demand, only via reservations (calendar-mode and AI Hypercomputer future reservations); "
        "GCP's consumption options: on-demand, reservations, flex-start, spot",
        url="https://github.com/dstackai/dstack/issues/3162",
        retrieved=_READ,
        note="GKE accelerator consumption options: "
        "https://docs.cloud.google.com/kubernetes-engine/docs/concepts/consumption-option",
    ),
)
_GCP_A3_HIGH = Purchase(
    reservation_below_gpus=8,
    other=["flex-start"],
    source=Source(
        name="Google Cloud, GPU machine types: a3-highgpu-1g, -2g and -4g are available only "
        "with Spot VMs or flex-start (recalled - verify); a3-highgpu-8g on demand",
        url="https://cloud.google.com/compute/docs/gpus#a3-series",
        retrieved=_READ,
    ),
)
# AWS sells these through EC2 Capacity Blocks for ML as well (prices per block are published
# by AWS, not in the SkyPilot source, so they are listed, not priced).
_AWS_CAPACITY_BLOCKS = Purchase(
    other=["capacity-block"],
    source=Source(
        name="Amazon EC2 Capacity Blocks for ML: supported instance types (p4d, p5, p5e, p5en, "
        "p6-b200, p6-b300, trn1, trn2; recalled - verify)",
        url="https://aws.amazon.com/ec2/capacityblocks/",
        retrieved=_READ,
        note="capacity-block prices are not in catalogs/sources/skypilot",
    ),
)
_TPU = "whole slice (the TPU row carries the price; no host row is added)"

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
        purchase=_GCP_A3_HIGH,
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
        purchase=_GCP_NO_ON_DEMAND,
        price_model=_GCP_HOST_PLUS_GPU,
    ),
    FamilySpec(
        "gcp",
        r"a4-highgpu-\d+g(-nolssd)?",
        "a4-highgpu",
        "A4",
        "B200",
        purchase=_GCP_NO_ON_DEMAND,
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
    FamilySpec(
        "gcp", r"tpu-v5litepod-\d+", "tpu-v5e", "TPU v5e slice", "TPU-v5e", price_model=_TPU
    ),
    FamilySpec("gcp", r"tpu-v5p-\d+", "tpu-v5p", "TPU v5p slice", "TPU-v5p", price_model=_TPU),
    FamilySpec("gcp", r"tpu-v6e-\d+", "tpu-v6e", "TPU v6e slice", "TPU-v6e", price_model=_TPU),
    # --- AWS -----------------------------------------------------------------------------
    FamilySpec("aws", r"g4dn\.\w+", "g4dn", "G4dn", "T4", price_model=_WHOLE),
    FamilySpec(
        "aws", r"g4ad\.\w+", "g4ad", "G4ad (Radeon Pro V520)", "Radeon-Pro-V520", price_model=_WHOLE
    ),
    FamilySpec("aws", r"g6f\.\w+", "g6f", "G6f (fractional L4)", "L4", price_model=_WHOLE),
    FamilySpec("aws", r"gr6f\.\w+", "gr6f", "Gr6f (fractional L4)", "L4", price_model=_WHOLE),
    FamilySpec("aws", r"gr6\.\w+", "gr6", "Gr6", "L4", price_model=_WHOLE),
    FamilySpec(
        "aws", r"g7e\.\w+", "g7e", "G7e (RTX PRO 6000)", "RTX-PRO-6000-Server", price_model=_WHOLE
    ),
    FamilySpec(
        "aws",
        r"p6-b200\.\w+",
        "p6-b200",
        "P6-B200",
        "B200",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec(
        "aws",
        r"p6-b300\.\w+",
        "p6-b300",
        "P6-B300",
        "B300",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec(
        "aws",
        r"trn2\.\w+",
        "trn2",
        "Trn2",
        "Trainium2",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
        true_gpu_memory_gib=96.0,
        note="SkyPilot's GpuInfo gives 524288 MiB per Trainium2; the chip has 96 GiB",
    ),
    FamilySpec("aws", r"dl1\.\w+", "dl1", "DL1 (Gaudi)", "Gaudi-HL-205", price_model=_WHOLE),
    FamilySpec("aws", r"g5g\.\w+", "g5g", "G5g (Graviton2 + T4G)", "T4", price_model=_WHOLE),
    FamilySpec("aws", r"g5\.\w+", "g5", "G5", "A10G", price_model=_WHOLE),
    FamilySpec("aws", r"g6\.\w+", "g6", "G6", "L4", price_model=_WHOLE),
    FamilySpec("aws", r"g6e\.\w+", "g6e", "G6e", "L40S", price_model=_WHOLE),
    FamilySpec("aws", r"p3dn\.\w+", "p3dn", "P3dn", "V100-SXM2-32GB", price_model=_WHOLE),
    FamilySpec("aws", r"p3\.\w+", "p3", "P3", "V100-SXM2-16GB", price_model=_WHOLE),
    FamilySpec(
        "aws",
        r"p4d\.\w+",
        "p4d",
        "P4d",
        "A100-SXM4-40GB",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec(
        "aws",
        r"p4de\.\w+",
        "p4de",
        "P4de",
        "A100-SXM4-80GB",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec(
        "aws",
        r"p5\.\w+",
        "p5",
        "P5",
        "H100-SXM5-80GB",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec(
        "aws",
        r"p5e\.\w+",
        "p5e",
        "P5e",
        "H200-SXM-141GB",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec(
        "aws",
        r"p5en\.\w+",
        "p5en",
        "P5en",
        "H200-SXM-141GB",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
    FamilySpec("aws", r"inf2\.\w+", "inf2", "Inf2", "Inferentia2", price_model=_WHOLE),
    FamilySpec(
        "aws",
        r"trn1n?\.\w+",
        "trn1",
        "Trn1",
        "Trainium1",
        purchase=_AWS_CAPACITY_BLOCKS,
        price_model=_WHOLE,
    ),
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
        r"Standard_NC\d+adi?s_H100_v5",
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
        r"Standard_ND96isr?_MI300X_v5",
        "ND_MI300X_v5",
        "ND MI300X v5",
        "MI300X",
        true_gpus=8,
        price_model=_WHOLE,
        note="the anycloud 2026 rows of ND96is_MI300X_v5 carry no accelerator count",
    ),
    FamilySpec(
        "azure",
        r"Standard_ND128isr_NDR_GB200_v6",
        "ND_GB200_v6",
        "ND GB200 v6",
        "GB200",
        true_gpus=4,
        arch="arm64",
        price_model=_WHOLE,
        note="rows carry no accelerator; the VM has 4 Blackwell GPUs on 2 Grace (Arm) CPUs",
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
        r"Standard_NV\d+adm?s_A10_v5",
        "NVadsA10_v5",
        "NVads A10 v5",
        "A10",
        price_model=_WHOLE,
    ),
)
