"""The input pipeline: reading samples from storage, decoding them on CPUs, copying to GPUs.

A training or inference step cannot go faster than the host feeds it. With prefetching the
pipeline overlaps the device's work, so the step time is the largest of the stages; when a
host stage is the largest, the workload is transfer-bound and more or faster GPUs will not
help.

Default read bandwidths when the workload does not give ``data.read_gbps`` (typical figures,
not guarantees; measure with ``recommender probe``):
- ``memory``: data already in host RAM, no read cost;
- ``local-disk``: local NVMe when the instance has it (~2 GB/s sequential, e.g. AWS g4dn/p4d
  instance store, GCP local SSD), else a network block volume (~0.25 GB/s: AWS gp3's
  baseline is 125 MB/s, provisioned up to 1 GB/s);
- ``network``: object storage streamed over the instance network (~1 GB/s).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from recommender.workload import DataSpec

__all__ = ["decode_cores", "input_seconds", "read_bandwidth"]

FloatArray = npt.NDArray[np.float64]

LOCAL_NVME_BPS = 2.0e9
NETWORK_BLOCK_BPS = 0.25e9
OBJECT_STORE_BPS = 1.0e9
# Cores left for data loading: one per GPU drives the training process.
CORES_PER_TRAINER = 1.0
DECODE_PARALLEL_EFFICIENCY = 0.85


def read_bandwidth(data: DataSpec, local_disk_gb: FloatArray) -> FloatArray:
    if data.read_gbps is not None:
        return np.full(local_disk_gb.shape, data.read_gbps * 1e9)
    if data.source == "memory":
        return np.full(local_disk_gb.shape, np.inf)
    if data.source == "network":
        return np.full(local_disk_gb.shape, OBJECT_STORE_BPS)
    return np.where(local_disk_gb > 0, LOCAL_NVME_BPS, NETWORK_BLOCK_BPS)


def decode_cores(data: DataSpec, vcpus: FloatArray, gpus: FloatArray) -> FloatArray:
    free = np.maximum(vcpus - CORES_PER_TRAINER * gpus, 1.0)
    if data.loader_workers is not None:
        free = np.minimum(free, data.loader_workers * gpus)
    return free * DECODE_PARALLEL_EFFICIENCY


def input_seconds(
    data: DataSpec,
    samples_per_step: FloatArray,
    vcpus: FloatArray,
    gpus: FloatArray,
    local_disk_gb: FloatArray,
) -> FloatArray:
    """Seconds the host needs to read and decode one step's samples (per instance)."""
    read = samples_per_step * data.bytes_per_sample / read_bandwidth(data, local_disk_gb)
    decode = samples_per_step * data.decode_cpu_seconds_per_sample / decode_cores(data, vcpus, gpus)
    return np.asarray(np.maximum(read, decode), dtype=np.float64)
