"""What a multi-node placement is, row by row, and the helpers the training and serving
planners (:mod:`.clusters`, :mod:`.multinode_serving`) share to build one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from recommender.catalog.offers import OffersTable
from recommender.scoring.cluster_network import NetworkColumns
from recommender.scoring.multinode import ClusterHardware

__all__ = ["Cluster", "cluster_configs", "empty_cluster", "node_counts", "put"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
A = TypeVar("A", bound=npt.NDArray[Any])

# Node counts searched: every count up to SMALL_COUNTS, then those whose binary form has at
# most SIGNIFICANT_BITS leading bits (10, 12, 14, 16, 20, 24, ...): within ~12 % of any count.
SIGNIFICANT_BITS = 3
SMALL_COUNTS = 8


@dataclass(frozen=True)
class Cluster:
    """Per offer row: its node count and multi-node layout (1 / zeros where single)."""

    multi: BoolArray
    nodes: FloatArray
    tp: FloatArray
    pp: FloatArray
    dp: FloatArray
    cp: FloatArray  # context-parallel ranks per sequence (training)
    sharding: FloatArray
    ckpt: FloatArray
    ep: FloatArray
    micro_batch: FloatArray
    micro_batches: FloatArray
    efficiency: FloatArray
    state_bytes: FloatArray  # per GPU
    activation_bytes: FloatArray  # per GPU
    overhead: FloatArray  # checkpoint + restart share of the compute hours
    fabric: IntArray
    gbps: FloatArray
    notes: tuple[str, ...] = ()


def node_counts(max_nodes: int) -> FloatArray:
    """2 .. ``max_nodes``: every count to 8, then those with three significant bits."""
    counts = [
        n
        for n in range(2, max_nodes + 1)
        if n <= SMALL_COUNTS
        or (n >> (n.bit_length() - SIGNIFICANT_BITS)) << (n.bit_length() - SIGNIFICANT_BITS) == n
    ]
    if max_nodes >= 2 and max_nodes not in counts:
        counts.append(max_nodes)
    return np.asarray(counts, dtype=np.float64)


def cluster_configs(
    t: OffersTable, rows: IntArray, net: NetworkColumns
) -> tuple[ClusterHardware, IntArray]:
    keys = np.stack(
        [t.acc[rows].astype(np.float64), t.gpus[rows].astype(np.float64), net.bytes_per_s]
    )
    unique, inverse = np.unique(keys, axis=1, return_inverse=True)
    hw = ClusterHardware(
        acc=unique[0].astype(np.int32), gpus=unique[1], network_bytes_per_s=unique[2]
    )
    return hw, inverse.reshape(-1).astype(np.int64)


def empty_cluster(t: OffersTable, notes: list[str]) -> Cluster:
    n = len(t)
    ones, zeros = np.ones(n), np.zeros(n)
    return Cluster(
        multi=np.zeros(n, dtype=bool), nodes=ones, tp=ones, pp=ones, dp=ones, cp=ones,
        sharding=zeros, ckpt=zeros, ep=ones, micro_batch=ones, micro_batches=ones,
        efficiency=ones, state_bytes=zeros, activation_bytes=zeros, overhead=zeros,
        fabric=np.zeros(n, dtype=np.int64), gbps=zeros,
        notes=tuple(notes),
    )  # fmt: skip


def put(column: A, rows: IntArray, values: object) -> A:
    """A copy of ``column`` with ``values`` at ``rows``."""
    out = column.copy()
    out[rows] = values
    return out
