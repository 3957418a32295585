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

from recommender.catalog.schema import CloudName, Precision
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

# Physical upper bounds: each far beyond any real job, so that only a typo or a unit slip
# (bytes for GB, seconds for hours) trips them; scoring then never meets an absurd figure.
MAX_SAMPLES = 1e14  # 100 T: 6x the largest published LLM corpus (Llama 3, 15 T tokens)
MAX_EPOCHS = 1e4
MAX_BYTES_PER_SAMPLE = 1e12  # 1 TB: a whole-slide pathology image is ~10 GB
MAX_DECODE_CPU_S_PER_SAMPLE = 3600.0
MAX_READ_GBPS = 1e4  # 10 TB/s: beyond any parallel file system's aggregate
MAX_LOADER_WORKERS = 4096
MAX_NODES = 4096  # one job's instances (the largest published runs: ~2,000 nodes)
MAX_GPUS = 1_000_000  # the largest announced clusters are ~100 k GPUs
MAX_THROUGHPUT = 1e12  # samples/s
MAX_PRICE_PER_HOUR_USD = 1e6
MAX_DEADLINE_HOURS = 87_600.0  # ten years
MAX_BUDGET_USD = 1e11
MAX_REQUESTS_PER_S = 1e9
MAX_TOKENS_PER_S = 1e10
MAX_LATENCY_MS = 3.6e6  # one hour
MAX_POWER_W = 1e9  # 1 GW: the largest planned data-centre campuses
MAX_UNIT_PRICE_USD = 1e7
MAX_DEVICES = 1_000_000_000
MAX_STARTUP_MINUTES = 10_080.0  # one week
MAX_ENERGY_USD_PER_KWH = 10.0  # ~25x the dearest retail electricity
MAX_LIFETIME_YEARS = 50.0
MAX_BATCH_SIZE = 1_000_000_000


class _Model(BaseModel):
    # allow_inf_nan: an infinite or NaN figure is refused as such, before any bound.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class DataSpec(_Model):
    """The data a job reads. Decode cost is CPU-seconds per sample on one core."""

    samples: Annotated[float, Field(gt=0, le=MAX_SAMPLES)] | None = None
    epochs: Annotated[float, Field(gt=0, le=MAX_EPOCHS)] = 1.0
    bytes_per_sample: Annotated[float, Field(ge=0, le=MAX_BYTES_PER_SAMPLE)] = 0.0
    decode_cpu_seconds_per_sample: Annotated[float, Field(ge=0, le=MAX_DECODE_CPU_S_PER_SAMPLE)] = (
        0.0
    )
    device_bytes_per_sample: Annotated[float, Field(ge=0, le=MAX_BYTES_PER_SAMPLE)] | None = Field(
        default=None,
        description="Bytes copied to the accelerator per sample (decoded tensors); "
        "default bytes_per_sample.",
    )
    source: Literal["local-disk", "network", "memory"] = "local-disk"
    read_gbps: Annotated[float, Field(gt=0, le=MAX_READ_GBPS)] | None = Field(
        default=None, description="Storage/network read bandwidth available, GB/s (measured)."
    )
    loader_workers: Annotated[int, Field(ge=1, le=MAX_LOADER_WORKERS)] | None = None


class Baseline(_Model):
    """A measured throughput (samples/s, whole job) on a known accelerator x count.

    When the measurement ran otherwise than the target workload, say how: its per-GPU
    ``batch_size``, ``precision``, ``sequence_length`` or serving ``prompt_tokens`` /
    ``output_tokens``; unset fields are the workload's own. A baseline that ran exactly the
    workload proves that it fits the accelerator it ran on.
    """

    accelerator: str = Field(min_length=1, max_length=100)
    gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] = 1
    throughput: Annotated[float, Field(gt=0, le=MAX_THROUGHPUT)]
    batch_size: PositiveInt | None = None
    precision: Precision | None = None
    sequence_length: PositiveInt | None = None
    prompt_tokens: PositiveInt | None = None
    output_tokens: PositiveInt | None = None


class Constraints(_Model):
    clouds: list[CloudName] | None = Field(default=None, max_length=16)
    regions: list[Annotated[str, Field(max_length=64)]] | None = Field(default=None, max_length=64)
    accelerators: list[Annotated[str, Field(max_length=100)]] | None = Field(
        default=None, max_length=64
    )
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
    max_gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = None
    max_nodes: Annotated[int, Field(ge=1, le=MAX_NODES)] = Field(
        default=64,
        description="Most instances one job may span. A multi-node plan is made only where "
        "one instance cannot hold the job or meet its deadline; 1 keeps every job on one.",
    )
    network: Literal["fast", "ethernet"] = Field(
        default="fast",
        description="Inter-node network a multi-node plan may use: fast (EFA, InfiniBand, "
        "GPUDirect-TCPX/TCPXO/RDMA) or also plain Ethernet.",
    )
    multi_node_spot: bool = Field(
        default=False,
        description="Allow multi-node plans on spot capacity (any node reclaimed stops the "
        "whole job); off by default.",
    )
    min_gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = None
    max_price_per_hour: Annotated[float, Field(gt=0, le=MAX_PRICE_PER_HOUR_USD)] | None = None
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
    deadline_hours: Annotated[float, Field(gt=0, le=MAX_DEADLINE_HOURS)] | None = None
    budget_usd: Annotated[float, Field(gt=0, le=MAX_BUDGET_USD)] | None = None
    requests_per_s: Annotated[float, Field(gt=0, le=MAX_REQUESTS_PER_S)] | None = None
    tokens_per_s: Annotated[float, Field(gt=0, le=MAX_TOKENS_PER_S)] | None = None
    p95_latency_ms: Annotated[float, Field(gt=0, le=MAX_LATENCY_MS)] | None = None
    ttft_ms: Annotated[float, Field(gt=0, le=MAX_LATENCY_MS)] | None = Field(
        default=None,
        description="LLM serving: most time to the first token, ms (for latency_percentile % "
        "of requests arriving at random, else with the slots always full).",
    )
    tpot_ms: Annotated[float, Field(gt=0, le=MAX_LATENCY_MS)] | None = Field(
        default=None,
        description="LLM serving: most time per output token, ms (1000 / tokens/s per user).",
    )
    latency_percentile: Annotated[float, Field(ge=50, lt=100)] | None = Field(
        default=None,
        description="LLM serving: requests arrive at random (Poisson: a public endpoint, "
        "MLPerf's Server scenario), and ttft_ms holds for this percentile of them, waits for a "
        "free slot included (MLPerf: 99); the planner then keeps the slots only as busy as "
        "that allows. tpot_ms holds for it too: the prefills admitted while a request decodes "
        "vary from request to request. A concurrency pinned with batch_size is a closed loop "
        "and ignores it.",
    )
    power_budget_w: Annotated[float, Field(gt=0, le=MAX_POWER_W)] | None = None
    unit_price_usd: Annotated[float, Field(gt=0, le=MAX_UNIT_PRICE_USD)] | None = Field(
        default=None, description="Edge: most one device may cost."
    )
    devices: Annotated[int, Field(ge=1, le=MAX_DEVICES)] | None = Field(
        default=None, description="Edge: units to deploy."
    )
    startup_minutes: Annotated[float, Field(ge=0, le=MAX_STARTUP_MINUTES)] = Field(
        default=10.0,
        description="Training: billed time before the first step (boot, image pull, data "
        "staging, checkpoint load); added to every placement's hours.",
    )
    energy_usd_per_kwh: Annotated[float, Field(gt=0, le=MAX_ENERGY_USD_PER_KWH)] = 0.15
    lifetime_years: Annotated[float, Field(gt=0, le=MAX_LIFETIME_YEARS)] = 3.0


InferenceSpec = ServingSpec


class Workload(_Model):
    """The public workload contract (README.md, "Recommend an instance", lists every field)."""

    name: str = Field(min_length=1, max_length=200)
    kind: WorkloadKind
    model: ModelSpec
    precision: Precision = "bf16"
    batch_size: Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)] = 1
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
        if self.training_job and self.model.execution == "engine":
            raise ValueError(
                "model.execution: engine is an inference engine's build (TensorRT, "
                "FasterTransformer) and does not train; use compiled for torch.compile"
            )
        self._check_tensor_parallel()
        self._check_context_parallel()
        return self

    def _check_context_parallel(self) -> None:
        """A pinned context-parallel degree needs a transformer trained on sequences it can
        split evenly (each rank holds ``sequence_length / cp`` tokens)."""
        degree = self.training.context_parallel
        if not isinstance(degree, int) or degree == 1:
            return
        tokens = self.model.tokens_per_sample
        sequence_model = self.model.resolved_family == "transformer"
        if not self.training_job or not sequence_model or tokens is None:
            raise ValueError(
                "training.context_parallel splits a transformer's training sequences over "
                "GPUs; this workload has none to split (leave it auto)"
            )
        if tokens % degree:
            raise ValueError(
                f"training.context_parallel: {degree} does not divide the sequence length "
                f"{tokens} (each rank holds an equal share of the tokens)"
            )

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
    """Read a workload from a YAML or JSON file, as strictly as the API reads a request
    (:mod:`recommender.workload_file`: size, encoding, strict types, finite numbers).

    Raises :class:`~recommender.catalog.problems.WorkloadError` naming file, line and field.
    """
    from recommender.workload_file import read_workload

    return read_workload(path)
