"""What a multi-node pick says: its layout as a plan, its reasons and its limits."""

from __future__ import annotations

import numpy as np

from recommender.catalog.offers import OffersTable
from recommender.scoring.clusters import FABRICS, Cluster
from recommender.scoring.cost import Costs
from recommender.scoring.memory import GB
from recommender.scoring.multinode_grid import SHARDING_NAMES
from recommender.scoring.predict import Predictions
from recommender.scoring.results import Plan
from recommender.workload import Workload

__all__ = [
    "budget_advice",
    "cluster_limits",
    "cluster_plan",
    "cluster_why",
    "context_note",
    "deadline_advice",
    "nodes_of",
]

CHECKPOINTING_NAMES = ("none", "selective", "full")
FABRIC_LABELS = {
    "efa": "EFA",
    "infiniband": "InfiniBand",
    "gpudirect-rdma": "GPUDirect-RDMA",
    "gpudirect-tcpxo": "GPUDirect-TCPXO",
    "gpudirect-tcpx": "GPUDirect-TCPX",
    "ethernet": "Ethernet",
}


def context_note(cp: int) -> str:
    """The clause a layout's description gains when it splits each sequence."""
    return f", each sequence split over {cp} GPUs (context parallel)" if cp > 1 else ""


def nodes_of(cl: Cluster | None, row: int) -> int:
    return int(cl.nodes[row]) if cl is not None and cl.multi[row] else 1


def cluster_plan(w: Workload, cl: Cluster, row: int, plan: Plan | None) -> Plan:
    """The pick's plan with the multi-node layout (training or serving)."""
    tp, pp = int(cl.tp[row]), int(cl.pp[row])
    if not w.training_job:
        base = plan or Plan(data_parallel=1)
        return base.model_copy(
            update={
                "data_parallel": 1,
                "tensor_parallel": tp,
                "pipeline_parallel": pp,
                "concurrency": int(cl.micro_batch[row]),
                "memory_gb": {},  # the single-instance plan's split does not apply
                "ttft_ms": None,
                "tpot_ms": None,
                "assumed": [
                    f"tensor parallel {tp} inside each node, {pp} pipeline stages across "
                    f"nodes, {int(cl.micro_batch[row])} sequences decoded at once"
                ],
            }
        )
    mb, m, dp = int(cl.micro_batch[row]), int(cl.micro_batches[row]), int(cl.dp[row])
    context = int(cl.cp[row])
    sharding = SHARDING_NAMES[int(cl.sharding[row])]
    ckpt = CHECKPOINTING_NAMES[int(cl.ckpt[row])]
    assumed = [
        f"{nodes_of(cl, row)} nodes: tensor parallel {tp} inside each node, {pp} pipeline "
        f"stage(s) across nodes, {dp} data-parallel replicas with {sharding} sharding"
        + context_note(context),
        f"{ckpt} activation checkpointing",
    ]
    update = {
        "data_parallel": dp,
        "tensor_parallel": tp,
        "context_parallel": context,
        "pipeline_parallel": pp,
        "expert_parallel": int(cl.ep[row]),
        "sharding": sharding,
        "checkpointing": ckpt,
        "micro_batch": mb,
        "gradient_accumulation": m,
        "global_batch": w.training.global_batch or w.batch_size * dp,
        "offload": "none",
        "memory_gb": {
            "state": round(float(cl.state_bytes[row]) / GB, 2),
            "activations": round(float(cl.activation_bytes[row]) / GB, 2),
        },
        "assumed": assumed,
    }
    return (plan or Plan(data_parallel=dp)).model_copy(update=update)


def cluster_why(w: Workload, cl: Cluster, row: int, instance: str, gpus: int) -> list[str]:
    n = nodes_of(cl, row)
    fabric = FABRIC_LABELS[FABRICS[int(cl.fabric[row])]]
    head = f"{n} x {instance} ({n * gpus} GPUs): one instance "
    head += (
        "cannot hold or finish the job in time"
        if w.training_job
        else "cannot hold the model's weights and KV cache"
    )
    out = [head]
    plan = (
        f"tensor parallel {int(cl.tp[row])} inside each node, {int(cl.pp[row])} pipeline stage(s)"
    )
    if w.training_job:
        plan += (
            f", {int(cl.dp[row])} data-parallel replicas ({SHARDING_NAMES[int(cl.sharding[row])]})"
        )
        plan += context_note(int(cl.cp[row]))
    out.append(plan)
    if w.training_job:
        out.append(
            f"predicted scaling efficiency {float(cl.efficiency[row]):.0%} over {fabric} "
            f"between nodes ({float(cl.gbps[row]):,.0f} Gbps per node); "
            f"checkpoints and restarts add {float(cl.overhead[row]):.1%} to the run"
        )
    else:
        out.append(f"pipeline stages hand off over {fabric} between nodes")
    return out


def cluster_limits(w: Workload, cl: Cluster, row: int, spot: bool) -> list[str]:
    out = []
    if FABRICS[int(cl.fabric[row])] == "ethernet":
        out.append(
            "plain Ethernet between nodes (constraints.network: ethernet): collectives are "
            "several times slower than on EFA / InfiniBand, and the estimate includes that"
        )
    if spot:
        out.append(
            "multi-node on spot (constraints.multi_node_spot): any reclaimed node stops "
            "every node until it is replaced; the hours include the expected restarts"
        )
    if w.training_job:
        out.append("launch the nodes in one cluster placement group (or compact placement)")
    return out


def _placement(t: OffersTable, p: Predictions, row: int) -> tuple[int, str]:
    """(nodes, "N x instance" or the instance alone) of offer ``row``."""
    n = nodes_of(p.cluster, row)
    name = t.instance_names[int(t.instance[row])]
    return n, (f"{n} x {name}" if n > 1 else name)


def deadline_advice(
    w: Workload, t: OffersTable, p: Predictions, c: Costs, picked: bool
) -> str | None:
    """When no offer meets ``targets.deadline_hours``: the fastest plan found and its time."""
    deadline = w.targets.deadline_hours
    if picked or not w.training_job or deadline is None:
        return None
    hours = np.where(p.fits & np.isfinite(c.hours), c.hours, np.inf)
    if len(hours) == 0 or not np.isfinite(hours.min()):
        return None
    row = int(np.argmin(hours))
    if float(hours[row]) <= deadline:  # something meets the deadline: another target failed
        return None
    n, where = _placement(t, p, row)
    return (
        f"No plan meets the {deadline:g} h deadline: the fastest found is {where} "
        f"({int(t.gpus[row]) * n} GPUs) at {float(hours[row]):,.1f} h for "
        f"${float(c.total_usd[row]):,.0f} (constraints.max_nodes is "
        f"{w.constraints.max_nodes}); allow more time or more nodes."
    )


def budget_advice(
    w: Workload, t: OffersTable, p: Predictions, c: Costs, picked: bool
) -> str | None:
    """When no training plan fits ``targets.budget_usd``: the cheapest found and its cost."""
    budget = w.targets.budget_usd
    if picked or not w.training_job or budget is None:
        return None
    cost = np.where(p.fits & np.isfinite(c.total_usd), c.total_usd, np.inf)
    if len(cost) == 0 or not np.isfinite(cost.min()) or float(cost.min()) <= budget:
        return None
    row = int(np.argmin(cost))
    _, where = _placement(t, p, row)
    return (
        f"No plan fits the ${budget:,.0f} budget: the cheapest found is {where} at "
        f"${float(cost[row]):,.0f} ({float(c.hours[row]):,.1f} h)."
    )
