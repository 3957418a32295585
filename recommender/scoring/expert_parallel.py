"""Expert parallelism for mixture-of-experts training on a cluster.

``ep`` data-parallel ranks split the routed experts between them (GShard, Lepikhin et al.
2021; DeepSpeed-MoE, Rajbhandari et al. 2022): each rank keeps ``1 / ep`` of the expert
weights, gradients and optimizer state, and every MoE layer sends each token's hidden state
to the ranks of its ``k`` experts and back (two all-to-alls in the forward, two in the
backward, two more when full recomputation repeats the forward). An all-to-all over ``ep``
ranks moves ``(ep - 1) / ep`` of its data off the GPU: on NVLink when the ranks share a
node, else on the node's network share per GPU.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from recommender.scoring.memory import StateBytes
from recommender.scoring.shape import Shape

__all__ = ["EXPERT_PARALLEL", "all_to_all_s", "expert_choices", "state_with_experts"]

FloatArray = npt.NDArray[np.float64]

EXPERT_PARALLEL = (1, 2, 4, 8, 16, 32, 64)
ALL_TO_ALLS_PER_PASS = 2.0  # dispatch and combine
# One all-to-all's fixed cost: a round of point-to-point sends (as the pipeline's sends).
ALL_TO_ALL_LATENCY_S = 20e-6


def expert_choices(s: Shape) -> list[int]:
    """Expert-parallel degrees to try: 1 for a dense model, else those dividing the experts."""
    if s.experts <= 1:
        return [1]
    return [e for e in EXPERT_PARALLEL if s.experts % e == 0]


def state_with_experts(
    state: StateBytes,
    s: Shape,
    split: FloatArray,
    shard_over: FloatArray,
    stage: FloatArray,
    ep: FloatArray,
) -> FloatArray:
    """Training state per GPU: the dense part as ZeRO shards it, the routed experts also
    divided by ``ep`` (ZeRO then shards each expert over the ``shard_over / ep`` replicas)."""
    share = s.expert_parameters / max(s.parameters, 1.0) if s.experts > 1 else 0.0
    none = np.zeros_like(split)
    dense = state.per_gpu(split, shard_over, stage, none) * (1.0 - share)
    if share == 0.0:  # a dense model: no expert shard to add
        return np.asarray(dense)
    experts = state.per_gpu(split * ep, np.maximum(shard_over / ep, 1.0), stage, none) * share
    return np.asarray(dense + experts)


def all_to_all_s(
    s: Shape,
    ep: FloatArray,
    tp: FloatArray,
    micro_batch: FloatArray,
    micro_batches: FloatArray,
    ckpt: FloatArray,
    link: FloatArray,
    el: float,
) -> FloatArray:
    """Seconds per optimizer step of one GPU's expert all-to-alls (``link``: bytes/s)."""
    if s.experts <= 1:
        return np.zeros_like(ep)
    passes = 2.0 + np.where(ckpt >= 2, 1.0, 0.0)
    count = ALL_TO_ALLS_PER_PASS * passes * s.layers
    message = micro_batch * s.tokens * s.hidden * el * s.experts_per_token / tp
    share = np.where(ep > 1, (ep - 1.0) / ep, 0.0)
    per_call = ALL_TO_ALL_LATENCY_S + share * message / link
    return np.asarray(np.where(ep > 1, count * per_call * micro_batches, 0.0))
