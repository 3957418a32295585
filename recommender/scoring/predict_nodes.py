"""``predict(..., nodes=N)``: one workload on N instances of ``gpus`` x an accelerator.

The node network is the fastest the catalog sells with that accelerator and GPU count (a
p5.48xlarge's 3,200 Gbps EFA for 8 x H100), or plain Ethernet where no instance has one.
Training gets the multi-node planner's best layout at exactly N nodes; LLM serving gets
tensor parallel inside each node and N pipeline stages.
"""

from __future__ import annotations

import numpy as np

from recommender.catalog.schema import Accelerator
from recommender.errors import InvalidOptionError
from recommender.scoring.cluster_pick import FABRIC_LABELS, context_note
from recommender.scoring.clusters import FABRICS, network_columns
from recommender.scoring.engine import Context
from recommender.scoring.heldout import error_note, expected_error
from recommender.scoring.memory import GB, usable_bytes
from recommender.scoring.multinode import ClusterHardware, ClusterPlans, plan_clusters
from recommender.scoring.multinode_grid import SHARDING_NAMES
from recommender.scoring.predict import BOTTLENECKS, Bottleneck
from recommender.scoring.results import Breakdown, MemoryFit, Plan, Prediction
from recommender.workload import Workload

__all__ = ["predict_on_nodes"]

CHECKPOINTING_NAMES = ("none", "selective", "full")


def _network(ctx: Context, index: int, gpus: int) -> tuple[float, str]:
    """(achieved inter-node bytes/s, fabric label) of the best catalog instance of the kind."""
    t = ctx.catalog.offers
    rows = np.flatnonzero((t.acc == index) & (t.gpus == gpus))
    if len(rows) == 0:
        return 25e9 / 8.0 * 0.3, "Ethernet"
    net = network_columns(ctx.catalog, t, rows)
    best = int(np.argmax(net.bytes_per_s))
    return float(net.bytes_per_s[best]), FABRIC_LABELS[FABRICS[int(net.fabric[best])]]


def predict_on_nodes(
    ctx: Context, acc: Accelerator, index: int, gpus: int, nodes: int
) -> Prediction:
    w = ctx.workload
    if not (w.training_job or (w.is_llm_serving and ctx.shape.transformer)):
        raise InvalidOptionError(
            "nodes", nodes, "1 for this workload (multi-node plans: training and LLM serving)"
        )
    if not w.training_job:
        from recommender.scoring.multinode_serving import predict_serving_on_nodes

        return predict_serving_on_nodes(ctx, acc, index, gpus, nodes)
    bps, fabric = _network(ctx, index, gpus)
    hw = ClusterHardware(
        acc=np.array([index], dtype=np.int32),
        gpus=np.array([float(gpus)]),
        network_bytes_per_s=np.array([bps]),
    )
    el = 2.0 if w.precision not in ("fp32", "tf32") else 4.0
    cp = plan_clusters(
        w, ctx.shape, ctx.state, ctx.caps, hw, np.array([float(nodes)]), ctx.calibration, el
    )
    scale = float(ctx.calibrated.scale_at(index))  # a cluster is never the measured config
    fits = bool(cp.fits[0, 0])
    step = float(cp.step_s[0, 0]) * scale
    comm = float(cp.comm_s[0, 0] + cp.bubble_s[0, 0]) * scale
    need, room = float(cp.need_bytes[0, 0]), usable_bytes(acc.memory_gb)
    notes = [f"{nodes} nodes of {gpus} x {acc.id}, {fabric} between nodes"]
    if not fits:
        notes.insert(0, f"does not fit on {nodes} nodes with any layout the planner tries")
    expected = expected_error(w, ctx.calibrated.measured)
    accuracy = error_note(expected, w, suggest=True)
    notes.extend([f"accuracy: {accuracy}"] if accuracy else [])
    bottleneck = Bottleneck.INTERCONNECT if comm > step - comm else Bottleneck.COMPUTE
    efficiency = round(float(cp.efficiency[0, 0]), 4)
    return Prediction(
        accelerator=acc.id,
        gpus=gpus,
        nodes=nodes,
        total_gpus=gpus * nodes,
        throughput=float(cp.samples_per_s[0, 0]) / scale,
        step_time_s=step,
        bottleneck=BOTTLENECKS[list(Bottleneck).index(bottleneck)],
        fits_in_memory=fits,
        utilization=efficiency,
        scaling_efficiency=efficiency,
        breakdown=Breakdown(
            compute_s=step - comm,
            memory_s=0.0,
            host_transfer_s=0.0,
            input_pipeline_s=0.0,
            interconnect_s=comm,
        ),
        memory=MemoryFit(
            fits=fits,
            needed_gb=round(need / GB, 2),
            available_gb=round(room / GB, 2),
            shortfall_gb=round(max(need - room, 0.0) / GB, 2),
        ),
        calibrated_from=ctx.calibrated.source,
        notes=notes,
        plan=_plan(w, cp) if fits else None,
        expected_error=expected,
    )


def _plan(w: Workload, cp: ClusterPlans) -> Plan:
    """The layout chosen for the one (configuration, node count) of ``cp``."""
    tp, pp, dp = int(cp.tp[0, 0]), int(cp.pp[0, 0]), int(cp.dp[0, 0])
    context = int(cp.cp[0, 0])
    sharding = SHARDING_NAMES[int(cp.sharding[0, 0])]
    return Plan(
        data_parallel=dp,
        tensor_parallel=tp,
        context_parallel=context,
        pipeline_parallel=pp,
        expert_parallel=int(cp.ep[0, 0]),
        sharding=sharding,
        checkpointing=CHECKPOINTING_NAMES[int(cp.ckpt[0, 0])],
        micro_batch=int(cp.micro_batch[0, 0]),
        gradient_accumulation=int(cp.micro_batches[0, 0]),
        global_batch=w.training.global_batch or w.batch_size * dp,
        offload="none",
        assumed=[
            f"tensor parallel {tp} inside each node, {pp} pipeline stage(s) across nodes, "
            f"{dp} data-parallel replicas with {sharding} sharding" + context_note(context)
        ],
    )
