"""The catalog's data model: pydantic schemas for the YAML files in ``catalogs/``.

Field-level rules live here (a price is positive, a GPU count is at least one); rules that
need several records at once (spot above on-demand, duplicates, unknown accelerators) live
in :mod:`recommender.catalog.integrity`, which reports every problem instead of the first.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA_VERSION",
    "Accelerator",
    "AcceleratorFile",
    "CloudCatalog",
    "CloudName",
    "EdgeDevice",
    "EdgeFile",
    "EdgeHost",
    "Family",
    "Framework",
    "HostLink",
    "InstanceType",
    "InterNode",
    "IntraNode",
    "Network",
    "PeakTflops",
    "PowerMode",
    "Precision",
    "Purchase",
    "PurchaseOption",
    "RegionPrice",
    "Runs",
    "Source",
    "WorkKind",
]

SCHEMA_VERSION = 1

CloudName = Literal["aws", "gcp", "azure"]
Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]

PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]


class _Strict(BaseModel):
    """Unknown keys are errors: a typo in a catalog must not pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Strict):
    """Where a fact came from: a name, an address and the day it was read."""

    name: str = Field(min_length=1)
    url: str | None = None
    retrieved: dt.date | None = None
    note: str | None = None


class PeakTflops(_Strict):
    """Dense (no sparsity) peak throughput per precision; ``None`` where unsupported.

    ``int8`` is in TOPS. Values are the vendor's datasheet figures, not achieved ones.
    """

    fp32: PositiveFloat
    tf32: PositiveFloat | None = None
    bf16: PositiveFloat | None = None
    fp16: PositiveFloat | None = None
    fp8: PositiveFloat | None = None
    int8: PositiveFloat | None = None
    fp4: PositiveFloat | None = Field(
        default=None, description="Dense FP4 (NVFP4 / MXFP4) tensor peak, Blackwell onwards."
    )

    def get(self, precision: Precision) -> float | None:
        value: float | None = getattr(self, precision)
        return value


Framework = Literal[
    "pytorch-cuda", "pytorch-rocm", "pytorch-xla", "jax", "tensorflow", "neuron", "gaudi"
]
WorkKind = Literal["training", "inference", "graphics"]  # graphics: no ML workload


class Runs(_Strict):
    """What software runs on an accelerator, and for which kinds of work."""

    frameworks: list[Framework] = Field(min_length=1)
    kinds: list[WorkKind] = Field(min_length=1)
    source: str | None = None


class HostLink(_Strict):
    """How the accelerator talks to the host CPU."""

    kind: Literal["pcie", "neuronlink", "soc", "nvlink-c2c"] = "pcie"
    pcie_gen: Annotated[int, Field(ge=1, le=6)] | None = None
    lanes: Annotated[int, Field(ge=1, le=32)] | None = None
    gbs_per_direction: PositiveFloat


class Accelerator(_Strict):
    """One accelerator model's spec sheet."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9.\-]*$")
    vendor: Literal["nvidia", "amd", "aws", "google", "intel"]
    marketing_name: str
    skypilot_name: str | None = None
    nvidia_smi_names: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    architecture: str
    chip: str | None = Field(default=None, description="The die, e.g. GA100; ties variants.")
    form_factor: Literal["sxm", "pcie", "oam", "module", "chip"]
    memory_gb: PositiveFloat
    memory_bandwidth_gbs: PositiveFloat
    memory_type: Literal["hbm", "gddr"] | None = Field(
        default=None,
        description=(
            "Stacked HBM or board GDDR: a GDDR board's triad reaches a larger share of its "
            "datasheet bandwidth (scoring.calibration.GDDR_TRIAD_SHARE)."
        ),
    )
    peak_tflops: PeakTflops
    host_link: HostLink
    nvlink_gbs: PositiveFloat | None = Field(
        default=None, description="Total GPU-to-GPU bandwidth per GPU, both directions."
    )
    tdp_w: PositiveFloat | None = None
    max_per_instance: int = Field(
        default=8, ge=1, description="Most devices one instance of any cloud carries."
    )
    runs: Runs = Field(
        default_factory=lambda: Runs(
            frameworks=["pytorch-cuda", "jax", "tensorflow"], kinds=["training", "inference"]
        ),
        description="Frameworks and kinds of work it runs (default: a CUDA GPU's).",
    )
    source: Source

    def names(self) -> list[str]:
        """Every name this accelerator answers to (resolution is case-insensitive)."""
        out = [self.id, self.marketing_name, *self.nvidia_smi_names, *self.aliases]
        if self.skypilot_name:
            out.append(self.skypilot_name)
        return out


class AcceleratorFile(_Strict):
    schema_version: Literal[1] = 1
    accelerators: list[Accelerator] = Field(min_length=1)


class RegionPrice(_Strict):
    """What one instance type costs in one region, USD per hour for the whole instance."""

    region: str = Field(min_length=1)
    on_demand: PositiveFloat | None = None
    spot: PositiveFloat | None = None
    zones: list[str] = Field(default_factory=list)


class InstanceType(_Strict):
    name: str = Field(min_length=1)
    accelerator: str = Field(min_length=1)
    gpus: int = Field(ge=1, description="Accelerators per instance (whole devices).")
    gpu_fraction: Annotated[float, Field(gt=0, lt=1)] | None = Field(
        default=None,
        description="A share of one device (AWS g6f 1/8 L4, Azure NVads A10 v5 1/6): gpus is 1.",
    )
    vcpus: PositiveFloat
    memory_gib: PositiveFloat
    local_disk_gb: NonNegativeFloat = 0.0
    gpu_memory_gib: PositiveFloat | None = Field(
        default=None, description="Memory per device as the cloud reports it (GiB)."
    )
    arch: Literal["x86_64", "arm64"] = "x86_64"
    prices: list[RegionPrice] = Field(min_length=1)


PurchaseOption = Literal["on-demand", "spot", "reservation", "flex-start", "capacity-block"]


class Purchase(_Strict):
    """How a family can be bought beside (or instead of) its list prices.

    ``reservation_only``: the on-demand list price is only paid through a reservation or
    committed use, never bought on demand; ``reservation_below_gpus``: the same for sizes
    with fewer GPUs. ``other`` lists further ways to buy it (flex-start, capacity blocks)
    whose prices the source does not carry.
    """

    reservation_only: bool = False
    reservation_below_gpus: Annotated[int, Field(ge=2)] | None = None
    other: list[PurchaseOption] = Field(default_factory=list)
    source: Source

    def list_price_option(self, gpus: int) -> PurchaseOption:
        """What buying at the on-demand list price means for a size with ``gpus``."""
        if self.reservation_only:
            return "reservation"
        if self.reservation_below_gpus is not None and gpus < self.reservation_below_gpus:
            return "reservation"
        return "on-demand"


IntraNodeKind = Literal[
    "nvswitch", "nvlink", "pcie", "infinity-fabric", "neuronlink", "ici", "roce"
]
InterNodeKind = Literal[
    "efa", "gpudirect-tcpx", "gpudirect-tcpxo", "gpudirect-rdma", "infiniband", "ethernet"
]


class IntraNode(_Strict):
    """How the accelerators of one instance talk to each other. The bandwidth stays the
    accelerator's (``nvlink_gbs``, or its PCIe link): this says the topology."""

    kind: IntraNodeKind
    generation: Annotated[int, Field(ge=1, le=6)] | None = Field(
        default=None, description="NVLink or PCIe generation."
    )
    note: str | None = None


class InterNode(_Strict):
    """The network between instances of the family for collectives (per instance).

    ``sizes``: the instance types that have this fabric and their Gbps; empty means every
    size has ``gbps``. Other sizes get plain Ethernet at ``ethernet_gbps``."""

    kind: InterNodeKind
    gbps: PositiveFloat = Field(description="Per instance, the largest size with the fabric.")
    sizes: dict[str, PositiveFloat] = Field(default_factory=dict)
    ethernet_gbps: PositiveFloat | None = Field(
        default=None, description="What the sizes without the fabric get (Ethernet)."
    )


class Network(_Strict):
    """A family's network: inside an instance, between instances, and placement."""

    intra_node: IntraNode
    inter_node: InterNode
    cluster_placement: bool = Field(
        description="The cloud can place instances close together (AWS cluster placement "
        "groups, GCP compact placement, Azure InfiniBand scale sets)."
    )
    source: Source


class Family(_Strict):
    name: str = Field(min_length=1)
    title: str | None = None
    price_model: str | None = Field(
        default=None, description="How prices were composed, e.g. 'host + attached GPUs'."
    )
    purchase: Purchase | None = Field(
        default=None, description="Purchase options, where not plain on-demand + spot."
    )
    network: Network | None = Field(
        default=None, description="GPU links inside an instance and the network between them."
    )
    instances: list[InstanceType] = Field(min_length=1)


class CloudCatalog(_Strict):
    schema_version: Literal[1] = 1
    cloud: CloudName
    currency: Literal["USD"] = "USD"
    source: Source
    regions: list[str] = Field(min_length=1)
    families: list[Family] = Field(min_length=1)


class PowerMode(_Strict):
    """One power mode of an edge device (``nvpmodel`` on Jetson): its cap and what it allows."""

    name: str = Field(min_length=1)
    watts: PositiveFloat
    int8_tops: PositiveFloat
    fp16_tflops: PositiveFloat | None = None
    memory_bandwidth_gbs: PositiveFloat | None = None


class EdgeHost(_Strict):
    """The computer an accelerator card or stick needs beside it (it runs nothing alone)."""

    name: str = Field(min_length=1)
    price_usd: PositiveFloat
    power_w: PositiveFloat
    source: Source


class EdgeDevice(_Strict):
    """An edge accelerator or module, priced per unit."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9.\-]*$")
    name: str
    vendor: str
    kind: Literal["module", "m2-card", "usb-stick", "pcie-card", "dev-kit"]
    int8_tops: PositiveFloat
    fp16_tflops: PositiveFloat | None = None
    memory_gb: NonNegativeFloat = Field(
        description="Memory the accelerator can use for weights (0 = streams from host)."
    )
    memory_bandwidth_gbs: PositiveFloat | None = None
    power_w_min: PositiveFloat
    power_w_max: PositiveFloat
    list_price_usd: PositiveFloat
    precisions: list[Precision] = Field(min_length=1)
    power_modes: list[PowerMode] = Field(
        default_factory=list,
        description="Power modes, lowest first; none: one mode at power_w_max with the peaks.",
    )
    host: EdgeHost | None = Field(
        default=None, description="The host it needs (USB stick, M.2 card): price and power."
    )
    source: Source

    def modes(self) -> list[PowerMode]:
        """Its power modes, or one at ``power_w_max`` with the device's peak figures."""
        if self.power_modes:
            return sorted(self.power_modes, key=lambda m: m.watts)
        return [
            PowerMode(
                name=f"{self.power_w_max:g} W",
                watts=self.power_w_max,
                int8_tops=self.int8_tops,
                fp16_tflops=self.fp16_tflops,
                memory_bandwidth_gbs=self.memory_bandwidth_gbs,
            )
        ]


class EdgeFile(_Strict):
    schema_version: Literal[1] = 1
    devices: list[EdgeDevice] = Field(min_length=1)
