"""What the user describes: the workload to place (the public YAML/JSON contract).

A workload says what kind of job it is (training, inference, edge), how big the model is
(parameters and FLOPs per sample, or a transformer architecture from which both are
derived), the numeric precision, the batch, the data, an optional baseline measurement, and
the constraints and targets that bound the search. Sizes are SI units; FLOPs are numbers.
Impossible values are refused with the field named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from recommender.catalog.problems import WorkloadError, display_path
from recommender.catalog.schema import CloudName, Precision
from recommender.catalog.yamlfile import load_document
from recommender.models.arch import GivenArch, TransformerArch, VisionTransformerArch
from recommender.models.spec import ModelSpec
from recommender.recipe import ServingSpec, TrainingRecipe

__all__ = [
    "Baseline",
    "Constraints",
    "DataSpec",
    "InferenceSpec",
    "ModelSpec",
    "ServingSpec",
    "Targets",
    "TrainingRecipe",
    "TransformerArch",
    "Workload",
    "WorkloadKind",
    "load_workload",
]

WorkloadKind = Literal["training", "inference", "edge"]
# Training FLOPs per forward FLOP: forward + backward (2x forward: activation and weight
# gradients), Kaplan et al. 2020, section 2.1; LoRA skips the frozen weights' gradients.
FULL_TRAINING_FLOPS_FACTOR = 3.0
LORA_FLOPS_FACTOR = 2.0
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
PositiveInt = Annotated[int, Field(ge=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DataSpec(_Model):
    """The data a job reads. Decode cost is CPU-seconds per sample on one core."""

    samples: Positive | None = None
    epochs: Positive = 1.0
    bytes_per_sample: NonNegative = 0.0
    decode_cpu_seconds_per_sample: NonNegative = 0.0
    device_bytes_per_sample: NonNegative | None = Field(
        default=None,
        description="Bytes copied to the accelerator per sample (decoded tensors); "
        "default bytes_per_sample.",
    )
    source: Literal["local-disk", "network", "memory"] = "local-disk"
    read_gbps: Positive | None = Field(
        default=None, description="Storage/network read bandwidth available, GB/s (measured)."
    )
    loader_workers: PositiveInt | None = None


class Baseline(_Model):
    """A measured throughput (samples/s, whole job) on a known accelerator x count.

    When the measurement ran otherwise than the target workload, say how: its per-GPU
    ``batch_size``, ``precision``, ``sequence_length`` or serving ``prompt_tokens`` /
    ``output_tokens``; unset fields are the workload's own. A baseline that ran exactly the
    workload proves that it fits the accelerator it ran on.
    """

    accelerator: str = Field(min_length=1, max_length=200)
    gpus: PositiveInt = 1
    throughput: Positive
    batch_size: PositiveInt | None = None
    precision: Precision | None = None
    sequence_length: PositiveInt | None = None
    prompt_tokens: PositiveInt | None = None
    output_tokens: PositiveInt | None = None


class Constraints(_Model):
    clouds: list[CloudName] | None = None
    regions: list[str] | None = None
    accelerators: list[str] | None = None
    spot: bool = Field(
        default=False,
        description="true: spot capacity is acceptable (priced beside on-demand); "
        "false (default): on-demand only, since spot can be reclaimed at any time.",
    )
    spot_only: bool = False
    purchase: list[Literal["on-demand", "spot", "reservation"]] | None = Field(
        default=None,
        description="How offers may be bought: on-demand, spot, reservation (a list price "
        "the cloud sells only through a reservation or committed use, e.g. GCP A4). Default: "
        "what can be bought now without a reservation: on-demand, plus spot when spot is true.",
    )
    max_gpus: PositiveInt | None = None
    min_gpus: PositiveInt | None = None
    max_price_per_hour: Positive | None = None
    min_vcpus: Positive | None = Field(
        default=None,
        description="Host vCPUs per instance at least; default: derived from the workload "
        "(data-loader workers per GPU for training, the serving loop for inference).",
    )
    min_memory_gb: Positive | None = Field(
        default=None,
        description="Host RAM (GB) per instance at least; default: enough to load the weights.",
    )
    arch: Literal["x86_64", "arm64", "any"] = Field(
        default="x86_64", description="Host CPU architecture; arm64 (Graviton, Grace) is opt-in."
    )
    frameworks: (
        list[
            Literal[
                "pytorch-cuda",
                "pytorch-rocm",
                "pytorch-xla",
                "jax",
                "tensorflow",
                "neuron",
                "gaudi",
            ]
        ]
        | None
    ) = Field(
        default=None,
        description="Frameworks the workload can run on; default: PyTorch on CUDA or ROCm. "
        "Add jax / pytorch-xla for TPUs, neuron for Trainium / Inferentia, gaudi for Gaudi.",
    )

    @model_validator(mode="after")
    def _gpu_bounds(self) -> Self:
        if (
            self.max_gpus is not None
            and self.min_gpus is not None
            and self.min_gpus > self.max_gpus
        ):
            raise ValueError(f"min_gpus ({self.min_gpus}) exceeds max_gpus ({self.max_gpus})")
        return self


class Targets(_Model):
    deadline_hours: Positive | None = None
    budget_usd: Positive | None = None
    requests_per_s: Positive | None = None
    tokens_per_s: Positive | None = None
    p95_latency_ms: Positive | None = None
    ttft_ms: Positive | None = Field(
        default=None, description="LLM serving: most time to the first token (p95), ms."
    )
    tpot_ms: Positive | None = Field(
        default=None,
        description="LLM serving: most time per output token, ms (1000 / tokens/s per user).",
    )
    power_budget_w: Positive | None = None
    unit_price_usd: Positive | None = Field(
        default=None, description="Edge: most one device may cost."
    )
    devices: PositiveInt | None = Field(default=None, description="Edge: units to deploy.")
    startup_minutes: NonNegative = Field(
        default=10.0,
        description="Training: billed time before the first step (boot, image pull, data "
        "staging, checkpoint load); added to every placement's hours.",
    )
    energy_usd_per_kwh: Positive = 0.15
    lifetime_years: Positive = 3.0


InferenceSpec = ServingSpec


class Workload(_Model):
    """The public workload contract (see DESIGN.md)."""

    name: str = Field(min_length=1, max_length=200)
    kind: WorkloadKind
    model: ModelSpec
    precision: Precision = "bf16"
    batch_size: PositiveInt = 1
    data: DataSpec = Field(default_factory=DataSpec)
    baseline: Baseline | None = None
    constraints: Constraints = Field(default_factory=Constraints)
    targets: Targets = Field(default_factory=Targets)
    inference: ServingSpec | None = None
    training: TrainingRecipe = Field(default_factory=TrainingRecipe)

    @model_validator(mode="after")
    def _kind_needs(self) -> Self:
        if self.kind == "training" and self.data.samples is None:
            raise ValueError("training needs data.samples (and data.epochs) to predict hours")
        arch = self.model.architecture
        needs_tokens = isinstance(arch, TransformerArch) and self.model.flops_per_sample is None
        if needs_tokens and self.model.tokens_per_sample is None and self.inference is None:
            raise ValueError(
                "model.sequence_length: a transformer needs the tokens of one sample "
                "(model.sequence_length or model.architecture.sequence_length)"
            )
        self._check_tensor_parallel()
        return self

    def _check_tensor_parallel(self) -> None:
        """A pinned tensor-parallel degree must split the attention heads evenly (Megatron-LM
        shards heads, and the KV heads of GQA, across ranks)."""
        t = self.model.transformer
        pinned = [("training.tensor_parallel", self.training.tensor_parallel)]
        if self.inference is not None:
            pinned.append(("inference.tensor_parallel", self.inference.tensor_parallel))
        for field, degree in pinned:
            if not isinstance(degree, int) or degree == 1 or t is None:
                continue
            if t.n_heads % degree:
                raise ValueError(
                    f"{field}: {degree} does not divide the model's {t.n_heads} attention "
                    f"heads (try {', '.join(str(d) for d in (2, 4, 8) if t.n_heads % d == 0)})"
                )

    # -- derived sizes ----------------------------------------------------------------
    @property
    def parameters(self) -> float:
        """Every weight of the model (MoE: all experts)."""
        if self.model.parameters is not None:
            return self.model.parameters
        assert self.model.architecture is not None
        return self.model.architecture.parameters

    @property
    def active_parameters(self) -> float:
        """Weights one token (or sample) passes through: MoE reads only its routed experts."""
        arch = self.model.architecture
        if self.model.parameters is not None or arch is None:
            return self.parameters
        return arch.active_parameters

    @property
    def forward_flops_per_sample(self) -> float:
        """Model FLOPs of one sample's forward pass (the whole attention matrix counted, as
        MFU figures count it); diffusion inference runs every denoising step."""
        spec, arch = self.model, self.model.architecture
        if spec.flops_per_sample is not None:
            return spec.flops_per_sample / (self.training_flops_factor if self.training_job else 1)
        if isinstance(arch, GivenArch):
            steps = arch.denoising_steps or 1
            return arch.forward_flops * (1 if self.training_job else steps)
        if isinstance(arch, VisionTransformerArch):
            return arch.forward_flops()
        tokens = spec.tokens_per_sample
        if tokens is None and self.inference is not None:
            tokens = self.inference.prompt_tokens
        assert isinstance(arch, TransformerArch) and tokens is not None
        return arch.forward_flops_per_token(tokens) * tokens

    @property
    def training_job(self) -> bool:
        return self.kind == "training"

    @property
    def training_flops_factor(self) -> float:
        """Training FLOPs / forward FLOPs: 3 (forward, backward for activations and for
        weights; Kaplan et al. 2020); LoRA freezes the base, so its weight gradients are not
        computed: ~2 (Hu et al. 2021, section 4.2 reports the saving)."""
        return FULL_TRAINING_FLOPS_FACTOR if self.training.lora is None else LORA_FLOPS_FACTOR

    @property
    def flops_per_sample(self) -> float:
        """FLOPs of one sample in this workload's kind (training: forward + backward)."""
        if self.model.flops_per_sample is not None:
            return self.model.flops_per_sample
        forward = self.forward_flops_per_sample
        return forward * self.training_flops_factor if self.training_job else forward

    @property
    def sequence_length(self) -> int | None:
        return self.model.tokens_per_sample

    @property
    def is_llm_serving(self) -> bool:
        return self.kind == "inference" and self.inference is not None

    @property
    def total_samples(self) -> float:
        return (self.data.samples or 0.0) * self.data.epochs


def load_workload(path: str | Path) -> Workload:
    """Read a workload from a YAML or JSON file (JSON is YAML).

    Raises :class:`~recommender.catalog.problems.WorkloadError` naming file, line and field.
    """
    p = Path(path)
    return load_document(p, Workload, display=display_path(p), error=WorkloadError).model
