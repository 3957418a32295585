"""Integrity checks of the families' ``network:`` blocks (registered by ``integrity``).

A family without a network block is legal: the planner treats it as plain Ethernet, so it
is not planned across nodes unless ``constraints.network: ethernet``.

- the per-size bandwidths name instance types of the family (a warning: a partial import
  lists fewer sizes), the largest is the family's ``gbps``, and plain Ethernet lists no
  fabric sizes;
- an NVLink / NVSwitch topology needs an accelerator with NVLink bandwidth (``nvlink_gbs``),
  which is what the engine's intra-node collectives run on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from recommender.catalog.problems import Problem

if TYPE_CHECKING:
    from recommender.catalog.catalog import Catalog

__all__ = ["NETWORK_CHECKS"]

NVLINK_KINDS = frozenset({"nvswitch", "nvlink"})


def network_sizes_consistent(catalog: Catalog) -> Iterator[Problem]:
    for _cloud, doc in catalog.cloud_docs.items():
        for f, fam in enumerate(doc.model.families):
            if fam.network is None:
                continue
            inter = fam.network.inter_node
            path = ("families", f, "network", "inter_node")
            names = {i.name for i in fam.instances}
            for size in sorted(set(inter.sizes) - names):
                yield doc.lines.problem(
                    (*path, "sizes", size),
                    f"{size!r} is not an instance type of family {fam.name!r} (a typo, or "
                    "a size this catalog does not list)",
                    severity="warning",
                    check="network-size",
                )
            if inter.sizes and max(inter.sizes.values()) != inter.gbps:
                yield doc.lines.problem(
                    (*path, "gbps"),
                    f"gbps {inter.gbps:g} is not the largest size's "
                    f"({max(inter.sizes.values()):g})",
                    check="network-size",
                )
            if inter.kind == "ethernet" and inter.sizes:
                yield doc.lines.problem(
                    (*path, "sizes"),
                    "plain Ethernet lists no fabric sizes (name the fabric's kind)",
                    check="network-size",
                )


def intra_node_matches_accelerator(catalog: Catalog) -> Iterator[Problem]:
    names = catalog.names
    for _cloud, doc in catalog.cloud_docs.items():
        for f, fam in enumerate(doc.model.families):
            if fam.network is None or fam.network.intra_node.kind not in NVLINK_KINDS:
                continue
            for inst in fam.instances:
                acc = names.by_id(inst.accelerator)
                if acc is not None and not acc.nvlink_gbs and inst.gpus > 1:
                    yield doc.lines.problem(
                        ("families", f, "network", "intra_node", "kind"),
                        f"{fam.network.intra_node.kind} inside {inst.name}, but "
                        f"{acc.id} has no nvlink_gbs in accelerators.yaml",
                        severity="warning",
                        check="network-intra",
                    )
                    break


NETWORK_CHECKS: list[Callable[[Catalog], Iterator[Problem]]] = [
    network_sizes_consistent,
    intra_node_matches_accelerator,
]
