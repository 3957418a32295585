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

__all__ = [
    "Baseline",
    "Constraints",
    "DataSpec",
    "InferenceSpec",
    "ModelSpec",
    "Targets",
    "TransformerArch",
    "Workload",
    "WorkloadKind",
    "load_workload",
]

WorkloadKind = Literal["training", "inference", "edge"]
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
MAX_TOKENS_PER_REQUEST = 10_000_000  # Llama 4 Scout's 10 M-token context, the longest published
MAX_SERVING_BATCH = 1_000_000
MAX_BATCH_SIZE = 1_000_000_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TransformerArch(_Model):
    """A transformer described by shape; parameters and FLOPs are derived from it.

    FLOPs per token follow Kaplan et al. (2020), "Scaling Laws for Neural Language Models",
    Table 1: forward = 2N + attention, with N the non-embedding parameters a token passes
    through (12 n_layer d_model^2 for d_ff = 4 d_model); a training step
    (forward + backward) is 3x the forward. ``encoder-decoder`` has ``layers`` in each stack,
    the decoder's layers adding cross-attention. Mixture-of-experts FFNs (``experts`` > 1,
    top-1 routing as in Switch Transformers) multiply the FFN parameters but not the FLOPs.
    """

    layers: PositiveInt
    hidden_size: PositiveInt
    sequence_length: PositiveInt
    vocab_size: Annotated[int, Field(ge=0)] = 0
    heads: PositiveInt | None = Field(default=None, description="Default: hidden_size / 64.")
    ffn_multiplier: Positive = 4.0
    experts: PositiveInt = 1
    kind: Literal["decoder", "encoder", "encoder-decoder"] = "decoder"

    @property
    def stacks(self) -> int:
        return 2 if self.kind == "encoder-decoder" else 1

    def _layer_parameters(self, experts: int) -> float:
        d, f = float(self.hidden_size), self.ffn_multiplier
        attention = 4.0 * d * d
        ffn = 2.0 * f * d * d * experts
        per_stack = float(self.layers) * (attention + ffn)
        if self.kind == "encoder-decoder":
            per_stack += float(self.layers) * (attention + attention + ffn)  # decoder + cross
        return per_stack

    @property
    def non_embedding_parameters(self) -> float:
        return self._layer_parameters(self.experts)

    @property
    def parameters(self) -> float:
        return self.non_embedding_parameters + float(self.vocab_size) * self.hidden_size

    def attention_flops_per_token(self) -> float:
        """Score (Q K^T) and value (A V) products: 4 n_ctx d_model per layer, the whole
        matrix as eager attention computes it (Kaplan's table counts 2 n_ctx d_attn)."""
        layers = self.layers * (3 if self.kind == "encoder-decoder" else 1)  # + cross-attn
        return 4.0 * layers * self.sequence_length * self.hidden_size

    def forward_flops_per_token(self) -> float:
        active = self._layer_parameters(1)
        logits = 2.0 * self.vocab_size * self.hidden_size
        return 2.0 * active + self.attention_flops_per_token() + logits

    def forward_flops_per_sequence(self) -> float:
        return self.forward_flops_per_token() * self.sequence_length


class ModelSpec(_Model):
    """The model: give ``parameters`` and ``flops_per_sample``, or an ``architecture``.

    ``flops_per_sample`` is what one sample costs in the workload's kind: forward + backward
    for training, forward for inference. ``family`` steers defaults (activation memory,
    typical bottlenecks); ``activation_bytes_per_sample`` overrides the activation estimate.
    """

    parameters: Positive | None = None
    flops_per_sample: Positive | None = None
    architecture: TransformerArch | None = None
    family: Literal["transformer", "cnn", "recsys", "other"] | None = None
    activation_bytes_per_sample: Positive | None = None
    memory_bytes_per_sample: Positive | None = Field(
        default=None,
        description="Device-memory traffic per sample (bytes read + written), when known.",
    )
    execution: Literal["eager", "compiled"] = Field(
        default="eager",
        description="eager PyTorch, or compiled/fused kernels (torch.compile, TensorRT).",
    )
    kernels_per_forward: PositiveInt | None = Field(
        default=None, description="GPU kernels one forward pass launches, when known."
    )
    optimizer_step: bool = Field(
        default=True, description="Training steps include an optimizer (Adam) update."
    )

    @model_validator(mode="after")
    def _enough_to_size(self) -> Self:
        if self.architecture is None and (self.parameters is None or self.flops_per_sample is None):
            missing = [n for n in ("parameters", "flops_per_sample") if getattr(self, n) is None]
            raise ValueError(
                f"give {' and '.join(missing)}, or an architecture "
                "(layers, hidden_size, sequence_length) to derive them from"
            )
        return self

    @property
    def resolved_family(self) -> str:
        if self.family is not None:
            return self.family
        return "transformer" if self.architecture is not None else "other"


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
    """A measured throughput (samples/s, whole job) on a known accelerator x count."""

    accelerator: str = Field(min_length=1)
    gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] = 1
    throughput: Annotated[float, Field(gt=0, le=MAX_THROUGHPUT)]


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
    max_gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = None
    min_gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = None
    max_price_per_hour: Annotated[float, Field(gt=0, le=MAX_PRICE_PER_HOUR_USD)] | None = None

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


class InferenceSpec(_Model):
    """LLM serving shape; without it an inference request is one forward of one sample."""

    prompt_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS_PER_REQUEST)] = 512
    output_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS_PER_REQUEST)] = 256
    max_batch: Annotated[int, Field(ge=1, le=MAX_SERVING_BATCH)] = 64


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
    inference: InferenceSpec | None = None

    @model_validator(mode="after")
    def _kind_needs(self) -> Self:
        if self.kind == "training" and self.data.samples is None:
            raise ValueError("training needs data.samples (and data.epochs) to predict hours")
        return self

    # -- derived sizes ----------------------------------------------------------------
    @property
    def parameters(self) -> float:
        if self.model.parameters is not None:
            return self.model.parameters
        assert self.model.architecture is not None
        return self.model.architecture.parameters

    @property
    def flops_per_sample(self) -> float:
        """FLOPs of one sample in this workload's kind (training: forward + backward)."""
        if self.model.flops_per_sample is not None:
            return self.model.flops_per_sample
        arch = self.model.architecture
        assert arch is not None
        forward = arch.forward_flops_per_sequence()
        return 3.0 * forward if self.kind == "training" else forward

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
