"""The spec-sheet facts the probe compares its figures with, as its caller hands them in.

``probes`` measures a machine; it does not read the product's catalog (DESIGN.md: the
probe depends on the profile schema only). Whoever runs it (``recommender probe``) loads
the accelerator spec sheets and passes them in :class:`~probes.runner.ProbeOptions`; any
objects with these attributes do (``recommender.catalog``'s ``Accelerator`` and
``AcceleratorNames`` among them). ``tests/probes`` checks the literals below against the
catalog's and keeps the import contract (no ``recommender.catalog`` import here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

__all__ = ["CloudName", "HostLink", "Peaks", "Precision", "SpecIndex", "SpecSheet"]

# The same values as recommender.catalog.schema's Precision and CloudName.
Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8"]
CloudName = Literal["aws", "gcp", "azure"]


class HostLink(Protocol):
    @property
    def gbs_per_direction(self) -> float: ...


class Peaks(Protocol):
    def get(self, precision: Precision) -> float | None: ...


class SpecSheet(Protocol):
    """One accelerator's published figures."""

    @property
    def id(self) -> str: ...
    @property
    def vendor(self) -> str: ...
    @property
    def memory_gb(self) -> float: ...
    @property
    def memory_bandwidth_gbs(self) -> float: ...
    @property
    def nvlink_gbs(self) -> float | None: ...
    @property
    def host_link(self) -> HostLink: ...
    @property
    def peak_tflops(self) -> Peaks: ...


class SpecIndex(Protocol):
    """Name resolution: every spelling (``nvidia-smi``'s included) to the spec sheets."""

    def resolve_all(self, name: str, *, strict: bool = ...) -> Sequence[SpecSheet]: ...
