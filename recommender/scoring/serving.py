"""LLM serving as engines run it: continuous batching bounded by the KV cache, prefill and
decode predicted apart, tensor parallelism and concurrency chosen per configuration.

- Memory: the engine takes ``inference.memory_utilization`` of the device, by default
  ``SERVING_MEMORY_UTILIZATION`` (vLLM's ``gpu_memory_utilization`` default, 0.9); the
  weights (divided by the tensor-parallel degree) and the runtime come first, the rest holds
  KV blocks. Concurrency is bounded by that room, by ``inference.max_batch`` (vLLM's
  ``max_num_seqs`` default is 256) and by the latency targets.
- Prefill and decode are costed apart (``serving_step``: one prefill, one decode step of a
  batch, encoder-decoders included).
- Continuous batching (Yu et al. 2022, "Orca"; Kwon et al. 2023, "vLLM"): in steady state
  each of the ``B`` slots runs one prefill and ``output_tokens`` decode steps per request, so
  a cycle takes ``output x t_decode(B) + B x t_prefill`` and TPOT is that cycle over the
  output length; TTFT is one prefill plus the decode step it waits behind.
- Random arrivals (``targets.latency_percentile``): a TTFT held for a percentile of requests
  that arrive at random caps how busy the slots may be, since a request that finds them all
  taken waits for one (:mod:`.queueing`, M/M/c); the rate is the slots' occupancy times the
  always-full rate.
- Weight formats (:mod:`.serving_formats`): 16-bit, int8, fp8 (tensor cores on Ada / Hopper
  and newer), int4 (AWQ / GPTQ: weight-only, 16-bit compute, or W4A8) and fp4 (Blackwell); KV
  cache in 16 or 8 bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator
from recommender.scoring.calibration import Calibration
from recommender.scoring.hardware import Capabilities
from recommender.scoring.memory import GIB, RUNTIME_OVERHEAD_BYTES
from recommender.scoring.plan import Hardware
from recommender.scoring.queueing import poisson_quantile, sustainable_occupancy
from recommender.scoring.serving_formats import serving_formats, serving_rates, weight_bytes
from recommender.scoring.serving_step import (
    decode_step,
    decoder_prompt,
    kv_bytes_per_sequence,
    prefill,
    stage_handoff_s,
    uncaptured_decode_s,
)
from recommender.scoring.shape import BYTES_PER_ELEMENT, Shape
from recommender.workload import Workload

__all__ = [
    "SERVING_MEMORY_UTILIZATION",
    "Serving",
    "copy_span",
    "memory_utilization",
    "next_concurrency",
    "occupancy",
    "plan_serving",
    "request_timing",
    "tpot_prefills",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

SERVING_MEMORY_UTILIZATION = 0.9
TENSOR_PARALLEL_CHOICES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class Serving:
    """The chosen serving plan per hardware configuration."""

    fits: BoolArray
    tp: FloatArray
    concurrency: FloatArray  # sequences one model copy decodes at once (a mean: see below)
    queued: FloatArray  # of a pinned concurrency, the requests per copy waiting for KV room
    copies: FloatArray  # model copies per instance
    in_flight: FloatArray  # requests in flight per instance: busy copies x concurrency
    occupancy: FloatArray  # share of the slots kept busy (below 1: random arrivals, a TTFT tail)
    meets: BoolArray  # the plan meets the TTFT / TPOT / latency targets
    need_bytes: FloatArray  # per GPU: weights + runtime + the KV the concurrency uses
    weights_bytes: FloatArray  # per GPU
    kv_bytes: FloatArray  # per GPU at the chosen concurrency
    kv_slots: FloatArray  # per copy: the sequences its KV room holds (inf: no KV to hold)
    prefill_s: FloatArray  # one request's prefill
    decode_s: FloatArray  # one decode step of the batch
    cycle_s: FloatArray  # one slot's turn: its prefills and decode steps (a static batch's run)
    host_s: FloatArray  # of the cycle, the engine's host loop between decode steps (GPU idle)
    tpot_s: FloatArray
    ttft_s: FloatArray
    latency_s: FloatArray  # one request end to end
    requests_per_s: FloatArray  # per instance
    tokens_per_s: FloatArray  # generated tokens per instance
    memory_bound: BoolArray

    @property
    def host_share(self) -> FloatArray:
        """Share of each cycle the engine's host loop leaves the GPU idle."""
        return np.asarray(self.host_s / np.maximum(self.cycle_s, 1e-30))


def memory_utilization(w: Workload) -> float:
    """Share of each GPU's memory the serving engine takes: the workload's
    ``inference.memory_utilization``, else vLLM's default (``SERVING_MEMORY_UTILIZATION``)."""
    spec = w.inference
    stated = spec.memory_utilization if spec is not None else None
    return stated if stated is not None else SERVING_MEMORY_UTILIZATION


def copy_span(w: Workload) -> int:
    """GPUs one model copy spans as the workload pins them: ``inference.tensor_parallel`` x
    ``inference.pipeline_parallel`` (1 where neither is pinned, or for any other workload).
    An instance whose GPU count is not a multiple of it holds no whole copy."""
    spec = w.inference
    if spec is None or not w.is_llm_serving:
        return 1
    tp = spec.tensor_parallel if isinstance(spec.tensor_parallel, int) else 1
    return tp * spec.pipeline_parallel


def plan_serving(
    w: Workload,
    s: Shape,
    caps: Capabilities,
    accs: list[Accelerator],
    hw: Hardware,
    cal: Calibration,
) -> Serving:
    """For each configuration, the tensor-parallel degree and concurrency that give the most
    generated tokens per instance while meeting the TTFT, TPOT and p95 targets."""
    spec = w.inference
    assert spec is not None
    fmt, kv_fmt = serving_formats(w)
    wb, kvb = weight_bytes(w, fmt), BYTES_PER_ELEMENT[kv_fmt]
    r = serving_rates(caps, accs, hw, w, cal)
    tps = _tp_choices(w, s)
    pp = float(spec.pipeline_parallel)
    batches = _batch_choices(w)
    n_t, n_b, n_u = len(tps), len(batches), len(hw.acc)
    tp = np.broadcast_to(np.array(tps, dtype=np.float64).reshape(n_t, 1, 1), (n_t, n_b, n_u))
    b = np.broadcast_to(np.array(batches, dtype=np.float64).reshape(1, n_b, 1), (n_t, n_b, n_u))
    gpus = np.broadcast_to(hw.gpus, (n_t, n_b, n_u))
    room = caps.memory_gb[hw.acc] * GIB * memory_utilization(w) - RUNTIME_OVERHEAD_BYTES
    span = tp * pp  # GPUs of one model copy
    weights_gpu = s.parameters * wb / span
    replication = np.maximum(tp / max(s.kv_heads, 1.0), 1.0)  # KV heads copied when tp > heads
    _, steps = _decode_steps(w)
    kv_sequence = kv_bytes_per_sequence(s, spec.prompt_tokens, int(steps), kvb)
    kv_per_sequence = kv_sequence * replication / span
    copies = np.floor(gpus / span)
    busy_copies, asked = _clients_per_copy(w, b, copies)
    slots = _kv_slots(room - weights_gpu, kv_per_sequence)
    b, waiting = _running_batch(w, asked, slots)
    kv_gpu = b * kv_per_sequence
    need = weights_gpu + kv_gpu
    fits = (span <= gpus) & (np.mod(gpus, span) == 0) & (b >= 1) & r.supported
    b = np.maximum(b, 1.0)  # configurations that do not fit still get finite figures
    micro = _micro_batch(w, b, pp)
    context = decoder_prompt(s, spec.prompt_tokens) + steps / 2.0
    decode, memory_bound, host = decode_step(w, s, r, tp, micro, context, wb, kvb, cal)
    prompt = float(spec.prompt_tokens)
    hand_offs = pp - 1.0  # a token's pass (and a prompt's) crosses each stage boundary once
    decode = decode + hand_offs * stage_handoff_s(r, micro, s.hidden)
    decode = decode + uncaptured_decode_s(w, s, pp, accs, hw.acc)  # some llama.cpp builds
    prefill_time = prefill(s, r, tp, prompt, cal) + hand_offs * stage_handoff_s(r, prompt, s.hidden)
    out = float(spec.output_tokens)
    cycle, tpot, ttft, latency = request_timing(w, decode, prefill_time, micro, waiting * micro / b)
    busy, held = occupancy(w, b, cycle, ttft)
    requests = busy_copies * b * busy / cycle
    ok = fits & _meets_targets(w, tpot, ttft, latency) & held
    score = np.where(ok, requests, -np.inf)
    flat = score.reshape(n_t * n_b, n_u)
    best = np.argmax(flat, axis=0)
    any_ok = np.any(ok.reshape(n_t * n_b, n_u), axis=0)
    # Nothing meets the targets: report the plan with the lowest latency that fits.
    fallback = np.argmin(np.where(fits, latency, np.inf).reshape(n_t * n_b, n_u), axis=0)
    best = np.where(any_ok, best, fallback)
    cols = np.arange(n_u)

    def pick(x: npt.ArrayLike) -> FloatArray:
        arr = np.broadcast_to(x, (n_t, n_b, n_u)).reshape(n_t * n_b, n_u)
        return np.asarray(arr[best, cols], dtype=np.float64)

    chosen_fits = pick(fits) > 0
    return Serving(
        fits=chosen_fits,
        tp=pick(tp),
        concurrency=pick(b),
        queued=pick(waiting),
        copies=pick(copies),
        in_flight=pick(busy_copies * b),
        occupancy=pick(busy),
        meets=any_ok,
        need_bytes=pick(need) + RUNTIME_OVERHEAD_BYTES,
        weights_bytes=pick(weights_gpu),
        kv_bytes=pick(kv_gpu),
        kv_slots=pick(slots),
        prefill_s=pick(prefill_time),
        decode_s=pick(decode),
        cycle_s=pick(cycle),
        host_s=pick(steps * host),
        tpot_s=pick(tpot),
        ttft_s=pick(ttft),
        latency_s=pick(latency),
        requests_per_s=np.where(chosen_fits, pick(requests), 0.0),
        tokens_per_s=np.where(chosen_fits, pick(requests) * out, 0.0),
        memory_bound=pick(memory_bound) > 0,
    )


def _micro_batch(w: Workload, batch: FloatArray, stages: float) -> FloatArray:
    """Sequences that pass a copy's pipeline stages together. A continuous-batching engine
    keeps one micro-batch in flight per stage, ``batch / stages`` sequences each (vLLM's
    pipeline-parallel scheduler; Narayanan et al. 2021), so the stages work at once and the
    copy's rate is the batch over one token's pass; a static batch (llama.cpp, a Hugging Face
    generate loop over ``device_map='auto'``) passes them as one, each stage idle while the
    others run. One stage: the whole batch."""
    spec = w.inference
    assert spec is not None
    if stages <= 1.0 or spec.engine == "static":
        return batch
    return np.asarray(np.maximum(batch / stages, 1.0), dtype=np.float64)


def _decode_steps(w: Workload) -> tuple[bool, float]:
    """(whether batches are static, decode steps one batch of requests takes).

    Continuous batching (Yu et al. 2022, "Orca") admits a request as another finishes, so a
    slot decodes each request's ``output_tokens``. A static batch decodes until its longest
    output ends, its finished sequences padded along (Orca, section 2.2): ``max_output_tokens``
    (the generation cap) where stated, the bound a large batch's longest reaches, else
    ``output_tokens`` (outputs of one length)."""
    spec = w.inference
    assert spec is not None
    if spec.engine != "static":
        return False, float(spec.output_tokens)
    return True, float(spec.max_output_tokens or spec.output_tokens)


def request_timing(
    w: Workload,
    step: FloatArray,
    prefill_time: FloatArray,
    batch: FloatArray,
    waiting: FloatArray | float = 0.0,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(cycle, TPOT, TTFT, request latency) in seconds of ``batch`` slots whose decode step
    takes ``step`` and each prefill ``prefill_time``, for the single-node and the multi-node
    planners alike.

    A slot's cycle is its decode steps (:func:`_decode_steps`) plus the batch's prefills.
    Continuous batching interleaves the prefills with the decode steps, so each token waits
    for both (TPOT = cycle / output tokens) and a request's first token one prefill and one
    step; a static batch prefills its requests together, then decodes, so its first token
    waits for every prefill and its requests end with the cycle. A request that finds every
    KV slot taken waits for ``waiting`` requests ahead of it to finish, at ``batch / cycle``
    completions per second (a closed loop of clients)."""
    spec = w.inference
    assert spec is not None
    static, steps = _decode_steps(w)
    out = float(spec.output_tokens)
    cycle = np.asarray(steps * step + batch * prefill_time)
    queue = np.asarray(waiting * cycle / batch)
    if static:
        ttft = np.asarray(batch * prefill_time + step + queue)
        return cycle, np.asarray(step), ttft, np.asarray(cycle + queue)
    tpot = np.asarray((steps * step + tpot_prefills(w, batch) * prefill_time) / out)
    ttft = np.asarray(prefill_time + step + queue)
    return cycle, tpot, ttft, np.asarray(ttft + cycle)


def tpot_prefills(w: Workload, batch: npt.ArrayLike) -> FloatArray:
    """Prefills of the requests admitted while one continuously batched request decodes, as
    a TPOT target counts them: ``batch`` on average (one per slot over its
    ``output_tokens`` steps). With requests arriving at random (``targets.latency_percentile``,
    no pinned concurrency) the target holds for that percentile of a Poisson count
    (:func:`.queueing.poisson_quantile`): at MLPerf's 99th a request among 64 slots carries 83,
    not 64."""
    t = w.targets
    mean = np.asarray(batch, dtype=np.float64)
    if t.latency_percentile is None or "batch_size" in w.model_fields_set:
        return mean
    return poisson_quantile(mean, t.latency_percentile)


def _clients_per_copy(
    w: Workload, concurrency: FloatArray, copies: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(model copies with requests to serve, the concurrency each of them is asked for).

    A concurrency the user pins (``batch_size``) is the instance's: a load test's clients
    against one endpoint, which spreads them over the copies behind it, so ``n`` clients keep
    ``min(copies, n)`` copies busy with ``n / min(copies, n)`` each on average (vLLM's
    ``benchmark_serving --max-concurrency``, llmperf's ``--num-concurrent-requests``: clients
    of the deployment, not of each replica). A concurrency the planner tries itself is per
    copy: every copy runs that many."""
    if "batch_size" not in w.model_fields_set:
        return copies, concurrency
    busy = np.maximum(np.minimum(copies, concurrency), 1.0)
    return busy, np.asarray(concurrency / busy, dtype=np.float64)


def _kv_slots(kv_room: FloatArray, kv_per_sequence: FloatArray) -> FloatArray:
    """Sequences a copy's KV room holds: none when the weights leave no room, unbounded when
    a sequence keeps no KV."""
    with np.errstate(divide="ignore", invalid="ignore"):
        slots = np.where(
            kv_per_sequence > 0, np.floor(np.maximum(kv_room, 0.0) / kv_per_sequence), np.inf
        )
    return np.asarray(np.where(kv_room > 0, slots, 0.0), dtype=np.float64)


def _running_batch(
    w: Workload, asked: FloatArray, slots: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(sequences a copy decodes at once, requests per copy left waiting).

    A continuous-batching engine admits a request only when its KV blocks fit (vLLM's
    scheduler, Kwon et al. 2023, section 4.2; TGI and LMDeploy alike), so the running batch is
    the concurrency asked for, at most the ``slots`` the KV room holds. Of a concurrency the
    user pins (``batch_size``: a load test's concurrent clients) the rest queue. A candidate
    the planner tries itself (``_batch_choices``) fits whole or is not a plan, so its pick
    stays the largest candidate the room and the targets allow."""
    if "batch_size" in w.model_fields_set:
        running = np.minimum(asked, slots)
        return np.asarray(running, dtype=np.float64), np.asarray(asked - running, dtype=np.float64)
    running = np.where(asked <= slots, asked, 0.0)
    return np.asarray(running, dtype=np.float64), np.zeros_like(running, dtype=np.float64)


def occupancy(
    w: Workload, slots: FloatArray, hold_s: FloatArray, ttft_s: FloatArray
) -> tuple[FloatArray, BoolArray]:
    """(share of a copy's ``slots`` the rate keeps busy, whether that holds the TTFT tail).

    The share is 1 when requests queue without end (a benchmark's Offline run) or a pinned
    concurrency is a closed loop; with ``targets.latency_percentile`` (random arrivals), the
    most that keeps that percentile's wait for a slot within what ``ttft_ms`` leaves after the
    prefill (:func:`recommender.scoring.queueing.sustainable_occupancy`; ``hold_s``: the time
    a request holds its slot, the serving cycle). Where no share holds it, the plan misses its
    targets and keeps the full-slot rate, as a plan that misses a TPOT target does."""
    t = w.targets
    ones = np.ones(np.broadcast(slots, hold_s, ttft_s).shape)
    if t.latency_percentile is None or t.ttft_ms is None or "batch_size" in w.model_fields_set:
        return ones, ones > 0
    allowed = t.ttft_ms / 1e3 - ttft_s
    busy = sustainable_occupancy(slots * ones, hold_s * ones, allowed * ones, t.latency_percentile)
    held = busy > 0
    return np.where(held, busy, 1.0), held


def _meets_targets(
    w: Workload, tpot: FloatArray, ttft: FloatArray, latency: FloatArray
) -> BoolArray:
    t = w.targets
    ok = np.ones(tpot.shape, dtype=bool)
    if t.tpot_ms is not None:
        ok &= tpot * 1e3 <= t.tpot_ms
    if t.ttft_ms is not None:
        ok &= ttft * 1e3 <= t.ttft_ms
    if t.p95_latency_ms is not None:
        ok &= latency * 1e3 <= t.p95_latency_ms
    return ok


def _tp_choices(w: Workload, s: Shape) -> list[int]:
    spec = w.inference
    assert spec is not None
    if isinstance(spec.tensor_parallel, int):
        return [spec.tensor_parallel]
    return [t for t in TENSOR_PARALLEL_CHOICES if s.heads % t == 0]


def _batch_choices(w: Workload) -> list[int]:
    """Concurrency candidates: the pinned ``batch_size``, else powers of two up to
    ``max_batch`` (and ``max_batch`` itself)."""
    spec = w.inference
    assert spec is not None
    if "batch_size" in w.model_fields_set:
        return [w.batch_size]
    out, b = [], 1
    while b < spec.max_batch:
        out.append(b)
        b *= 2
    return [*out, spec.max_batch]


def next_concurrency(w: Workload, concurrency: int) -> int | None:
    """The planner's next concurrency candidate above ``concurrency`` (:func:`_batch_choices`),
    or None where ``concurrency`` is already the last (``inference.max_batch``)."""
    return next((c for c in _batch_choices(w) if c > concurrency), None)
