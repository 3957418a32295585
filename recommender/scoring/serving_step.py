"""One decode step and one prefill of an LLM serving engine, per (tensor-parallel degree x
concurrency x hardware) cell: what ``serving.plan_serving`` and the multi-node serving plan
cost before they choose.

- Decode is bandwidth-bound at small batches: each step reads the weights once for the whole
  batch (a mixture of experts reads only the experts its tokens were routed to: with ``B``
  tokens and ``k`` of ``E`` experts each, ``E (1 - (1 - k/E)^B)`` experts per layer are
  touched) and every sequence's KV cache; each kernel class is on its own roofline.
- Prefill is compute-bound: the prompt's FLOPs at the achievable matrix rate, plus its
  tensor-parallel all-reduces of the whole prompt.
- Encoder-decoders (Whisper, T5; ``Shape.encoder``): the prefill is the encoder over its
  source plus the decoder over its forced prefix; a decode step streams only the decoder's
  weights, and reads each sequence's cross-attention K and V of every source position besides
  its own self-attention cache, which it also keeps in the KV room (Whisper large-v3: 246 MB
  per sequence at 16 bits, so its generation is bandwidth-bound at any batch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator
from recommender.scoring.calibration import Calibration
from recommender.scoring.issue_rate import kernels_of
from recommender.scoring.kernel_costs import CUDA_GRAPH_KERNEL_S, EAGER_LAUNCH_S, cycle_s
from recommender.scoring.shape import Shape
from recommender.scoring.step_time import allreduce_latency_s
from recommender.scoring.tgi_gptq import exllama_rebuild_bytes, triton_launches_s, triton_loops_s
from recommender.workload import Workload

__all__ = [
    "Rates",
    "charges_sequences",
    "decode_kernels_per_layer",
    "decode_layers",
    "decode_step",
    "decoder_prompt",
    "engine_step_s",
    "kv_bytes_per_sequence",
    "prefill",
    "serving_execution",
    "stage_handoff_s",
    "uncaptured_decode",
    "uncaptured_decode_s",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# Tensor-parallel all-reduces per layer per forward step (Megatron-LM: attention and MLP),
# each of the layer's 16-bit output activations.
ALLREDUCES_PER_LAYER = 2.0
TP_ACTIVATION_BYTES = 2.0
# Kernels per layer of a CUDA-graph-captured decode step (fused norms, QKV, attention, MLP).
SERVING_KERNELS_PER_LAYER = 8.0
# llama.cpp runs its ggml graph op by op, unfused: its Llama graph has 32 nodes a layer (the
# "graph nodes = 1030" every llama.cpp log prints for a 32-layer Llama: 32 x 32 plus the
# embedding lookup, the last layer's two output-row gathers, the final norm, its multiply and
# the output matmul), of which 23 launch a kernel (``build_llama`` and ``llm_build_kv``: two
# RMS norms and their weight multiplies, the Q, K, V, output, gate, up and down matmuls, two
# RoPEs, the K and V cache copies, the KQ and KQV matmuls, the softmax, a ``cont``, SiLU, the
# gate multiply and two residual adds; the rest are views, reshapes and permutes).
LLAMA_CPP_KERNELS_PER_LAYER = 23.0
# Each quantised weight matmul (mmvq) first quantises its input to q8_1 in a kernel of its own
# (ggml-cuda ``quantize_row_q8_1_cuda``): one more per weight matrix of a layer, seven.
LLAMA_CPP_QUANTISE_KERNELS_PER_LAYER = 7.0
# Bytes per weight of a 16-bit checkpoint: below it, llama.cpp's weights are quantised.
SIXTEEN_BIT_WEIGHT_BYTES = 2.0
# Host time a decode step of vLLM's V0 engine (before 0.11; 0.10 falls back to it for models
# its V1 engine lacks, Whisper among them) leaves the GPU idle between two captured (CUDA
# graph) decode steps: in the RFC for multi-step scheduling (vllm-project/vllm#6854, 2024-07) the
# profiled V0 decode loop shows "about 4ms of GPU bubble" between steps, "incurred on every
# decode" (scheduling, input preparation, the sampled tokens' copy to the host and their
# pythonisation; the RFC puts the bubble at 5-13 ms in general). Asynchronous output
# processing (#6913) hides only the output handling, 0.2 ms at batch 1 in its own table, and
# multi-step scheduling is off unless asked for (``num_scheduler_steps=1``), so the 4 ms
# stands for a V0 step. Charged instead of ``serving_step_s`` where ``inference.runtime`` is
# ``vllm-v0`` and the steps are captured; an eager V0 loop (``--enforce-eager``) launches
# every kernel from Python and keeps the eager loop's ``serving_step_s``.
VLLM_V0_STEP_S = 4e-3
# Host time a llama.cpp decode step pays per layer when it launches the step's kernels one by
# one instead of replaying them as a CUDA graph. ggml-org/llama.cpp#6766 (merged 2024-05-08)
# captures the batch-1 decode; proposing it, its author times llama-2-7b.Q4_K_M on an H100
# PCIe server at 143.35 tokens/s launched and 163.83 replayed (#6763, agray3, 2024-04-19,
# ``--n-gpu-layers 100 -n 128``): 0.872 ms a token over the model's 32 layers, 27.3 us a layer.
# A desktop saves half that (the PR's review: an RTX 4090 at 149.28 and 159.67 tokens/s with
# Llama 8B Q4_0, 13.6 us a layer); the launches are the host's, and the catalog's instances and
# the development set's RunPod hosts are servers. With the model split over GPUs the
# scheduler's pipeline-parallel input copies change the graph every token, and "CUDA graphs
# could not be used" until #13814 (slaren, 2025-05-27): builds between the two (``runtime:
# llama.cpp-2024``, which the development set's May 2024 llama.cpp rows, builds 2824-2843,
# state) pay it on more than one GPU. Builds before #6766 launched every kernel on one GPU too;
# no runtime names them.
LLAMA_CPP_UNCAPTURED_LAYER_S = (1.0 / 143.35 - 1.0 / 163.83) / 32.0
UNCAPTURED_SPLIT_RUNTIMES = frozenset({"llama.cpp-2024"})
# Architectures those builds capture no graph on at all, one GPU or several: "disabling CUDA
# graphs due to GPU architecture" below compute capability 8.0 (ggml-cuda.cu as #6766 left it;
# #25749 later enabled them on Volta and Turing).
GRAPHLESS_ARCHITECTURES = frozenset({"pascal", "volta", "turing"})


def serving_execution(w: Workload) -> str:
    """How the decode loop runs: as the workload says, else ``compiled`` for continuous
    batching (vLLM, SGLang and TGI capture decode steps as CUDA graphs; TGI since 2.0,
    huggingface/text-generation-inference#1703, 2024-04, after #1428 had made them an opt-in,
    so its 1.x releases launch every kernel: ``eager``) and ``eager`` for static batches (a
    Python generate loop). An engine's build (``engine``: TensorRT-LLM,
    FasterTransformer) is ``compiled`` too: its step is one C++ enqueue of fused kernels.

    TensorRT-LLM's C++ runtime does not capture that step by default
    (``ExtendedRuntimePerfKnobConfig``: ``cudaGraphMode`` false unless asked for), and
    NVIDIA's MLPerf Inference v5.1 harness refuses graphs on that backend ("CUDA Graphs are
    not supported in TRT/C++ backend yet", closed/NVIDIA/code/llmlib/config.py at
    mlcommons/inference_results_v5.1@965182b0, mirrored by ntuhpc). Its kernels are still
    charged as replayed ones: a C++ loop enqueues a 70B step's ~640 kernels in a few ms, far
    ahead of the 20-50 ms the device takes, so the device runs them back to back. Charging
    each the eager ``kernel_gpu_s`` instead (tried in stop 59) fixed MLPerf's Interactive
    rows (held out 1.35 -> 0.89x of measured) but put its Server and Offline rows at
    0.78-0.81x: leave-one-source-out for MLPerf 13.9 -> 15.6 % with a baseline."""
    if "execution" in w.model.model_fields_set:
        return "compiled" if w.model.execution == "engine" else w.model.execution
    spec = w.inference
    return "compiled" if spec is None or spec.engine == "continuous" else "eager"


def _touched_experts(s: Shape, tokens: FloatArray) -> FloatArray:
    """Expected experts (of E, k per token) a batch of ``tokens`` routes to, per layer."""
    e, k = float(s.experts), float(s.experts_per_token)
    return np.asarray(e * (1.0 - (1.0 - k / e) ** np.maximum(tokens, 1.0)))


@dataclass(frozen=True)
class Rates:
    """Per-cell rates a serving step runs at."""

    flops: FloatArray  # matrix FLOP/s at the weight format's compute precision
    bandwidth: FloatArray
    link: FloatArray
    allreduce_step_s: FloatArray  # one small all-reduce ring step over the copy's links
    supported: BoolArray
    # device time of one kernel of a replayed decode graph (``kernel_costs.replayed_kernel_s``)
    kernel_s: FloatArray | float = CUDA_GRAPH_KERNEL_S


def decode_step(
    w: Workload,
    s: Shape,
    r: Rates,
    tp: FloatArray,
    b: FloatArray,
    context: float,
    wb: float,
    kvb: float,
    cal: Calibration,
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """(seconds of one decode step of ``b`` sequences on a ``tp``-way copy, memory-bound, the
    seconds of it the engine's host loop takes while the GPU waits)."""
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
    # Each kernel class on its own roofline: the matrices against their weight reads, the
    # attention against its KV reads.
    execution = serving_execution(w)
    weights = weights + exllama_rebuild_bytes(w, execution, b)
    gemm_s, weights_s = gemm_flops / r.flops, weights / r.bandwidth
    attention_s = attn_flops / (r.flops * cal.attention_gemm_efficiency)
    kv_s = kv_read / r.bandwidth
    gemm = np.maximum(gemm_s, weights_s) / tp
    attention = np.maximum(attention_s, kv_s) / tp
    comm = _tp_allreduces_s(r, tp, layers, b, s.hidden)
    per_kernel = (
        cal.kernel_gpu_s if execution == "eager" else np.minimum(cal.kernel_gpu_s, r.kernel_s)
    )
    kernels = decode_kernels_per_layer(w, wb) * layers * per_kernel
    # Memory-bound when streaming the weights and the KV cache takes longer than the matrix
    # and attention arithmetic (a long context or an encoder-decoder's cross-attention makes
    # the KV reads the larger part).
    memory_bound = weights_s + kv_s >= gemm_s + attention_s
    # The engine's own host time per iteration (scheduling, sampling, detokenising): small
    # when the decode step is a captured CUDA graph or a C++ runtime's enqueue (``execution:
    # compiled``: vLLM, SGLang, gpt-fast; TensorRT-LLM), tens of ms for a Python loop
    # launching every kernel (``eager``: Hugging Face generate, early TGI). ``serving_step_s``:
    # set, not fitted; with the part that grows with the batch (``_sequence_host_s``), fitted.
    host = engine_step_s(w, execution, cal) + triton_launches_s(w, execution, layers)
    triton = triton_loops_s(w, execution, layers, s.hidden, cycle_s(r.kernel_s))
    sequences = _sequence_host_s(w, execution, b, cal)
    step = gemm + attention + comm + kernels + triton + host + sequences
    return np.asarray(step), np.asarray(memory_bound), np.asarray(host + sequences)


def decode_kernels_per_layer(w: Workload, weight_bytes: float) -> float:
    """Kernels one decode step launches per layer: a fused engine's
    ``SERVING_KERNELS_PER_LAYER``, llama.cpp's unfused graph's
    ``LLAMA_CPP_KERNELS_PER_LAYER`` and, with quantised weights (``weight_bytes`` a weight
    below 16 bits), its input quantisations."""
    spec = w.inference
    if spec is None or kernels_of(spec.runtime) != "llama.cpp":
        return SERVING_KERNELS_PER_LAYER
    if weight_bytes < SIXTEEN_BIT_WEIGHT_BYTES:
        return LLAMA_CPP_KERNELS_PER_LAYER + LLAMA_CPP_QUANTISE_KERNELS_PER_LAYER
    return LLAMA_CPP_KERNELS_PER_LAYER


def _launches_split(w: Workload) -> bool:
    """Whether ``w`` runs a llama.cpp build that replays CUDA graphs on one GPU only
    (``UNCAPTURED_SPLIT_RUNTIMES``)."""
    spec = w.inference
    return spec is not None and spec.runtime in UNCAPTURED_SPLIT_RUNTIMES


def uncaptured_decode(
    w: Workload, stages: npt.ArrayLike, graphless: npt.ArrayLike = False
) -> BoolArray:
    """Whether ``w``'s decode launches its kernels one by one: a llama.cpp build that replays
    CUDA graphs on one GPU only (``UNCAPTURED_SPLIT_RUNTIMES``) over more than one of
    ``stages``, or on a part whose architecture those builds never capture on
    (``graphless``: ``GRAPHLESS_ARCHITECTURES``)."""
    split = np.asarray(stages, dtype=np.float64) > 1.0
    return np.asarray((split | np.asarray(graphless)) & _launches_split(w))


def uncaptured_decode_s(
    w: Workload, s: Shape, stages: npt.ArrayLike, accs: Sequence[Accelerator], acc: npt.ArrayLike
) -> FloatArray:
    """Seconds a decode step of ``w`` over ``stages`` GPUs of the parts ``acc`` indexes in
    ``accs`` adds for launching its kernels from the host (``LLAMA_CPP_UNCAPTURED_LAYER_S`` a
    layer) where it replays no CUDA graph (``uncaptured_decode``); 0 for every other runtime,
    which skips the parts' architectures."""
    if not _launches_split(w):
        return np.zeros(())
    older = np.array([a.architecture in GRAPHLESS_ARCHITECTURES for a in accs], dtype=bool)
    graphless = older[np.asarray(acc, dtype=np.int64)]
    per_step = decode_layers(s) * LLAMA_CPP_UNCAPTURED_LAYER_S
    return np.asarray(np.where(uncaptured_decode(w, stages, graphless), per_step, 0.0))


def engine_step_s(w: Workload, execution: str, cal: Calibration) -> float:
    """The serving engine's own host time per decode iteration, apart from what grows with
    the batch: vLLM's V0 engine's (``VLLM_V0_STEP_S``) where ``inference.runtime`` names it
    and its steps are captured, else the calibration's for the decode loop's execution
    (``serving_step_s``)."""
    spec = w.inference
    if spec is not None and spec.runtime == "vllm-v0" and execution != "eager":
        return VLLM_V0_STEP_S
    return float(cal.serving_step_s[execution])


def _sequence_host_s(w: Workload, execution: str, b: FloatArray, cal: Calibration) -> FloatArray:
    """Host seconds a serving engine spends per iteration on each of the ``b`` sequences it
    decodes (``Calibration.serving_sequence_s`` each, fitted): its scheduler, sampler and
    output processing walk the batch sequence by sequence between captured steps, so the
    iteration grows with the batch. A contributor's profile of vLLM put the time between two
    steps (sampling, input preparation, output processing, scheduling) at 20 ms for a batch
    of 200 (vllm-project/vllm#6801, 2024-08), 100 us a sequence, the cost vLLM's multi-step
    scheduling and asynchronous output processing (#6854, #6913) then hid; in its V1 engine
    one of those loops alone, ``update_from_output``, takes 0.287 ms at 256 (a 2026
    micro-benchmark in #46112), 1.1 us a sequence. A plain generate loop (``eager`` static
    batches: Hugging Face generate) handles the batch as tensors and is not charged."""
    charged = charges_sequences(w, execution)
    return np.asarray(b * cal.serving_sequence_s if charged else np.zeros_like(b))


def charges_sequences(w: Workload, execution: str) -> bool:
    """Whether ``w``'s decode loop pays host time per sequence (``_sequence_host_s``): every
    serving engine, not a plain generate loop (``eager`` static batches)."""
    spec = w.inference
    return not (execution == "eager" and (spec is None or spec.engine != "continuous"))


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
    r: Rates, tp: FloatArray, layers: float, tokens: npt.ArrayLike, hidden: float
) -> FloatArray:
    """Seconds of a tensor-parallel forward's all-reduces over ``tokens`` tokens: two per
    layer (Megatron-LM, Shoeybi et al. 2019, section 3), each a ring of the tokens' 16-bit
    activations, ``2 (tp-1)/tp`` of the message over the link (Patarasuk and Yuan 2009) after
    the ring's latency (``step_time.allreduce_latency_s``); none without tensor parallelism.
    A decode step sends one token per sequence; a prefill sends the whole prompt, so over PCIe
    its all-reduces can take as long as its arithmetic."""
    latency = allreduce_latency_s(tp, r.allreduce_step_s)
    message = np.asarray(tokens, dtype=np.float64) * hidden * TP_ACTIVATION_BYTES
    comm = ALLREDUCES_PER_LAYER * layers * (latency + 2.0 * (tp - 1) / tp * message / r.link)
    return np.asarray(np.where(tp > 1, comm, 0.0))


def stage_handoff_s(r: Rates, tokens: npt.ArrayLike, hidden: float) -> FloatArray:
    """Seconds one pipeline stage's hand-off to the next stage on the same instance adds to a
    token's pass: the tokens' 16-bit activations cross the GPUs' link after its per-message
    latency (one ring step's, ``Rates.allreduce_step_s``), and the next stage's kernels are
    launched only once they have landed, so its first launch (``EAGER_LAUNCH_S``) is not
    hidden behind the previous stage's work. llama.cpp's scheduler runs the stages (its graph
    splits) this way: without a peer-to-peer copy it synchronises on the previous stage,
    copies the split's inputs and only then launches the split (ggml-org/llama.cpp,
    ggml/src/ggml-backend.cpp, ``ggml_backend_sched_compute_splits``)."""
    message = np.asarray(tokens, dtype=np.float64) * hidden * TP_ACTIVATION_BYTES
    return np.asarray(r.allreduce_step_s + message / r.link + EAGER_LAUNCH_S)


def prefill(s: Shape, r: Rates, tp: FloatArray, prompt: float, cal: Calibration) -> FloatArray:
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
