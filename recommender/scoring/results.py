"""What scoring returns: predictions, picks and recommendations (the public output contract).

Field names follow DESIGN.md's ``recommend`` and ``predict`` JSON; anything beyond them is
additive. All models are pydantic, so the CLI, the HTTP API and library callers serialise the
same shapes with ``model_dump(mode="json")``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Alternative",
    "Bottleneck",
    "Breakdown",
    "Cost",
    "MemoryFit",
    "Objective",
    "Pick",
    "Predicted",
    "Prediction",
    "Recommendation",
    "WorkloadClass",
]

Bottleneck = Literal[
    "compute", "memory-bandwidth", "host-transfer", "input-pipeline", "interconnect"
]
Objective = Literal["cheapest", "fastest", "balanced"]
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


class Prediction(_Out):
    """``recommender predict``: one workload on one accelerator x count."""

    accelerator: str
    gpus: int
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
    pricing: Literal["on-demand", "spot", "purchase"]
    price_per_hour: float
    predicted: Predicted
    cost: Cost
    why: list[str]
    limits: list[str] = Field(default_factory=list)
    alternatives: list[Alternative] = Field(default_factory=list)
    pareto_optimal: bool = False


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
