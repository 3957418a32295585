"""The inter-node network of each offer, from the catalog's ``network:`` family blocks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.catalog import Catalog
from recommender.catalog.offers import OffersTable
from recommender.scoring.multinode import FABRIC_EFFICIENCY

__all__ = [
    "DEFAULT_ETHERNET_GBPS",
    "ETHERNET",
    "FABRICS",
    "FABRIC_EFFICIENCY",
    "NetworkColumns",
    "achieved_network_bytes_per_s",
    "network_columns",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

FABRICS = tuple(FABRIC_EFFICIENCY)
ETHERNET = FABRICS.index("ethernet")
# Sizes without the fabric, and families the catalog gives no network: typical instance
# Ethernet (AWS ENA "up to 25 Gigabit" on mid-size GPU instances).
DEFAULT_ETHERNET_GBPS = 25.0


BITS_PER_BYTE = 8.0


def achieved_network_bytes_per_s(gbps: float, fabric: str) -> float:
    """Bytes/s a node's collectives reach over ``gbps`` of ``fabric`` (FABRIC_EFFICIENCY)."""
    return gbps * 1e9 / BITS_PER_BYTE * FABRIC_EFFICIENCY[fabric]


@dataclass(frozen=True)
class NetworkColumns:
    """Per offer row: inter-node bytes/s achieved, fabric index, fast or not, placement."""

    bytes_per_s: FloatArray
    fabric: IntArray
    fast: BoolArray
    placement: BoolArray


_NET_CACHE: dict[int, tuple[object, OffersTable, FloatArray]] = {}


def _instance_networks(catalog: Catalog) -> dict[tuple[str, str, str], tuple[float, int, bool]]:
    """(cloud, family, instance type) -> (Gbps, fabric index, cluster placement)."""
    out: dict[tuple[str, str, str], tuple[float, int, bool]] = {}
    for cloud, cat in catalog.clouds.items():
        for fam in cat.families:
            net = fam.network
            for inst in fam.instances:
                key = (cloud, fam.name, inst.name)
                if net is None:
                    out[key] = (DEFAULT_ETHERNET_GBPS, ETHERNET, False)
                    continue
                inter = net.inter_node
                fabric_gbps = inter.sizes.get(inst.name, inter.gbps if not inter.sizes else 0.0)
                if fabric_gbps > 0:
                    out[key] = (fabric_gbps, FABRICS.index(inter.kind), net.cluster_placement)
                else:
                    eth = inter.ethernet_gbps or DEFAULT_ETHERNET_GBPS
                    out[key] = (eth, ETHERNET, net.cluster_placement)
    return out


def _network_table(catalog: Catalog, t: OffersTable) -> FloatArray:
    """(Gbps, fabric, placement) per (cloud, family, instance) code of ``t``'s name tables,
    as a (clouds, families, instances, 3) array; cached per catalog and name tables."""
    hit = _NET_CACHE.get(id(catalog))
    if hit is not None and hit[0] is catalog and hit[1].instance_names is t.instance_names:
        return hit[2]
    nets = _instance_networks(catalog)
    shape = (len(t.cloud_names), len(t.family_names), len(t.instance_names), 3)
    table = np.zeros(shape)
    table[..., 0] = DEFAULT_ETHERNET_GBPS
    table[..., 1] = ETHERNET
    index = (
        {name: i for i, name in enumerate(t.cloud_names)},
        {name: i for i, name in enumerate(t.family_names)},
        {name: i for i, name in enumerate(t.instance_names)},
    )
    for (cloud, fam, inst), (gbps, fabric, placement) in nets.items():
        c, f, i = index[0].get(cloud), index[1].get(fam), index[2].get(inst)
        if c is not None and f is not None and i is not None:
            table[c, f, i] = (gbps, fabric, float(placement))
    _NET_CACHE.clear()
    _NET_CACHE[id(catalog)] = (catalog, t, table)
    return table


def network_columns(catalog: Catalog, t: OffersTable, rows: IntArray) -> NetworkColumns:
    """The network of ``rows`` of ``t`` (only the rows a multi-node plan is tried on)."""
    table = _network_table(catalog, t)
    vals = table[t.cloud[rows], t.family[rows], t.instance[rows]]
    gbps, fabric = vals[:, 0], vals[:, 1].astype(np.int64)
    eff = np.asarray([FABRIC_EFFICIENCY[f] for f in FABRICS])[fabric]
    return NetworkColumns(
        bytes_per_s=gbps * 1e9 / BITS_PER_BYTE * eff,
        fabric=fabric,
        fast=fabric != ETHERNET,
        placement=vals[:, 2] > 0,
    )
