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
    """A measured throughput (samples/s, whole job) on a known accelerator x count."""

    accelerator: str = Field(min_length=1, max_length=100)
    gpus: PositiveInt = 1
    throughput: Positive


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
    max_gpus: PositiveInt | None = None
    min_gpus: PositiveInt | None = None
    max_price_per_hour: Positive | None = None

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


class InferenceSpec(_Model):
    """LLM serving shape; without it an inference request is one forward of one sample."""

    prompt_tokens: PositiveInt = 512
    output_tokens: PositiveInt = 256
    max_batch: PositiveInt = 64


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
    """Read a workload from a YAML or JSON file (JSON is YAML).

    Raises :class:`~recommender.catalog.problems.WorkloadError` naming file, line and field.
    """
    p = Path(path)
    return load_document(p, Workload, display=display_path(p), error=WorkloadError).model
