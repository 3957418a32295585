"""The network of each instance family: GPU links inside an instance, fabric between them.

The importer writes these into the cloud YAML files (``network:`` of each family), beside
the family's purchase options. Bandwidths are per instance, as the clouds publish them:

- AWS: "Network specifications" of the accelerated computing instance types (EFA bandwidth
  per type; the sizes not listed have ENA Ethernet only), and cluster placement groups;
- GCP: "Networking and GPU machines" (A3 High / Edge: GPUDirect-TCPX over 4 x 200 Gbps NICs;
  A3 Mega: GPUDirect-TCPXO over 8 x 200 Gbps; A3 Ultra and A4: GPUDirect-RDMA over 8 x 400
  Gbps ConnectX-7; A2, G2 and N1: gVNIC Ethernet up to 100 Gbps), compact placement policies;
- Azure: the ND-series size pages (InfiniBand HDR 200 / NDR 400 Gb/s per GPU) and InfiniBand
  scale sets; the NC / NV series have Ethernet only.
"""

from __future__ import annotations

import datetime as dt

from recommender.catalog.schema import InterNode, IntraNode, Network, Source

__all__ = ["NETWORKS", "network_of"]

_READ = dt.date(2026, 12, 1)
_AWS_SPECS = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html#ac_network"
_AWS_EFA = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types"
_AWS_PLACEMENT = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html"
_NEURON = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/"
    "trn1-arch.html"
)
_GCP_BW = "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"
_GCP_PLACEMENT = "https://cloud.google.com/compute/docs/instances/placement-policies-overview"
_AZ = "https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/"
_AZ_IB = "https://learn.microsoft.com/en-us/azure/virtual-machines/setup-infiniband"


def _src(name: str, url: str, note: str | None = None) -> Source:
    return Source(name=name, url=url, retrieved=_READ, note=note)


def _aws(
    intra: IntraNode,
    kind: str,
    gbps: float,
    sizes: dict[str, float] | None = None,
    ethernet: float | None = None,
    note: str | None = None,
) -> Network:
    fast = kind == "efa"
    return Network(
        intra_node=intra,
        inter_node=InterNode.model_validate(
            {"kind": kind, "gbps": gbps, "sizes": sizes or {}, "ethernet_gbps": ethernet}
        ),
        cluster_placement=True,
        source=_src(
            "Amazon EC2 accelerated computing instance types, network specifications"
            + (" (EFA bandwidth per type)" if fast else " (ENA only, no EFA)"),
            _AWS_SPECS,
            note or f"EFA: {_AWS_EFA}; cluster placement groups: {_AWS_PLACEMENT}",
        ),
    )


def _nvswitch(gen: int) -> IntraNode:
    return IntraNode(kind="nvswitch", generation=gen, note=f"NVLink {gen} through NVSwitch")


def _pcie(gen: int, note: str | None = None) -> IntraNode:
    return IntraNode(kind="pcie", generation=gen, note=note)


_V100_MESH = IntraNode(kind="nvlink", generation=2, note="NVLink 2 hybrid cube mesh")
_RECALLED = (
    f"per-size EFA Gbps recalled from the network specifications (verify); EFA: {_AWS_EFA}; "
    f"cluster placement groups: {_AWS_PLACEMENT}"
)

_AWS: dict[str, Network] = {
    "p6-b300": _aws(_nvswitch(5), "efa", 6400.0),
    "p6-b200": _aws(_nvswitch(5), "efa", 3200.0),
    "p5en": _aws(_nvswitch(4), "efa", 3200.0),
    "p5e": _aws(_nvswitch(4), "efa", 3200.0),
    "p5": _aws(_nvswitch(4), "efa", 3200.0, {"p5.48xlarge": 3200.0}, 100.0),
    "p4de": _aws(_nvswitch(3), "efa", 400.0),
    "p4d": _aws(_nvswitch(3), "efa", 400.0),
    "p3dn": _aws(_V100_MESH, "efa", 100.0),
    "p3": _aws(_V100_MESH, "ethernet", 25.0),
    "g6e": _aws(
        _pcie(4),
        "efa",
        400.0,
        {"g6e.12xlarge": 100.0, "g6e.24xlarge": 200.0, "g6e.48xlarge": 400.0},
        25.0,
        note=_RECALLED,
    ),
    "g6": _aws(
        _pcie(4),
        "efa",
        100.0,
        {"g6.12xlarge": 40.0, "g6.24xlarge": 50.0, "g6.48xlarge": 100.0},
        note=_RECALLED,
    ),
    "g5": _aws(
        _pcie(4),
        "efa",
        100.0,
        {"g5.12xlarge": 40.0, "g5.24xlarge": 50.0, "g5.48xlarge": 100.0},
        note=_RECALLED,
    ),
    "g4dn": _aws(
        _pcie(3), "efa", 100.0, {"g4dn.12xlarge": 50.0, "g4dn.metal": 100.0}, 25.0, _RECALLED
    ),
    "g4ad": _aws(_pcie(4), "ethernet", 25.0),
    "g5g": _aws(_pcie(4), "ethernet", 25.0),
    "g6f": _aws(_pcie(4), "ethernet", 25.0),
    "gr6": _aws(_pcie(4), "ethernet", 25.0),
    "gr6f": _aws(_pcie(4), "ethernet", 25.0),
    "g7e": _aws(
        _pcie(5),
        "ethernet",
        100.0,
        note="EFA on G7e not confirmed in the source read; treated as Ethernet (verify)",
    ),
    "inf2": _aws(IntraNode(kind="neuronlink", note="NeuronLink ring"), "ethernet", 100.0),
    "dl1": _aws(IntraNode(kind="roce", note="Gaudi on-chip RoCE, all-to-all"), "efa", 400.0),
    "trn1": Network(
        intra_node=IntraNode(kind="neuronlink", generation=2, note="NeuronLink-v2 4D torus"),
        inter_node=InterNode(
            kind="efa",
            gbps=1600.0,
            sizes={"trn1.32xlarge": 800.0, "trn1n.32xlarge": 1600.0},
            ethernet_gbps=25.0,
        ),
        cluster_placement=True,
        source=_src("AWS Neuron, Trn1/Trn1n architecture (EFA bandwidth per size)", _NEURON),
    ),
    "trn2": _aws(IntraNode(kind="neuronlink", generation=3), "efa", 3200.0),
}


def _gcp(intra: IntraNode, kind: str, gbps: float, sizes: dict[str, float] | None) -> Network:
    return Network(
        intra_node=intra,
        inter_node=InterNode.model_validate(
            {
                "kind": kind,
                "gbps": gbps,
                "sizes": sizes or {},
                "ethernet_gbps": 100.0 if sizes else None,
            }
        ),
        cluster_placement=True,
        source=_src(
            "Google Cloud, Networking and GPU machines (GPU NICs per machine type)",
            _GCP_BW,
            f"compact placement policies: {_GCP_PLACEMENT}",
        ),
    )


_8G = "-8g"
_GCP: dict[str, Network] = {
    "a4-highgpu": _gcp(_nvswitch(5), "gpudirect-rdma", 3200.0, None),
    "a3-ultragpu": _gcp(_nvswitch(4), "gpudirect-rdma", 3200.0, None),
    "a3-megagpu": _gcp(_nvswitch(4), "gpudirect-tcpxo", 1600.0, None),
    "a3-highgpu": _gcp(_nvswitch(4), "gpudirect-tcpx", 800.0, {"a3-highgpu" + _8G: 800.0}),
    "a3-edgegpu": _gcp(
        _nvswitch(4),
        "gpudirect-tcpx",
        800.0,
        {"a3-edgegpu" + _8G: 800.0, "a3-edgegpu-8g-nolssd": 800.0},
    ),
    "a2-ultragpu": _gcp(_nvswitch(3), "ethernet", 100.0, None),
    "a2-megagpu": _gcp(_nvswitch(3), "ethernet", 100.0, None),
    "a2-highgpu": _gcp(_nvswitch(3), "ethernet", 100.0, None),
    "g2-standard": _gcp(_pcie(4), "ethernet", 100.0, None),
    "n1-t4": _gcp(_pcie(3), "ethernet", 100.0, None),
    "n1-v100": _gcp(_V100_MESH, "ethernet", 100.0, None),
    "n1-p100": _gcp(_pcie(3), "ethernet", 32.0, None),
    "n1-p4": _gcp(_pcie(3), "ethernet", 32.0, None),
    "tpu-v5e": _gcp(IntraNode(kind="ici", note="inter-chip interconnect"), "ethernet", 100.0, None),
    "tpu-v5p": _gcp(IntraNode(kind="ici", note="inter-chip interconnect"), "ethernet", 100.0, None),
    "tpu-v6e": _gcp(IntraNode(kind="ici", note="inter-chip interconnect"), "ethernet", 100.0, None),
}


def _azure(intra: IntraNode, kind: str, gbps: float, page: str, what: str) -> Network:
    ib = kind == "infiniband"
    return Network(
        intra_node=intra,
        inter_node=InterNode.model_validate({"kind": kind, "gbps": gbps}),
        cluster_placement=True,
        source=_src(
            f"Azure {what} size series" + (": InfiniBand per VM" if ib else ": no InfiniBand"),
            _AZ + page,
            f"InfiniBand VMs in one scale set share a fabric: {_AZ_IB}"
            if ib
            else "Ethernet Gbps recalled from the size page (verify)",
        ),
    )


_AZURE: dict[str, Network] = {
    "ND_GB200_v6": _azure(
        IntraNode(kind="nvlink", generation=5, note="NVLink 5 (NVL72 rack)"),
        "infiniband",
        1600.0,
        "nd-gb200-v6-series",
        "ND GB200 v6 (4 x 400 Gb/s NDR)",
    ),
    "ND_H200_v5": _azure(
        _nvswitch(4), "infiniband", 3200.0, "nd-h200-v5-series", "ND H200 v5 (8 x 400 Gb/s NDR)"
    ),
    "ND_H100_v5": _azure(
        _nvswitch(4), "infiniband", 3200.0, "ndh100v5-series", "ND H100 v5 (8 x 400 Gb/s NDR)"
    ),
    "ND_MI300X_v5": _azure(
        IntraNode(kind="infinity-fabric", note="AMD Infinity Fabric, all-to-all"),
        "infiniband",
        3200.0,
        "ndmi300xv5-series",
        "ND MI300X v5 (8 x 400 Gb/s NDR)",
    ),
    "NDm_A100_v4": _azure(
        _nvswitch(3), "infiniband", 1600.0, "ndma100v4-series", "NDm A100 v4 (8 x 200 Gb/s HDR)"
    ),
    "ND_A100_v4": _azure(
        _nvswitch(3), "infiniband", 1600.0, "nda100v4-series", "ND A100 v4 (8 x 200 Gb/s HDR)"
    ),
    "NDv2": _azure(_V100_MESH, "infiniband", 100.0, "ndv2-series", "NDv2 (100 Gb/s EDR)"),
    "NC_H100_v5": _azure(
        IntraNode(kind="nvlink", generation=4, note="NVLink bridge between GPU pairs"),
        "ethernet",
        80.0,
        "ncadsh100v5-series",
        "NC H100 v5",
    ),
    "NCC_H100_v5": _azure(_pcie(5), "ethernet", 40.0, "nccadsh100v5-series", "NCC H100 v5"),
    "NC_A100_v4": _azure(_pcie(4), "ethernet", 80.0, "nc-a100-v4-series", "NC A100 v4"),
    "NCasT4_v3": _azure(_pcie(3), "ethernet", 32.0, "ncast4v3-series", "NCas T4 v3"),
    "NCv3": _azure(_pcie(3), "ethernet", 24.0, "ncv3-series", "NCv3"),
    "NC_A10_v4": _azure(_pcie(4), "ethernet", 40.0, "nc-a10-v4-series", "NC A10 v4"),
    "NVadsA10_v5": _azure(_pcie(4), "ethernet", 40.0, "nvadsa10v5-series", "NVads A10 v5"),
}

NETWORKS: dict[str, dict[str, Network]] = {"aws": _AWS, "gcp": _GCP, "azure": _AZURE}


def network_of(cloud: str, family: str) -> Network | None:
    """The network of ``family`` on ``cloud``, or ``None`` where it is not recorded."""
    return NETWORKS.get(cloud, {}).get(family)
