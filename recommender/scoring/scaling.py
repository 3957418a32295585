"""Communication between the GPUs of one instance: gradients, shards, tensor-parallel layers.

Ring all-reduce moves ``2 (n-1)/n`` times the buffer over each GPU's link (Patarasuk and Yuan,
2009); FSDP / ZeRO-3 gathers the parameters for forward and backward and reduce-scatters the
gradients, ``3 (n-1)/n`` times the parameter bytes (Rajbhandari et al. 2020). Part of the
gradient traffic hides behind the backward pass (bucketed overlap in DDP); what does not is
exposed and lengthens the step, which is what makes scaling efficiency fall below 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["TP_LATENCY_NVLINK_S", "TP_LATENCY_PCIE_S", "exposed_comm", "tensor_parallel_comm"]

FloatArray = npt.NDArray[np.float64]

# Latency of one small all-reduce across the GPUs of a node (NCCL, intra-node).
TP_LATENCY_NVLINK_S = 10e-6
TP_LATENCY_PCIE_S = 30e-6


def exposed_comm(
    gpus: FloatArray,
    shards: FloatArray,
    gradient_bytes: float,
    link_bps: FloatArray,
    backward_s: FloatArray,
    overlap: float,
) -> FloatArray:
    """Seconds per step of data-parallel communication not hidden behind backward."""
    n = gpus
    ring = np.where(n > 1, (n - 1) / np.maximum(n, 1), 0.0)
    passes = np.where(shards > 1, 3.0, 2.0)
    comm = passes * ring * gradient_bytes / link_bps
    return np.asarray(np.maximum(comm - overlap * backward_s, 0.0), dtype=np.float64)


def tensor_parallel_comm(
    shards: FloatArray,
    layers: float,
    activation_bytes: float,
    link_bps: FloatArray,
    has_nvlink: npt.NDArray[np.bool_],
) -> FloatArray:
    """Seconds per forward of the two all-reduces per layer that tensor parallelism adds."""
    latency = np.where(has_nvlink, TP_LATENCY_NVLINK_S, TP_LATENCY_PCIE_S)
    ring = 2.0 * (shards - 1) / np.maximum(shards, 1)
    per_allreduce = latency + ring * activation_bytes / link_bps
    return np.asarray(np.where(shards > 1, 2.0 * layers * per_allreduce, 0.0), dtype=np.float64)
