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

__all__ = [
    "Cluster",
    "cluster_configs",
    "distinct_configurations",
    "empty_cluster",
    "node_counts",
    "put",
]

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
    """The distinct (accelerator, GPUs per node, network) configurations of ``rows`` and each
    row's configuration."""
    acc, gpus, network, inverse = distinct_configurations(
        t.acc[rows].astype(np.float64),
        t.gpus[rows].astype(np.float64),
        np.asarray(net.bytes_per_s, dtype=np.float64),
    )
    hw = ClusterHardware(acc=acc.astype(np.int32), gpus=gpus, network_bytes_per_s=network)
    return hw, inverse


def distinct_configurations(
    acc: FloatArray, gpus: FloatArray, network: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
    """The distinct (acc, gpus, network) triples in lexicographic order and the index of each
    input's triple among them: what ``np.unique`` over the stacked keys with ``axis=1`` and
    ``return_inverse`` gives, from one ``lexsort`` instead of its structured-array sort."""
    order = np.lexsort((network, gpus, acc))
    a, g, n = acc[order], gpus[order], network[order]
    first = np.ones(len(order), dtype=np.bool_)
    first[1:] = (a[1:] != a[:-1]) | (g[1:] != g[:-1]) | (n[1:] != n[:-1])
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return a[first], g[first], n[first], inverse


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
