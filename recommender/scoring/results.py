"""What scoring returns: predictions, picks and recommendations (the public output contract).

Field names follow DESIGN.md's ``recommend`` and ``predict`` JSON; anything beyond them is
additive. All models are pydantic, so the CLI, the HTTP API and library callers serialise the
same shapes with ``model_dump(mode="json")``.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AccuracyClass",
    "Alternative",
    "Bottleneck",
    "Breakdown",
    "CatalogFreshness",
    "Cost",
    "ExpectedError",
    "Landscape",
    "MemoryFit",
    "Objective",
    "OfferPoint",
    "Pick",
    "Plan",
    "Predicted",
    "Prediction",
    "Recommendation",
    "WorkloadClass",
]

Bottleneck = Literal[
    "compute", "memory-bandwidth", "host-transfer", "input-pipeline", "interconnect"
]
Objective = Literal["cheapest", "fastest", "balanced"]
# The classes benchmarks/accuracy.py scores predictions in (``heldout.accuracy_class``).
AccuracyClass = Literal["training", "inference", "llm-serving", "llm-decode"]
WorkloadClass = Literal[
    "large-scale-training", "training", "high-throughput-inference", "inference", "edge"
]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class MemoryFit(_Out):
    """Device memory needed per GPU against what the accelerator has."""

    fits: bool
    needed_gb: float
    available_gb: float
    shortfall_gb: float = 0.0
    components_gb: dict[str, float] = Field(default_factory=dict)
    remedies: list[str] = Field(default_factory=list)


class Breakdown(_Out):
    """Seconds per step spent in each stage (stages overlap; the largest bounds the step)."""

    compute_s: float
    memory_s: float
    host_transfer_s: float
    input_pipeline_s: float
    interconnect_s: float


class Plan(_Out):
    """How the workload is assumed to run on a pick: the recipe the planner chose (or the
    user pinned), its parallelism, and what fills each GPU's memory."""

    data_parallel: int = Field(description="Model copies (data-parallel ranks) per instance.")
    tensor_parallel: int = 1
    context_parallel: int = Field(
        default=1, description="GPUs each training sequence is split over (ring attention)."
    )
    pipeline_parallel: int = Field(
        default=1,
        description="Pipeline stages: the model's layers split over GPUs, across nodes or, "
        "as the workload states, over the GPUs of one instance.",
    )
    expert_parallel: int = Field(default=1, description="Ranks the MoE experts are split over.")
    sharding: Literal["none", "zero1", "zero2", "zero3", "hybrid"] | None = Field(
        default=None,
        description="ZeRO stage, or hybrid: ZeRO-3 / FSDP inside each node, replicas across.",
    )
    checkpointing: Literal["none", "selective", "full"] | None = None
    attention: Literal["flash", "sdpa", "eager"] | None = None
    micro_batch: int | None = None
    gradient_accumulation: int | None = None
    global_batch: int | None = Field(default=None, description="Samples per optimizer step.")
    offload: Literal["none", "optimizer"] | None = None
    concurrency: int | None = Field(
        default=None, description="LLM serving: sequences one copy decodes at once."
    )
    weights: str | None = Field(default=None, description="Weight format (serving).")
    kv_cache: str | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    memory_gb: dict[str, float] = Field(
        default_factory=dict, description="Per GPU: weights, gradients, optimizer, ..."
    )
    assumed: list[str] = Field(
        default_factory=list, description="What the plan changed from the workload as given."
    )


class ExpectedError(_Out):
    """How far off predictions of this kind have been on published measurements the engine
    was not fitted to (``benchmarks/accuracy.py``, leave-one-source-out)."""

    accuracy_class: AccuracyClass
    with_baseline: bool = Field(
        description="Scaled from a measurement of this workload (a baseline or a probe "
        "profile of it): judged by the error of that scaling between accelerators."
    )
    median_pct: float = Field(description="Median absolute error held out, in percent.")
    mean_pct: float = Field(description="Mean absolute error held out, in percent.")
    scored: int = Field(description="Held-out pairs (with a baseline) or rows (without).")
    method: str


class Prediction(_Out):
    """``recommender predict``: one workload on one accelerator x count."""

    accelerator: str
    gpus: int
    nodes: int = Field(default=1, description="Instances (predict --nodes).")
    total_gpus: int | None = Field(default=None, description="gpus x nodes.")
    throughput: float = Field(description="Samples (training) or requests (inference) per s.")
    step_time_s: float
    bottleneck: Bottleneck
    fits_in_memory: bool
    utilization: float = Field(description="Share of the step the accelerator computes.")
    tokens_per_s: float | None = None
    scaling_efficiency: float = 1.0
    breakdown: Breakdown
    memory: MemoryFit
    calibrated_from: str | None = Field(
        default=None, description="The baseline measurement this prediction was scaled from."
    )
    notes: list[str] = Field(default_factory=list)
    plan: Plan | None = None
    expected_error: ExpectedError | None = Field(
        default=None, description="The held-out error of predictions of this kind."
    )


class Predicted(_Out):
    throughput: float
    step_time_s: float
    total_hours: float | None
    bottleneck: Bottleneck
    utilization: float
    fits_in_memory: bool = True
    tokens_per_s: float | None = None
    p95_latency_ms: float | None = None
    scaling_efficiency: float = 1.0


class Cost(_Out):
    total_usd: float | None
    per_hour_usd: float
    replicas: int = 1
    monthly_usd: float | None = None
    per_million_usd: float | None = Field(
        default=None, description="Inference: USD per million requests (or tokens, LLMs)."
    )
    per_million_unit: Literal["requests", "tokens"] | None = None
    energy_usd: float | None = None


class Alternative(_Out):
    """The same instance elsewhere or priced otherwise (the spot variant, another region),
    or ``same-choice``: another instance type with the same accelerators, price and
    predicted time in the same region (e.g. a variant without local SSD)."""

    relation: Literal["spot-variant", "on-demand-variant", "other-region", "same-choice"]
    instance_type: str | None = None
    cloud: str
    region: str | None
    pricing: str
    price_per_hour: float
    total_usd: float | None


class Pick(_Out):
    rank: int
    cloud: str
    region: str | None
    instance_type: str
    accelerator: str
    gpus: int
    nodes: int = Field(default=1, description="Instances the placement spans (multi-node).")
    total_gpus: int | None = Field(default=None, description="gpus x nodes.")
    pricing: Literal["on-demand", "spot", "purchase"]
    price_per_hour: float
    purchase: Literal["on-demand", "spot", "reservation", "unit"] = Field(
        default="on-demand",
        description="How it is bought: on demand, spot, only through a reservation or "
        "committed use, or per unit (edge devices).",
    )
    predicted: Predicted
    cost: Cost
    why: list[str]
    limits: list[str] = Field(default_factory=list)
    alternatives: list[Alternative] = Field(default_factory=list)
    pareto_optimal: bool = False
    plan: Plan | None = None
    memory: MemoryFit | None = Field(
        default=None,
        description="Memory per GPU of this placement under its plan (components: the "
        "plan's memory_gb) against what a workload can use of the accelerator.",
    )


class OfferPoint(_Out):
    """One feasible offer as the cost-vs-time chart plots it (the ranking's cost and time)."""

    cloud: str
    region: str | None
    instance_type: str
    accelerator: str
    gpus: int
    nodes: int = Field(default=1, description="Instances of a multi-node placement.")
    pricing: str
    price_per_hour: float
    cost_usd: float = Field(description="The ranking's cost (see Landscape.cost_label).")
    time_s: float = Field(description="The ranking's time in seconds (Landscape.time_label).")
    bottleneck: Bottleneck
    pareto_optimal: bool = Field(description="On the cost/time frontier of every feasible offer.")
    rank: int | None = Field(default=None, description="The pick's rank, when it is a pick.")


class Landscape(_Out):
    """Every feasible offer's predicted cost and time, for the cost-vs-time picture."""

    cost_label: str
    time_label: str
    points: list[OfferPoint]
    omitted: int = Field(default=0, description="Feasible offers left out past the cap.")


class CatalogFreshness(_Out):
    """How old the prices behind an answer are."""

    retrieved: dt.date | None = Field(description="When the oldest cloud price file was read.")
    price_age_days: int | None = Field(description="Days from `retrieved` to the answer.")
    flagged_prices: int = Field(
        default=0, description="Price rows `catalog validate` flags as likely mispriced."
    )


class Recommendation(_Out):
    """``recommender recommend`` / ``POST /v1/recommendations``."""

    workload: str
    workload_class: WorkloadClass
    objective: Objective
    picks: list[Pick]
    advice: list[str]
    offers_considered: int
    offers_feasible: int
    pareto: list[int] = Field(
        default_factory=list, description="Ranks of the picks on the cost/time Pareto frontier."
    )
    excluded: dict[str, int] = Field(
        default_factory=dict, description="Why offers were ruled out, with counts."
    )
    landscape: Landscape | None = Field(
        default=None, description="Every feasible offer's cost and time, when asked for."
    )
    catalog: CatalogFreshness | None = Field(
        default=None, description="How old the catalog's prices are."
    )
    expected_error: ExpectedError | None = Field(
        default=None,
        description="The held-out error of the picks' predicted times (none for edge devices).",
    )
