"""LLM serving as engines run it: continuous batching bounded by the KV cache, prefill and
decode predicted apart, tensor parallelism and concurrency chosen per configuration.

- Memory: the engine takes ``SERVING_MEMORY_UTILIZATION`` of the device (vLLM's
  ``gpu_memory_utilization`` default, 0.9); the weights (divided by the tensor-parallel
  degree) and the runtime come first, the rest holds KV blocks. Concurrency is bounded by
  that room, by ``inference.max_batch`` (vLLM's ``max_num_seqs`` default is 256) and by the
  latency targets.
- Prefill is compute-bound: the prompt's FLOPs at the achievable matrix rate.
- Decode is bandwidth-bound at small batches: each step reads the weights once for the whole
  batch (a mixture of experts reads only the experts its tokens were routed to: with ``B``
  tokens and ``k`` of ``E`` experts each, ``E (1 - (1 - k/E)^B)`` experts per layer are
  touched) and every sequence's KV cache; each kernel class is on its own roofline.
- Continuous batching (Yu et al. 2022, "Orca"; Kwon et al. 2023, "vLLM"): in steady state
  each of the ``B`` slots runs one prefill and ``output_tokens`` decode steps per request, so
  a cycle takes ``output x t_decode(B) + B x t_prefill`` and TPOT is that cycle over the
  output length; TTFT is one prefill plus the decode step it waits behind.
- Weight formats: 16-bit, int8, fp8 (tensor cores on Ada / Hopper and newer), int4 (AWQ /
  GPTQ: weight-only, 16-bit compute) and fp4 (Blackwell); KV cache in 16 or 8 bits.
- Encoder-decoders (Whisper, T5; ``Shape.encoder``): the prefill is the encoder over its
  source plus the decoder over its forced prefix; a decode step streams only the decoder's
  weights, and reads each sequence's cross-attention K and V of every source position besides
  its own self-attention cache, which it also keeps in the KV room (Whisper large-v3: 246 MB
  per sequence at 16 bits, so its generation is bandwidth-bound at any batch).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator
from recommender.scoring.calibration import Calibration
from recommender.scoring.hardware import Capabilities, has_precision
from recommender.scoring.memory import GIB, RUNTIME_OVERHEAD_BYTES
from recommender.scoring.plan import Hardware
from recommender.scoring.shape import BYTES_PER_ELEMENT, Shape
from recommender.scoring.step_time import ALLREDUCE_LATENCY_NVLINK_S, ALLREDUCE_LATENCY_PCIE_S
from recommender.workload import Workload

__all__ = [
    "SERVING_MEMORY_UTILIZATION",
    "Serving",
    "decode_layers",
    "decoder_prompt",
    "kv_bytes_per_sequence",
    "plan_serving",
    "weight_bytes_per_parameter",
    "weight_support",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

SERVING_MEMORY_UTILIZATION = 0.9
# Quantised formats carry scales: AWQ / GPTQ int4 with a 16-bit scale and zero per group of
# 128 (4.25 bits; Lin et al. 2024, "AWQ"); NVFP4 with an fp8 scale per 16 values (4.5 bits;
# NVIDIA Blackwell NVFP4 format).
QUANTISED_BYTES = {"int4": 4.25 / 8, "fp4": 4.5 / 8}
# Tensor-parallel all-reduces per layer per forward step (Megatron-LM: attention and MLP),
# each of the layer's 16-bit output activations.
ALLREDUCES_PER_LAYER = 2.0
TP_ACTIVATION_BYTES = 2.0
# Kernels per layer of a CUDA-graph-captured decode step (fused norms, QKV, attention, MLP).
SERVING_KERNELS_PER_LAYER = 8.0
TENSOR_PARALLEL_CHOICES = (1, 2, 4, 8, 16)
# Device time per kernel of a decode step replayed as a CUDA graph (no per-kernel launch from
# the host; ~2 us of tail and scheduling each, NVIDIA's CUDA Graphs blog measurements).
CUDA_GRAPH_KERNEL_S = 2e-6
# Fp8 weight-only kernels (Marlin) run on Ampere and newer when the chip has no fp8 units.
FP8_WEIGHT_ONLY_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell", "cdna3"})


@dataclass(frozen=True)
class Serving:
    """The chosen serving plan per hardware configuration."""

    fits: BoolArray
    tp: FloatArray
    concurrency: FloatArray  # sequences one model copy decodes at once
    queued: FloatArray  # of a pinned concurrency, the requests per copy waiting for KV room
    copies: FloatArray  # model copies per instance
    need_bytes: FloatArray  # per GPU: weights + runtime + the KV the concurrency uses
    weights_bytes: FloatArray  # per GPU
    kv_bytes: FloatArray  # per GPU at the chosen concurrency
    prefill_s: FloatArray  # one request's prefill
    decode_s: FloatArray  # one decode step of the batch
    tpot_s: FloatArray
    ttft_s: FloatArray
    latency_s: FloatArray  # one request end to end
    requests_per_s: FloatArray  # per instance
    tokens_per_s: FloatArray  # generated tokens per instance
    memory_bound: BoolArray


def serving_execution(w: Workload) -> str:
    """How the decode loop runs: as the workload says, else ``compiled`` for continuous
    batching (vLLM, SGLang, TGI >= 1.1 and TensorRT-LLM capture decode steps as CUDA graphs)
    and ``eager`` for static batches (a Python generate loop). An engine's build
    (``engine``: TensorRT-LLM, FasterTransformer) captures its decode step too: ``compiled``."""
    if "execution" in w.model.model_fields_set:
        return "compiled" if w.model.execution == "engine" else w.model.execution
    spec = w.inference
    return "compiled" if spec is None or spec.engine == "continuous" else "eager"


def weight_bytes_per_parameter(fmt: str) -> float:
    return QUANTISED_BYTES.get(fmt, BYTES_PER_ELEMENT[fmt])


def weight_support(acc: Accelerator, fmt: str) -> tuple[bool, str]:
    """(whether ``acc`` serves weights in ``fmt``, the compute precision it uses)."""
    if fmt == "fp4":
        return has_precision(acc, "fp4"), "fp4"
    if fmt == "fp8":
        if has_precision(acc, "fp8"):
            return True, "fp8"
        return acc.architecture in FP8_WEIGHT_ONLY_ARCHITECTURES, "fp16"
    if fmt == "int8":
        return True, "int8" if has_precision(acc, "int8") else "fp16"
    return True, "fp16" if fmt == "int4" else fmt


def _format(w: Workload) -> tuple[str, str]:
    spec = w.inference
    assert spec is not None
    weights = spec.weights or w.precision
    kv = spec.kv_cache or ("bf16" if weights in ("int4", "fp4", "int8", "fp8") else weights)
    return weights, kv


def _touched_experts(s: Shape, tokens: FloatArray) -> FloatArray:
    """Expected experts (of E, k per token) a batch of ``tokens`` routes to, per layer."""
    e, k = float(s.experts), float(s.experts_per_token)
    return np.asarray(e * (1.0 - (1.0 - k / e) ** np.maximum(tokens, 1.0)))


@dataclass(frozen=True)
class _Rates:
    flops: FloatArray  # matrix FLOP/s at the weight format's compute precision
    bandwidth: FloatArray
    link: FloatArray
    nvlink: BoolArray
    supported: BoolArray


def _decode_step(
    w: Workload,
    s: Shape,
    r: _Rates,
    tp: FloatArray,
    b: FloatArray,
    context: float,
    wb: float,
    kvb: float,
    cal: Calibration,
) -> tuple[FloatArray, BoolArray]:
    """(seconds of one decode step of ``b`` sequences on a ``tp``-way copy, memory-bound)."""
    enc = s.encoder
    dense = s.parameters - s.expert_parameters - s.input_embedding_parameters
    active = s.active_parameters - s.input_embedding_parameters
    if enc is not None:  # every decoder expert: a batch's tokens reach most of them
        dense, active = enc.decode_parameters, enc.decode_active_parameters
    if s.experts > 1 and enc is None:
        per_expert = s.expert_parameters / s.experts
        weights = (dense + per_expert * _touched_experts(s, b)) * wb
    else:
        weights = np.full_like(b, dense * wb)
    gemm_flops = b * 2.0 * active
    layers = decode_layers(s)
    kv_read = b * (context * s.kv_bytes_per_token_16 + _cross_kv_16(s)) * kvb / 2.0
    attended = context + (enc.source_tokens if enc is not None else 0.0)
    attn_flops = b * 4.0 * attended * s.heads * (s.hidden / max(s.heads, 1.0)) * layers
    gemm = np.maximum(gemm_flops / r.flops, weights / r.bandwidth) / tp
    attention = np.maximum(
        attn_flops / (r.flops * cal.attention_gemm_efficiency), kv_read / r.bandwidth
    )
    attention = attention / tp
    comm = _tp_allreduces_s(r, tp, layers, b, s.hidden)
    execution = serving_execution(w)
    per_kernel = (
        cal.kernel_gpu_s if execution == "eager" else min(cal.kernel_gpu_s, CUDA_GRAPH_KERNEL_S)
    )
    kernels = SERVING_KERNELS_PER_LAYER * layers * per_kernel
    # Memory-bound when streaming the weights and the KV cache takes longer than the matrix
    # and attention arithmetic (a long context or an encoder-decoder's cross-attention makes
    # the KV reads the larger part).
    arithmetic = gemm_flops / r.flops + attn_flops / (r.flops * cal.attention_gemm_efficiency)
    memory_bound = (weights + kv_read) / r.bandwidth >= arithmetic
    # The engine's own host time per iteration (scheduling, sampling, detokenising): small
    # when the decode step is a captured CUDA graph (``execution: compiled``: vLLM,
    # TensorRT-LLM, SGLang, gpt-fast), tens of ms for a Python loop launching every kernel
    # (``eager``: Hugging Face generate, early TGI). ``serving_step_s``: set, not fitted.
    step = gemm + attention + comm + kernels + cal.serving_step_s[execution]
    return np.asarray(step), np.asarray(memory_bound)


def decode_layers(s: Shape) -> float:
    """Layers one decode step runs (an encoder-decoder's decoder only)."""
    return s.encoder.decoder_layers if s.encoder is not None else s.layers


def decoder_prompt(s: Shape, prompt_tokens: float) -> float:
    """Tokens the decoder prefills: the prompt, or an encoder-decoder's forced prefix."""
    return s.encoder.decoder_prompt_tokens if s.encoder is not None else prompt_tokens


def _cross_kv_16(s: Shape) -> float:
    return s.encoder.cross_kv_bytes_16 if s.encoder is not None else 0.0


def kv_bytes_per_sequence(
    s: Shape, prompt_tokens: float, output_tokens: float, kvb: float
) -> float:
    """KV cache bytes one sequence holds at its longest, over every layer (before tensor
    parallelism divides it): self-attention K and V per decoder token, plus an encoder-
    decoder's cross-attention K and V."""
    tokens = decoder_prompt(s, prompt_tokens) + output_tokens
    return (tokens * s.kv_bytes_per_token_16 + _cross_kv_16(s)) * kvb / 2.0


def _tp_allreduces_s(
    r: _Rates, tp: FloatArray, layers: float, tokens: npt.ArrayLike, hidden: float
) -> FloatArray:
    """Seconds of a tensor-parallel forward's all-reduces over ``tokens`` tokens: two per
    layer (Megatron-LM, Shoeybi et al. 2019, section 3), each a ring of the tokens' 16-bit
    activations, ``2 (tp-1)/tp`` of the message over the link (Patarasuk and Yuan 2009); none
    without tensor parallelism. A decode step sends one token per sequence; a prefill sends
    the whole prompt, so over PCIe its all-reduces can take as long as its arithmetic."""
    latency = np.where(r.nvlink, ALLREDUCE_LATENCY_NVLINK_S, ALLREDUCE_LATENCY_PCIE_S)
    message = np.asarray(tokens, dtype=np.float64) * hidden * TP_ACTIVATION_BYTES
    comm = ALLREDUCES_PER_LAYER * layers * (latency + 2.0 * (tp - 1) / tp * message / r.link)
    return np.asarray(np.where(tp > 1, comm, 0.0))


def _prefill(s: Shape, r: _Rates, tp: FloatArray, prompt: float, cal: Calibration) -> FloatArray:
    """Seconds of one request's prefill (compute-bound; causal attention over the prompt, and
    an encoder-decoder's encoder over its source), with its tensor-parallel all-reduces."""
    enc = s.encoder
    prompt = decoder_prompt(s, prompt)
    params = s.active_parameters - s.input_embedding_parameters
    params = enc.decode_active_parameters if enc is not None else params
    gemm = prompt * 2.0 * params + (enc.matmul_flops if enc is not None else 0.0)
    attention = prompt * 2.0 * prompt * s.hidden * decode_layers(s)  # 4 s d / 2: causal half
    attention += enc.attention_flops if enc is not None else 0.0
    seconds = gemm / r.flops + attention / (r.flops * cal.attention_gemm_efficiency)
    comm = _tp_allreduces_s(r, tp, decode_layers(s), prompt, s.hidden)
    if enc is not None:
        comm = comm + _tp_allreduces_s(
            r, tp, s.layers - enc.decoder_layers, enc.source_tokens, s.hidden
        )
    return np.asarray(seconds / tp + comm)


def _rates(caps: Capabilities, accs: list[Accelerator], hw: Hardware, fmt: str) -> _Rates:
    """Matrix rates at the weight format's compute precision, per configuration."""
    rate, ok = [], []
    for i, acc in enumerate(accs):
        supported, compute = weight_support(acc, fmt)
        peak: float | None = getattr(acc.peak_tflops, compute, None)
        achievable_share = caps.flops[i] / caps.peak_flops[i]
        rate.append((peak * 1e12 if peak else caps.peak_flops[i]) * achievable_share)
        ok.append(supported)
    return _Rates(
        flops=np.asarray(rate, dtype=np.float64)[hw.acc],
        bandwidth=caps.bandwidth[hw.acc],
        link=caps.interconnect[hw.acc],
        nvlink=caps.has_nvlink[hw.acc],
        supported=np.asarray(ok, dtype=bool)[hw.acc],
    )


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
    fmt, kv_fmt = _format(w)
    wb, kvb = weight_bytes_per_parameter(fmt), BYTES_PER_ELEMENT[kv_fmt]
    r = _rates(caps, accs, hw, fmt)
    tps = _tp_choices(w, s)
    batches = _batch_choices(w)
    n_t, n_b, n_u = len(tps), len(batches), len(hw.acc)
    tp = np.broadcast_to(np.array(tps, dtype=np.float64).reshape(n_t, 1, 1), (n_t, n_b, n_u))
    b = np.broadcast_to(np.array(batches, dtype=np.float64).reshape(1, n_b, 1), (n_t, n_b, n_u))
    gpus = np.broadcast_to(hw.gpus, (n_t, n_b, n_u))
    room = caps.memory_gb[hw.acc] * GIB * SERVING_MEMORY_UTILIZATION - RUNTIME_OVERHEAD_BYTES
    weights_gpu = s.parameters * wb / tp
    replication = np.maximum(tp / max(s.kv_heads, 1.0), 1.0)  # KV heads copied when tp > heads
    kv_sequence = kv_bytes_per_sequence(s, spec.prompt_tokens, spec.output_tokens, kvb)
    kv_per_sequence = kv_sequence * replication / tp
    asked = b
    b, waiting = _running_batch(w, asked, room - weights_gpu, kv_per_sequence)
    kv_gpu = b * kv_per_sequence
    need = weights_gpu + kv_gpu
    fits = (tp <= gpus) & (np.mod(gpus, tp) == 0) & (b >= 1) & r.supported
    b = np.maximum(b, 1.0)  # configurations that do not fit still get finite figures
    context = decoder_prompt(s, spec.prompt_tokens) + spec.output_tokens / 2.0
    decode, memory_bound = _decode_step(w, s, r, tp, b, context, wb, kvb, cal)
    prefill = _prefill(s, r, tp, float(spec.prompt_tokens), cal)
    out = float(spec.output_tokens)
    cycle = out * decode + b * prefill
    tpot = cycle / out
    # A request that finds every KV slot taken waits for ``waiting`` requests ahead of it to
    # finish, at ``b / cycle`` completions per second (a closed loop of ``asked`` clients).
    ttft = prefill + decode + waiting * cycle / b
    latency = ttft + out * tpot
    copies = np.floor(gpus / tp)
    requests = copies * b / cycle
    ok = fits & _meets_targets(w, tpot, ttft, latency)
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
        need_bytes=pick(need) + RUNTIME_OVERHEAD_BYTES,
        weights_bytes=pick(weights_gpu),
        kv_bytes=pick(kv_gpu),
        prefill_s=pick(prefill),
        decode_s=pick(decode),
        tpot_s=pick(tpot),
        ttft_s=pick(ttft),
        latency_s=pick(latency),
        requests_per_s=np.where(chosen_fits, pick(requests), 0.0),
        tokens_per_s=np.where(chosen_fits, pick(requests) * out, 0.0),
        memory_bound=pick(memory_bound) > 0,
    )


def _running_batch(
    w: Workload, asked: FloatArray, kv_room: FloatArray, kv_per_sequence: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(sequences a copy decodes at once, requests per copy left waiting).

    A continuous-batching engine admits a request only when its KV blocks fit (vLLM's
    scheduler, Kwon et al. 2023, section 4.2; TGI and LMDeploy alike), so the running batch is
    the concurrency asked for, at most what the KV room holds. Of a concurrency the user pins
    (``batch_size``: a load test's concurrent clients) the rest queue. A candidate the planner
    tries itself (``_batch_choices``) fits whole or is not a plan, so its pick stays the
    largest candidate the room and the targets allow. None fits when the weights leave no
    room for one sequence."""
    with np.errstate(divide="ignore", invalid="ignore"):
        slots = np.where(
            kv_per_sequence > 0, np.floor(np.maximum(kv_room, 0.0) / kv_per_sequence), np.inf
        )
    slots = np.where(kv_room > 0, slots, 0.0)
    if "batch_size" in w.model_fields_set:
        running = np.minimum(asked, slots)
        return np.asarray(running, dtype=np.float64), np.asarray(asked - running, dtype=np.float64)
    running = np.where(asked <= slots, asked, 0.0)
    return np.asarray(running, dtype=np.float64), np.zeros_like(running, dtype=np.float64)


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
