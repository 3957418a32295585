"""Measured capabilities of accelerators (``achievable.yaml``): matmul rate per dtype, memory
bandwidth and all-reduce bus bandwidth, each from a published measurement with its source.

Where a figure exists the predictor starts from it instead of the datasheet times a fitted
efficiency, so a chip's achievable fraction is tied to something measured (the same
quantities ``recommender probe`` measures on a user's machine) rather than learned as a free
factor from end-to-end throughputs.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Measured", "measured"]


class Measured(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    matmul_tflops: dict[str, float] = Field(default_factory=dict)
    memory_bandwidth_gbs: float | None = Field(default=None, gt=0)
    allreduce_busbw_gbs: float | None = Field(default=None, gt=0)
    source: str = Field(min_length=1)

    def matmul(self, precision: str) -> float | None:
        """TFLOP/s measured for ``precision`` (fp16 falls back to bf16 and back)."""
        if precision in self.matmul_tflops:
            return self.matmul_tflops[precision]
        if precision in ("bf16", "fp16"):
            return self.matmul_tflops.get("bf16") or self.matmul_tflops.get("fp16")
        return None


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    accelerators: dict[str, Measured]


@cache
def measured() -> dict[str, Measured]:
    """Measured figures by accelerator id (the packaged ``achievable.yaml``)."""
    text = resources.files("recommender.scoring").joinpath("achievable.yaml").read_text("utf-8")
    return dict(_File.model_validate(yaml.safe_load(text)).accelerators)
