"""The fit planner: how a practitioner would run the workload on each hardware configuration.

For every distinct (accelerator, GPU count) of the offers, the planner enumerates the recipes
a practitioner reaches for when a job does not fit as described: a fused attention kernel
(FlashAttention where the GPU has it), selective then full activation checkpointing, a
smaller micro-batch with gradient accumulation (the global batch stays), ZeRO-1/2/3 (FSDP)
over the instance's GPUs, tensor parallelism inside the instance, context parallelism for
long sequences (:mod:`.context_parallel`), and optimizer offload to the host last. Each
candidate is costed by :mod:`recommender.scoring.step_time`; the planner keeps the fastest
one that fits, preferring the less invasive change when two are as fast. What the user
pins in ``training:`` is the only choice for that dimension.

Everything is one numpy pass over the (candidate x configuration) cells that can win: recipes
that divide the instance's GPUs, no ZeRO stage over a single rank, and optimizer offload only
where nothing else fits (a BERT-Large job over the catalog: 1,161 of 5,760 cells), so planning
every offer of the catalog costs about as much as predicting one recipe did.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from recommender.scoring.calibration import Calibration
from recommender.scoring.context_parallel import Ring, context_choices
from recommender.scoring.hardware import MEM_EFFICIENT_ATTENTION_SPEED, Capabilities
from recommender.scoring.memory import StateBytes, usable_bytes
from recommender.scoring.shape import INFERENCE_LIVE_LAYERS, Shape
from recommender.scoring.step_time import Cells, StepTime, allreduce_latency_s, step_time
from recommender.workload import Workload

__all__ = [
    "CHECKPOINTING",
    "SHARDING",
    "Hardware",
    "Plans",
    "activation_bytes_per_sample",
    "attention_speed",
    "in_node_ring",
    "plan_batched",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

CHECKPOINTING = ("none", "selective", "full")
SHARDING = ("none", "zero1", "zero2", "zero3")
TENSOR_PARALLEL_CHOICES = (1, 2, 4, 8)
# ZeRO-3 keeps the parameters of the layers being gathered (prefetch of the next one).
ZERO3_LIVE_LAYERS = 2.0
# Prefer the recipe closer to the workload as written: each change (checkpointing, a ZeRO
# stage, tensor or context parallelism, offload) must buy at least this share of throughput
# to be taken (ZeRO-1 shards the optimizer update, a fraction of a per cent faster than
# plain DDP, but nobody switches a ResNet-50 job to it for that).
CHANGE_TOLERANCE = 0.01


@dataclass(frozen=True)
class Hardware:
    """Distinct hardware configurations: accelerator index and GPUs per instance."""

    acc: npt.NDArray[np.int32]
    gpus: FloatArray


@dataclass(frozen=True)
class Plans:
    """The chosen recipe per hardware configuration, with its predicted device time."""

    fits: BoolArray
    need_bytes: FloatArray  # per GPU under the chosen recipe
    tp: FloatArray
    cp: FloatArray  # context-parallel ranks per sequence
    dp: FloatArray  # model replicas (each of tp x cp GPUs)
    stage: IntArray
    ckpt: IntArray
    offload: BoolArray
    fused_attention: BoolArray
    micro_batch: FloatArray
    accumulation: FloatArray
    samples_per_step: FloatArray  # per instance
    time: StepTime
    activation_bytes: FloatArray  # per GPU
    state_bytes: FloatArray  # per GPU
    transformer: bool  # attention kernels and tensor parallelism apply


def activation_bytes_per_sample(
    s: Shape, ckpt: IntArray, fused: BoolArray, training: bool = True
) -> FloatArray:
    """Activation bytes one sample keeps for the backward pass, by checkpointing mode; for
    inference, what is alive at once (two layers' activations and the logits)."""
    score = np.where(fused, 0.0, s.score_act_bytes)
    if not training:
        layers = max(s.layers, 1.0)
        live = (s.layer_act_bytes + score) / layers * min(INFERENCE_LIVE_LAYERS, layers)
        return np.asarray(live + s.head_act_bytes / 3.0 + np.zeros(np.shape(ckpt)))
    none = s.layer_act_bytes + score
    selective = np.full(np.shape(ckpt), s.layer_act_bytes)
    one_layer = s.layer_bytes_one + score / max(s.layers, 1.0)
    full = s.layer_input_bytes + one_layer
    by_mode = np.where(ckpt >= 2, full, np.where(ckpt == 1, selective, none))
    return np.asarray(by_mode + s.head_act_bytes)


def _choices(w: Workload, s: Shape) -> list[tuple[int, int, int, int, int]]:
    """(checkpointing, ZeRO stage, tensor parallel, offload, context parallel) candidates, in
    preference order.

    Inference only chooses the tensor-parallel degree (the fewest GPUs per copy that hold
    it; the others serve as more copies)."""
    r = w.training
    if not w.training_job:
        heads_ok = [t for t in (*TENSOR_PARALLEL_CHOICES, 16) if s.heads % t == 0]
        return [(0, 0, t, 0, 1) for t in (heads_ok if s.transformer else [1])]
    if r.checkpointing != "auto":
        ckpt = [CHECKPOINTING.index(r.checkpointing)]
    else:
        ckpt = [0, 1, 2] if s.transformer else [0, 2]
    stage = [SHARDING.index(r.sharding)] if r.sharding != "auto" else [0, 1, 2, 3]
    if isinstance(r.tensor_parallel, int):
        tp = [r.tensor_parallel]
    elif s.transformer:
        tp = [t for t in TENSOR_PARALLEL_CHOICES if s.heads % t == 0 and s.kv_heads % t == 0]
    else:
        tp = [1]
    offload = [0, 1] if r.offload == "auto" else [int(r.offload == "optimizer")]
    grid = itertools.product(offload, context_choices(w, s), tp, stage, ckpt)
    return [(c, z, t, o, p) for o, p, t, z, c in grid]


def _fused_attention(w: Workload, caps: Capabilities, acc: npt.NDArray[np.int32]) -> BoolArray:
    if w.training.attention == "eager":
        return np.zeros(acc.shape, dtype=bool)
    return np.ones(acc.shape, dtype=bool)


def _micro_batch(
    w: Workload, room: FloatArray, state: FloatArray, act_per_sample: FloatArray, b: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(micro-batch, accumulation) per cell: the pinned micro-batch, else the largest that
    fits, with accumulation keeping at least the per-replica batch ``b``."""
    pinned = w.training.micro_batch if w.training_job else w.batch_size
    if pinned is not None:
        mb = np.minimum(np.full(b.shape, float(pinned)), b)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            mb = np.floor((room - state) / act_per_sample)
        mb = np.clip(mb, 0.0, b)
    acc = np.where(mb >= 1, np.ceil(b / np.maximum(mb, 1.0)), 1.0)
    mb = np.where(mb >= 1, np.ceil(b / acc), 0.0)
    return mb, acc


@dataclass(frozen=True)
class _Candidates:
    """The (recipe, configuration) cells worth costing, as flat arrays: ``choice`` and
    ``config`` index the dense (recipe x configuration) grid, the rest are per cell."""

    choice: IntArray
    config: IntArray
    ckpt: FloatArray
    stage: FloatArray
    tp: FloatArray
    offload: FloatArray
    cp: FloatArray
    valid: BoolArray
    dp: FloatArray
    group: FloatArray  # the ranks that reduce (and shard) the gradients
    fused: BoolArray
    act: FloatArray  # activation bytes per sample and GPU
    state_gpu: FloatArray
    room: FloatArray
    mb: FloatArray
    accumulation: FloatArray
    need: FloatArray
    fits: BoolArray

    def take(self, keep: BoolArray) -> _Candidates:
        return _Candidates(**{f: getattr(self, f)[keep] for f in self.__dataclass_fields__})


def _layout(tp: FloatArray, cp: FloatArray, gpus: FloatArray) -> tuple[BoolArray, FloatArray]:
    """(whether the recipe divides the instance's GPUs, its model replicas): one sequence runs
    on ``tp x cp`` GPUs."""
    split = tp * cp
    valid = (split <= gpus) & (np.mod(gpus, split) == 0)
    return valid, np.maximum(np.floor(gpus / split), 1.0)


def _cells_to_cost(grid: FloatArray, gpus: FloatArray) -> tuple[IntArray, IntArray]:
    """(recipe, configuration) indices of the cells the planner costs, in grid order.

    Left out, because they cannot change the pick: recipes that do not divide the instance's
    GPUs (invalid), and ZeRO stages over a single rank (identical to no sharding, and one
    change more) when no sharding is among the recipes. A configuration left with no cell
    keeps recipe 0, which the dense grid's fallback (the least-short candidate of an all-
    invalid column) would report."""
    stage, tp, cp = grid[:, 1:2], grid[:, 2:3], grid[:, 4:5]
    valid, dp = _layout(tp, cp, gpus)
    group = dp * cp
    keep = valid
    if np.any(stage == 0):
        keep = keep & ~((stage > 0) & (group == 1.0))
    keep[0] |= ~np.any(keep, axis=0)
    choice, config = np.nonzero(keep)
    return choice.astype(np.int64), config.astype(np.int64)


def _candidates(
    w: Workload,
    s: Shape,
    state: StateBytes,
    caps: Capabilities,
    hw: Hardware,
    grid: FloatArray,
) -> _Candidates:
    """Memory per GPU, micro-batch and fit of every cell worth costing."""
    choice, config = _cells_to_cost(grid, hw.gpus[None, :])
    ckpt, stage, tp, offload, cp = (grid[choice, i] for i in range(5))
    gpus = hw.gpus[config]
    valid, dp = _layout(tp, cp, gpus)
    group = dp * cp
    fused = _fused_attention(w, caps, hw.acc[config])
    act = activation_bytes_per_sample(s, ckpt.astype(np.int64), fused, w.training_job)
    act = act / (tp * cp)  # the GPUs one sequence runs on
    state_gpu = state.per_gpu(tp, group, stage, offload)
    state_gpu = state_gpu + np.where(
        stage >= 3, ZERO3_LIVE_LAYERS * state.weights / max(s.layers, 1.0) / tp, 0.0
    )
    room = usable_bytes(caps.memory_gb[hw.acc[config]])
    global_batch = w.training.global_batch if w.training_job else None
    per_replica = global_batch / dp if global_batch else np.full_like(dp, w.batch_size)
    per_replica = np.maximum(np.ceil(per_replica), 1.0)
    mb, accumulation = _micro_batch(w, room, state_gpu, act, per_replica)
    need = state_gpu + np.maximum(mb, 1.0) * act
    fits = valid & (mb >= 1) & (need <= room)
    return _Candidates(
        choice, config, ckpt, stage, tp, offload, cp, valid, dp, group, fused, act,
        state_gpu, room, mb, accumulation, need, fits,
    )  # fmt: skip


def _per_config(n_u: int, cells: _Candidates, flags: BoolArray) -> BoolArray:
    """Whether any cell of each configuration has ``flags`` set."""
    return np.bincount(cells.config, weights=flags, minlength=n_u) > 0


def _best_cells(n_c: int, n_u: int, cells: _Candidates, score: FloatArray) -> IntArray:
    """Per configuration, the cell of the highest score, or where nothing fits the least-
    short one: the dense (recipe x configuration) grid's argmax / argmin, ties to the first
    recipe."""
    at = (cells.choice, cells.config)
    dense_score = np.full((n_c, n_u), -np.inf)
    dense_score[at] = score
    shortfall = np.full((n_c, n_u), np.inf)
    shortfall[at] = np.where(cells.valid, cells.need - cells.room, np.inf)
    fits_any = _per_config(n_u, cells, cells.fits)
    best = np.where(fits_any, np.argmax(dense_score, axis=0), np.argmin(shortfall, axis=0))
    cell_of = np.full((n_c, n_u), -1, dtype=np.int64)
    cell_of[at] = np.arange(len(cells.choice))
    return np.asarray(cell_of[best, np.arange(n_u)])


def plan_batched(
    w: Workload,
    s: Shape,
    state: StateBytes,
    caps: Capabilities,
    hw: Hardware,
    cal: Calibration,
    el: float,
) -> Plans:
    """The fastest fitting recipe for ``w`` (training, or batched inference) on each
    configuration of ``hw``: the most samples per second per instance.

    Optimizer offload is the last resort: it is chosen only for the configurations where
    nothing else fits, so its cells are costed only there."""
    choices = _choices(w, s)
    n_c, n_u = len(choices), len(hw.acc)
    grid = np.array(choices, dtype=np.float64).reshape(n_c, 5)
    cells = _candidates(w, s, state, caps, hw, grid)
    fits_on_device = _per_config(n_u, cells, cells.fits & (cells.offload == 0))
    cells = cells.take(~((cells.offload > 0) & fits_on_device[cells.config]))
    acc = hw.acc[cells.config]
    costed = Hardware(acc=acc, gpus=hw.gpus[cells.config])
    c = _cells(
        caps, costed, w, cells.tp, cells.group, cells.stage, cells.ckpt, cells.offload,
        cells.fused, cells.mb, cells.accumulation,
    )  # fmt: skip
    if np.any(cells.cp > 1):  # a context-parallel ring's sends; none without one
        c = replace(c, ring=in_node_ring(caps, acc, cells.cp))
    t = step_time(w, s, state, c, cal, el)
    samples = np.maximum(cells.mb, 1.0) * cells.accumulation * cells.dp
    throughput = samples / t.total_s
    changes = (
        (cells.ckpt > 0).astype(np.float64)
        + (cells.stage > 0)
        + (cells.tp > 1)
        + (cells.cp > 1)
        + (cells.offload > 0)
    )
    score = np.where(cells.fits, throughput * (1.0 - CHANGE_TOLERANCE * changes), -np.inf)
    best = _best_cells(n_c, n_u, cells, score)

    def pick(x: npt.ArrayLike) -> FloatArray:
        a = np.asarray(x, dtype=np.float64)
        return np.full(n_u, float(a)) if a.ndim == 0 else a[best]

    chosen_mb = np.maximum(pick(cells.mb), 1.0)
    return Plans(
        fits=pick(cells.fits) > 0,
        need_bytes=pick(cells.need),
        tp=pick(cells.tp),
        cp=pick(cells.cp),
        dp=pick(cells.dp),
        stage=pick(cells.stage).astype(np.int64),
        ckpt=pick(cells.ckpt).astype(np.int64),
        offload=pick(cells.offload) > 0,
        fused_attention=pick(cells.fused) > 0,
        micro_batch=chosen_mb,
        accumulation=pick(cells.accumulation),
        samples_per_step=pick(samples),
        time=StepTime(**{f: pick(getattr(t, f)) for f in StepTime.__dataclass_fields__}),
        activation_bytes=pick(cells.act) * chosen_mb,
        state_bytes=pick(cells.state_gpu),
        transformer=s.transformer,
    )


def _cells(
    caps: Capabilities,
    hw: Hardware,
    w: Workload,
    tp: FloatArray,
    dp: FloatArray,
    stage: FloatArray,
    ckpt: FloatArray,
    offload: FloatArray,
    fused: BoolArray,
    mb: FloatArray,
    accumulation: FloatArray,
) -> Cells:
    a = hw.acc
    shape = tp.shape
    training = w.training_job
    return Cells(
        flop_per_s=np.broadcast_to(caps.flops[a], shape),
        bytes_per_s=np.broadcast_to(caps.bandwidth[a], shape),
        link_bytes_per_s=np.broadcast_to(caps.interconnect[a], shape),
        host_link_bytes_per_s=np.broadcast_to(caps.host_link[a], shape),
        allreduce_step_s=np.broadcast_to(caps.allreduce_step_s[a], shape),
        fused_attention=fused,
        attention_speed=np.broadcast_to(attention_speed(w, caps, a, fused), shape),
        attention_flop_per_s=np.broadcast_to(
            (caps.training_attention_flops if training else caps.flops)[a], shape
        ),
        fp8_linears=np.broadcast_to(caps.linear_only[a] & training, shape),
        tp=tp,
        dp=dp,
        stage=stage,
        ckpt=ckpt,
        offload=offload,
        micro_batch=np.maximum(mb, 1.0),
        accumulation=accumulation,
    )


def attention_speed(
    w: Workload, caps: Capabilities, acc: npt.NDArray[np.int32], fused: BoolArray
) -> FloatArray:
    """The attention kernel's rate against the architecture's native fused kernel, for the
    single-node and the multi-node planner alike:

    - materialised (``fused`` false: ``attention: eager``): 1, the score matrix's GEMMs run
      as plain GEMMs (their traffic is counted apart, ``attention_passes``);
    - fused on a GPU without FlashAttention: the memory-efficient kernel
      (``hardware.MEM_EFFICIENT_ATTENTION_SPEED``);
    - fused where the recipe pins ``attention: flash``: FlashAttention-2's rate
      (``hardware.FLASH_ATTENTION_2_SPEED``); else 1 (SDPA's dispatch, or an inference
      engine's own kernels)."""
    pinned = w.training.attention == "flash" and w.model.execution != "engine"
    flash2 = caps.flash2_speed[acc] if pinned else np.ones(acc.shape)
    return np.asarray(np.where(fused & ~caps.flash[acc], MEM_EFFICIENT_ATTENTION_SPEED, flash2))


def in_node_ring(caps: Capabilities, acc: npt.NDArray[np.int32], cp: FloatArray) -> Ring:
    """The context-parallel ring inside an instance: sends on the GPUs' own links, each with
    the latency NCCL's model gives its smallest ring (two ranks). The multi-node planner
    takes it for the rings that stay in a node."""
    link = np.broadcast_to(caps.interconnect[acc], cp.shape)
    step = np.broadcast_to(caps.allreduce_step_s[acc], cp.shape)
    return Ring(cp=cp, link_bytes_per_s=link, latency_s=allreduce_latency_s(2.0, step))
