"""Measured capabilities of accelerators (``achievable.yaml``): matmul rate per dtype, memory
bandwidth and all-reduce bus bandwidth, each from a published measurement with its source, per
die the DRAM latency in clock cycles, and per part its datasheet boost clock.

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

__all__ = [
    "BoostClock",
    "FullPowerDie",
    "Measured",
    "MemoryLatency",
    "boost_clocks",
    "full_power_dies",
    "measured",
    "memory_latency_cycles",
]


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


class FullPowerDie(BaseModel):
    """The board that runs a die at its full power: the reference a power-capped board of
    the same die (L4 for AD104, A10 for GA102) is compared with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    part: str = Field(min_length=1)
    tdp_w: float = Field(gt=0)
    fp32_tflops: float = Field(gt=0)
    source: str = Field(min_length=1)


class MemoryLatency(BaseModel):
    """A die's DRAM latency in its own clock cycles, as a pointer chase measures it on one of
    its boards (``part``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    part: str = Field(min_length=1)
    cycles: float = Field(gt=0)
    source: str = Field(min_length=1)


class BoostClock(BaseModel):
    """A part's datasheet boost clock: the clock a kernel's fixed cycles run at."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mhz: float = Field(gt=0)
    source: str = Field(min_length=1)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    accelerators: dict[str, Measured]
    full_power_dies: dict[str, FullPowerDie] = Field(default_factory=dict)
    memory_latency_cycles: dict[str, MemoryLatency] = Field(default_factory=dict)
    boost_clock_mhz: dict[str, BoostClock] = Field(default_factory=dict)


@cache
def _file() -> _File:
    text = resources.files("recommender.scoring").joinpath("achievable.yaml").read_text("utf-8")
    return _File.model_validate(yaml.safe_load(text))


def measured() -> dict[str, Measured]:
    """Measured figures by accelerator id (the packaged ``achievable.yaml``)."""
    return _file().accelerators


def full_power_dies() -> dict[str, FullPowerDie]:
    """Full-power reference board per die (chip name, as the catalog's ``chip``)."""
    return _file().full_power_dies


def memory_latency_cycles() -> dict[str, MemoryLatency]:
    """Measured DRAM latency per die (chip name, as the catalog's ``chip``)."""
    return _file().memory_latency_cycles


def boost_clocks() -> dict[str, BoostClock]:
    """Datasheet boost clock per accelerator id (the catalog's ``id``)."""
    return _file().boost_clock_mhz
