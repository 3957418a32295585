"""Explanations and advice: why each pick won, what limits it, what to change.

The advice covers the cases that dominate real bills: transfer-bound workloads
on bigger GPUs (the fix is the input pipeline, not the hardware), compute-bound workloads on
the wrong accelerator (mixed precision, fusion, newer tensor cores), and models that do not
fit (the memory remedies).
"""

from __future__ import annotations

from recommender.scoring.issue_rate import kernels_of
from recommender.scoring.predict import BOTTLENECKS
from recommender.scoring.serving_step import uncaptured_decode
from recommender.workload import Workload

__all__ = [
    "BOTTLENECK_ADVICE",
    "DATA_ADVICE",
    "bottleneck_advice",
    "limit_text",
    "recipe_caveats",
]

TRANSFER_BOUND = ("input-pipeline", "host-transfer")

HBM_ADVICE = "HBM GPUs (A100/H100/H200) have 3-10x the bandwidth of GDDR cards."
# A serving answer whose GPU is busy less than this share of each cycle (the rest is the
# engine's host loop between decode steps) says what would shorten the loop.
HOST_LOOP_ADVICE = 0.8
# What a memory-bound decode gains from HBM on a runtime whose kernels, not the memory, set
# its rate (``inference.runtime``; issue_rate.py has the model and its evidence).
RUNTIME_HBM_ADVICE = {
    "llama.cpp": (
        "llama.cpp's decode kernels stream about as many bytes per multiprocessor cycle on "
        "every NVIDIA part, so on HBM GPUs (A100/H100) they reach about half the memory's "
        "bandwidth: a GDDR card (L40S, RTX PRO 6000) decodes about as fast for less, and an "
        "engine tuned for HBM (vLLM, SGLang, TensorRT-LLM) takes an A100 / H100 to its "
        "memory's rate."
    ),
}

# A llama.cpp build that launches a split model's decode kernels one by one
# (``serving_step.uncaptured_decode_s``).
UNCAPTURED_SPLIT_ADVICE = (
    "This llama.cpp build launches every decode kernel from the host when the model is split "
    "over GPUs (CUDA graphs only on one GPU until ggml-org/llama.cpp#13814, May 2025): a newer "
    "build, or one GPU that holds the model, replays each token as one graph."
)

BOTTLENECK_ADVICE: dict[str, list[str]] = {
    "input-pipeline": [
        "Transfer-bound: the GPU waits for data, so more or faster GPUs will not help; "
        "fix the input pipeline first.",
        "Add DataLoader workers (num_workers ~ vCPUs minus one per GPU) and prefetching "
        "(prefetch_factor, persistent_workers=True).",
        "Cache the dataset on local NVMe or in RAM after the first epoch instead of re-reading "
        "network storage.",
        "Store samples in sequential shards (WebDataset, Parquet, TFRecord) rather than many "
        "small files.",
    ],
    "host-transfer": [
        "Transfer-bound on the host-to-device copy: more GPUs will not help.",
        "Use pinned memory (pin_memory=True) with non_blocking copies, overlapped with compute.",
        "Send compact tensors (uint8 images, token ids) and convert/normalise on the GPU.",
    ],
    "compute": [
        "Compute-bound: the accelerator is the limit, so faster tensor cores or more GPUs "
        "scale it.",
    ],
    "memory-bandwidth": [
        "Memory-bandwidth-bound: larger batches raise arithmetic intensity; fused kernels "
        "(torch.compile, FlashAttention) cut memory passes.",
        HBM_ADVICE,
    ],
    "interconnect": [
        "Interconnect-bound: gradient all-reduce dominates; prefer NVLink instances, larger "
        "per-GPU batches or gradient accumulation (fewer synchronisations).",
    ],
}


# Input-pipeline advice that depends on what the samples are (the model family says it).
DATA_ADVICE: dict[str, list[str]] = {
    "cnn": [
        "Pre-resize images offline, and move JPEG decode and augmentation to the GPU "
        "(NVIDIA DALI, torchvision.io.decode_jpeg on device) to free the CPUs.",
    ],
    "recsys": [
        "Read tabular features column-wise in large batches (Parquet / Arrow) and run the "
        "feature transforms on the GPU (NVIDIA Merlin NVTabular) instead of per-sample Python.",
    ],
    "transformer": [
        "Tokenise once, offline, and store token ids (uint16/int32 arrays) instead of text.",
    ],
}


def bottleneck_advice(w: Workload, bottleneck: str, utilization: float) -> list[str]:
    """Advice for the workload given the bottleneck of its best placement (measured or
    predicted); input-pipeline advice follows the workload's data (images, tabular, text)."""
    out = list(BOTTLENECK_ADVICE[bottleneck])
    if bottleneck == "input-pipeline":
        out += DATA_ADVICE.get(w.model.resolved_family, [])
    if bottleneck in TRANSFER_BOUND:
        out[0] += f" (predicted GPU busy ~{utilization:.0%} of each step)"
    if bottleneck == "compute":
        if w.precision in ("fp32", "tf32"):
            out.append(
                "Use mixed precision (bf16 autocast): tensor cores run 2-16x the fp32 "
                "rate and activations take half the memory."
            )
        if w.model.execution == "eager":
            out.append(
                "Fuse kernels with torch.compile (or TensorRT for inference) to cut "
                "launch overhead and memory passes."
            )
        if w.kind == "inference" and w.precision in ("bf16", "fp16"):
            out.append(
                "Quantise to fp8 or int8 where accuracy allows: twice the tensor "
                "throughput on Hopper, Ada and newer."
            )
    runtime = w.inference.runtime if w.inference is not None else None
    if bottleneck == "memory-bandwidth" and kernels_of(runtime) in RUNTIME_HBM_ADVICE:
        out[out.index(HBM_ADVICE)] = RUNTIME_HBM_ADVICE[kernels_of(runtime)]
    if w.inference is not None and uncaptured_decode(w, w.inference.pipeline_parallel):
        out.append(UNCAPTURED_SPLIT_ADVICE)
    if bottleneck == "memory-bandwidth" and w.model.execution == "eager":
        out.append("Run compiled (torch.compile) to fuse element-wise kernels.")
    if w.is_llm_serving and bottleneck not in TRANSFER_BOUND and utilization < HOST_LOOP_ADVICE:
        out.append(_host_loop_advice(w, utilization))
    return out


def _host_loop_advice(w: Workload, utilization: float) -> str:
    """What to do when the serving engine's host loop leaves the GPU idle for a large share
    of each cycle (``serving.Serving.host_s``): a Python loop launching every kernel costs
    tens of ms a step, a captured step about one, and what grows with the batch is the
    engine's per-sequence scheduling, sampling and output handling (``serving_step``)."""
    idle = f"The serving engine's host loop leaves the GPU idle ~{1.0 - utilization:.0%}"
    idle += " of the time"
    if w.model.execution == "eager":
        return (
            f"{idle}: an engine that captures its decode step as a CUDA graph (vLLM, SGLang, "
            "TensorRT-LLM; `execution: compiled`) spends about 1 ms a step instead of tens."
        )
    return (
        f"{idle}: an engine that schedules and processes outputs while the GPU runs (vLLM's V1 "
        "engine, SGLang's overlap scheduler) hides it; at a few sequences a copy, more of them "
        "share each step's fixed part."
    )


def limit_text(bottleneck_index: int, utilization: float, gpus: int) -> str:
    name = BOTTLENECKS[bottleneck_index]
    if name in TRANSFER_BOUND:
        what = "the input pipeline" if name == "input-pipeline" else "the host-to-device copy"
        return (
            f"transfer-bound: {what} sets the step; the GPU{'s are' if gpus > 1 else ' is'} "
            f"busy {utilization:.0%} of the time"
        )
    labels = {
        "compute": "compute-bound",
        "memory-bandwidth": "memory-bandwidth-bound",
        "interconnect": "interconnect-bound (gradient all-reduce)",
    }
    return f"{labels[name]}: GPU busy {utilization:.0%} of each step"


# int8 activations in a compiled PyTorch model (torchao's int8 dynamic quantisation) at decode
# batch sizes: the source's own benchmark (pytorch/ao@81a28138, torchao/quantization/README.md,
# "Benchmarks": Llama-2-7B at batch 1 on an A100, int8dq 9.61 tokens/s at 63.67 GB/s achieved,
# bf16 107.38, int8wo 170.83) and its note that int8 dynamic quantisation "works best on compute
# bound models". The engine has no model of that kernel path (its int8 roofline is 10-18x the
# measured rate), so it says so instead of hiding it.
INT8_DYNAMIC_DECODE_CAVEAT = (
    "int8 activations in a compiled PyTorch model (torchao's int8 dynamic quantisation) run a "
    "slow kernel path at small decode batches: torchao's own benchmark has Llama-2-7B at batch "
    "1 on an A100 at 9.6 tokens/s (64 GB/s of its 2 TB/s), against 107 in bf16 and 171 with "
    "int8 weight-only. This prediction assumes the int8 roofline; for decode, int8 weight-only "
    "(precision: bf16, inference.weights: int8) is the recipe that delivers it."
)


def recipe_caveats(w: Workload) -> list[str]:
    """What the prediction knows it does not model for the recipe ``w`` states."""
    weights = w.inference.weights if w.inference is not None else None
    int8_dynamic = w.precision == "int8" and weights in (None, "int8")
    if w.is_llm_serving and int8_dynamic and w.model.execution == "compiled":
        return [INT8_DYNAMIC_DECODE_CAVEAT]
    return []
