"""What a prediction costs: training totals, inference fleets, per-million prices.

- Training: hours = samples x epochs / throughput + the start-up time every placement pays
  before its first step (``targets.startup_minutes``, default 10: boot, image pull, data
  staging); cost = hours x price. Spot capacity is preempted now and then: spot compute hours
  carry ``SPOT_RESTART_OVERHEAD`` extra for restarts from the last checkpoint.
- Inference: replicas = ceil(target rate / per-instance rate); monthly = replicas x price x
  730 h; cost per million requests (or tokens, for LLM serving) at full load.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.scoring.predict import Predictions
from recommender.workload import Workload

__all__ = ["HOURS_PER_MONTH", "SPOT_RESTART_OVERHEAD", "Costs", "costs_of"]

FloatArray = npt.NDArray[np.float64]

HOURS_PER_MONTH = 730.0
SPOT_RESTART_OVERHEAD = 0.10


@dataclass(frozen=True)
class Costs:
    hours: FloatArray  # training: wall-clock hours of the job (nan for inference)
    total_usd: FloatArray  # training: the job; inference: one month of the fleet
    replicas: FloatArray
    monthly_usd: FloatArray
    per_million_usd: FloatArray
    per_million_unit: str | None


def costs_of(w: Workload, p: Predictions, price: FloatArray, spot: npt.NDArray[np.bool_]) -> Costs:
    with np.errstate(divide="ignore", invalid="ignore"):
        if w.kind == "training":
            hours = w.total_samples / p.throughput / 3600.0
            hours = np.where(spot, hours * (1.0 + SPOT_RESTART_OVERHEAD), hours)
            hours = hours + w.targets.startup_minutes / 60.0
            nan = np.full_like(hours, np.nan)
            return Costs(hours, hours * price, np.ones_like(hours), nan, nan, None)
        rate = p.throughput
        unit = "requests"
        target: float | FloatArray | None = w.targets.requests_per_s
        if p.tokens_per_s is not None:
            unit = "tokens"
            rate = p.tokens_per_s
            if w.targets.tokens_per_s:
                target = w.targets.tokens_per_s
            elif w.targets.requests_per_s:
                target = w.targets.requests_per_s * (p.tokens_per_s / p.throughput)
        replicas = np.ceil(target / rate) if target is not None else np.ones_like(rate)
        replicas = np.where(np.isfinite(replicas), np.maximum(replicas, 1.0), np.inf)
        monthly = replicas * price * HOURS_PER_MONTH
        per_million = price / 3600.0 / rate * 1e6
        hours = np.full_like(rate, np.nan)
        return Costs(hours, monthly, replicas, monthly, per_million, unit)
