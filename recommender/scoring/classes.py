"""Workload classes (large-scale training, training, high-throughput inference, inference,
edge) and how each shapes the search.

- Large-scale training (>= 1e20 FLOPs in total, or state too big for one 80 GB GPU) is not
  offered placements that would run for more than ``MAX_JOB_DAYS``: a single small GPU that
  would need a year is not a real option, however cheap per hour.
- High-throughput inference (a target rate, LLM serving, or batches of 8 and more) is costed
  as a fleet: replicas to reach the rate, monthly cost, cost per million.
- Edge workloads are placed on edge devices, not cloud offers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from recommender.catalog.offers import OffersTable
from recommender.scoring.cost import Costs
from recommender.scoring.engine import Context
from recommender.scoring.memory import usable_bytes
from recommender.scoring.predict import Predictions
from recommender.scoring.results import WorkloadClass

__all__ = ["LARGE_SCALE_FLOPS", "MAX_JOB_DAYS", "search_mask", "workload_class"]

LARGE_SCALE_FLOPS = 1e20  # ~220 h of one A100 at 40 % of its bf16 peak
MAX_JOB_DAYS = 30.0


def workload_class(ctx: Context, t: OffersTable, p: Predictions) -> WorkloadClass:
    w = ctx.workload
    if w.kind == "edge":
        return "edge"
    if w.kind == "training":
        total = w.total_samples * w.flops_per_sample
        too_big = ctx.state.total > usable_bytes(80.0)
        return "large-scale-training" if total >= LARGE_SCALE_FLOPS or too_big else "training"
    rate = w.targets.requests_per_s or w.targets.tokens_per_s
    if rate or w.is_llm_serving or w.batch_size >= 8:
        return "high-throughput-inference"
    return "inference"


def search_mask(
    cls: WorkloadClass, ctx: Context, t: OffersTable, p: Predictions, c: Costs
) -> tuple[npt.NDArray[np.bool_], str | None]:
    """Rows the class allows, and the reason given for the others."""
    if cls == "large-scale-training":
        with np.errstate(invalid="ignore"):
            ok = ~(c.hours > MAX_JOB_DAYS * 24)
        return ok, f"impractical for large-scale training (over {MAX_JOB_DAYS:g} days)"
    return np.ones(len(t), dtype=bool), None
