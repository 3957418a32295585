"""Context parallelism: long-context training with each sequence split over ``cp`` GPUs.

Each of ``cp`` ranks holds ``tokens / cp`` of every sequence's tokens through every layer
(NeMo / Megatron-Core "context parallelism", PyTorch's ``context_parallel`` that torchtitan
uses). Its activations and its share of the linear layers' FLOPs are ``1 / cp`` of the
sequence's, and so is its share of a causal attention's FLOPs: the load balancer gives each
rank a chunk from the head of the sequence and one from the tail, so that every rank masks
as much as the others. The weights are not split: every rank streams them whole, and the
ranks reduce (or, with FSDP, shard) their gradients as data-parallel ranks do; torchtitan's
FSDP shards over its data x context mesh (``dp_shard_cp``).

Attention needs the keys and values of the whole sequence. Ring attention (Liu et al. 2023,
"Ring Attention with Blockwise Transformers for Near-Infinite Context") passes each rank's
K/V chunk to the next rank ``cp - 1`` times per layer, each step's send overlapped with the
attention of the chunk at hand; the backward pass moves the K/V chunks and their gradients
(twice the forward's bytes). Only what the attention compute does not hide is exposed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.recipe import CONTEXT_PARALLEL_MIN_AUTO_TOKENS
from recommender.scoring.shape import Shape
from recommender.workload import Workload

__all__ = [
    "CONTEXT_PARALLEL",
    "Ring",
    "context_choices",
    "ring_exposed_s",
    "ring_kernels_per_forward",
]

FloatArray = npt.NDArray[np.float64]

CONTEXT_PARALLEL = (1, 2, 4, 8)
# K/V bytes a ring step moves per pass, in forward-pass units: the forward sends K and V,
# the backward sends them again with their gradients (Liu et al. 2023, section 3;
# PyTorch's ring attention backward rotates ``kv`` and ``dkv`` together).
RING_FORWARD_PASSES = 1.0
RING_BACKWARD_PASSES = 2.0
# Kernels a ring step adds to a layer's forward: the attention of the chunk at hand and the
# merge of its partial output into the running one (log-sum-exp rescaling; PyTorch's
# ``_templated_ring_attention`` calls the attention op and ``_SDPAMerger.step`` per step).
RING_STEP_KERNELS = 2.0


@dataclass(frozen=True)
class Ring:
    """The context-parallel ring of each cell: its ranks, the bytes/s of a send to the next
    rank and the latency of one send."""

    cp: FloatArray
    link_bytes_per_s: FloatArray
    latency_s: FloatArray


def context_choices(w: Workload, s: Shape) -> list[int]:
    """Context-parallel degrees to try: the pinned one; else 1, and for a transformer trained
    on sequences of at least ``CONTEXT_PARALLEL_MIN_AUTO_TOKENS`` with a fused attention
    kernel, every degree of ``CONTEXT_PARALLEL`` that divides its tokens."""
    pinned = w.training.context_parallel if w.training_job else 1
    if isinstance(pinned, int):
        return [pinned]
    long = s.tokens >= CONTEXT_PARALLEL_MIN_AUTO_TOKENS
    if not (w.training_job and s.transformer and long and w.training.attention != "eager"):
        return [1]
    return [c for c in CONTEXT_PARALLEL if s.tokens % c == 0]


def _kv_elements_per_token_layer(s: Shape) -> float:
    """K and V elements per token of one layer: two of the hidden width scaled by the
    key-value heads' share (grouped-query attention); a head width of hidden / heads."""
    return 2.0 * s.hidden * s.kv_heads / max(s.heads, 1.0)


def ring_kernels_per_forward(s: Shape, cp: FloatArray) -> FloatArray:
    """Kernels the ring adds to one forward pass: ``RING_STEP_KERNELS`` per extra step and
    layer."""
    return np.asarray(np.maximum(cp - 1.0, 0.0) * s.layers * RING_STEP_KERNELS)


def ring_exposed_s(
    s: Shape,
    ring: Ring,
    micro_batch: FloatArray,
    tp: FloatArray,
    recompute_forwards: FloatArray,
    attention_s: FloatArray,
    el: float,
) -> FloatArray:
    """Seconds per micro-step of one GPU's K/V ring sends that its attention compute
    (``attention_s``, every pass of the micro-step) does not hide. ``recompute_forwards`` is
    the forward passes recomputation repeats (each repeats the ring); a tensor-parallel rank
    holds ``1 / tp`` of the heads, and so of their keys and values."""
    steps = np.maximum(ring.cp - 1.0, 0.0)
    chunk = micro_batch * s.tokens / ring.cp * _kv_elements_per_token_layer(s) * el / tp
    passes = RING_FORWARD_PASSES * (1.0 + recompute_forwards) + RING_BACKWARD_PASSES
    per_step = ring.latency_s + chunk / ring.link_bytes_per_s
    sends = s.layers * steps * passes * per_step
    return np.asarray(np.where(ring.cp > 1, np.maximum(sends - attention_s, 0.0), 0.0))
