"""Which offers' hosts and accelerators can run the workload at all (before predicting).

A GPU is useless on a host that cannot feed it or hold the model, or under a framework the
workload does not use. This module turns the workload into per-offer requirements:

- **vCPUs**: training needs data-loader workers per GPU (:data:`TRAIN_VCPUS_PER_GPU`), a
  serving process a few cores per device (:data:`SERVE_VCPUS_PER_GPU`); a fractional GPU
  needs its share. ``constraints.min_vcpus`` replaces the default.
- **Host RAM**: one copy of the weights at the workload's precision plus the OS and runtime
  (:data:`HOST_OVERHEAD_GB`), to load the checkpoint; ``constraints.min_memory_gb`` replaces it.
- **Architecture**: x86_64 unless ``constraints.arch`` opts into arm64 (or any).
- **Framework and kind**: an accelerator is ranked only where its spec sheet's ``runs`` lists
  one of ``constraints.frameworks`` (default :data:`DEFAULT_FRAMEWORKS`) and the workload's
  kind (Inferentia serves but never trains).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from recommender.catalog.offers import OffersTable
from recommender.catalog.schema import Accelerator
from recommender.scoring.shape import BYTES_PER_ELEMENT
from recommender.workload import Workload

__all__ = [
    "DEFAULT_FRAMEWORKS",
    "HOST_OVERHEAD_GB",
    "MIN_HOST_VCPUS",
    "SERVE_VCPUS_PER_GPU",
    "TRAIN_VCPUS_PER_GPU",
    "excluded_by_fit",
    "host_mask",
    "min_memory_gb",
    "runs_mask",
]

BoolArray = npt.NDArray[np.bool_]

# PyTorch Lightning's rule of thumb for DataLoader workers: num_workers = 4 x GPUs
# (https://lightning.ai/docs/pytorch/stable/advanced/speed.html, "num_workers"), each
# worker one core.
TRAIN_VCPUS_PER_GPU = 4.0
# A serving replica: one core for the HTTP / tokenisation loop and one for the framework's
# launch thread per device (design choice; NVIDIA Triton's guidance is likewise >= 2 cores
# per GPU instance - recalled - verify).
SERVE_VCPUS_PER_GPU = 2.0
# OS, CUDA context, Python and framework in host RAM beside the weights (design estimate).
HOST_OVERHEAD_GB = 4.0
# No host below this: one core for the framework's launch loop, one for everything else
# (a fractional GPU's host too; design choice).
MIN_HOST_VCPUS = 2.0
DEFAULT_FRAMEWORKS = ("pytorch-cuda", "pytorch-rocm")
GB = 1e9
GIB = 2.0**30


def min_memory_gb(w: Workload) -> float:
    """Host RAM to load one copy of the weights at the workload's precision."""
    if w.constraints.min_memory_gb is not None:
        return w.constraints.min_memory_gb
    return w.parameters * BYTES_PER_ELEMENT[w.precision] / GB + HOST_OVERHEAD_GB


def _min_vcpus(w: Workload, t: OffersTable) -> npt.NDArray[np.float64]:
    if w.constraints.min_vcpus is not None:
        return np.full(len(t), w.constraints.min_vcpus)
    per_gpu = TRAIN_VCPUS_PER_GPU if w.kind == "training" else SERVE_VCPUS_PER_GPU
    devices = t.gpus * t.gpu_fraction
    return np.maximum(MIN_HOST_VCPUS, per_gpu * devices)


def host_mask(w: Workload, t: OffersTable) -> BoolArray:
    """Offers whose host has the vCPUs, RAM and CPU architecture the workload needs."""
    keep = t.vcpus >= _min_vcpus(w, t) - 1e-9
    keep &= t.memory_gib * GIB / GB >= min_memory_gb(w)
    if w.constraints.arch == "x86_64":
        keep &= ~t.arm64
    elif w.constraints.arch == "arm64":
        keep &= t.arm64
    return keep


def _runs(acc: Accelerator, frameworks: Sequence[str], kind: str) -> bool:
    return kind in acc.runs.kinds and bool(set(acc.runs.frameworks) & set(frameworks))


def runs_mask(w: Workload, t: OffersTable) -> BoolArray:
    """Offers whose accelerator runs one of the workload's frameworks for its kind of work."""
    frameworks = w.constraints.frameworks or DEFAULT_FRAMEWORKS
    ok = np.array([_runs(a, frameworks, w.kind) for a in t.accelerators], dtype=bool)
    return ok[t.acc] if len(t) else np.zeros(0, dtype=bool)


def excluded_by_fit(considered: BoolArray, runs: BoolArray, host: BoolArray) -> dict[str, int]:
    """Why the offers outside ``considered`` were left out, with counts (``runs`` and
    ``host``: :func:`runs_mask` and :func:`host_mask` of the same offers): the framework or
    kind of work, then the host (the user's constraints are counted one by one by
    :func:`recommender.scoring.constraint_check.constraint_exclusions`)."""
    out = ~considered
    counts = {
        "accelerator does not run the workload's framework / kind": int(np.sum(out & ~runs)),
        "host too small or of another CPU architecture": int(np.sum(out & runs & ~host)),
    }
    return {reason: n for reason, n in counts.items() if n}
