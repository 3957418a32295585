"""The published development set as workloads and measurements the engine can be scored on.

Reads ``benchmarks/data/accuracy_rows.csv`` (built by ``benchmarks/data/normalise.py`` from
the three published files; every row cites its source) and describes each usable row the
way a user would, through the public workload schema: the model by its registry name, the
precision, batch, sequence or request shape, execution mode, the tensor-parallel degree
(training and serving), the activation checkpointing and sharding a training row states
and, for serving, the weight format and concurrency the source states.
A training row's batch is per data-parallel replica (torchtitan's "local" batch: one tensor-
parallel group of GPUs shares it). Each measurement is
converted to the unit the engine predicts: samples (or requests) per second for the whole
instance of ``gpus`` accelerators.

Where the source's harness fixes what a row's columns leave open, the row says so: inference
engines' builds of vision, speech and diffusion models run as ``execution: engine``
(``_execution``); MLPerf's SDXL runs 40 UNet evaluations per image
(``MLPERF_DENOISER_EVALUATIONS``); NeuSight's training rows time forward and backward with no
optimizer update (``NO_OPTIMIZER_SOURCES``); torchtitan's run FlashAttention-2
(``FLASH_ATTENTION_2_SOURCES``); MLPerf's LLM rows carry the round's latency
limits (``MLPERF_LATENCY_LIMITS``).

Rows are skipped, and counted by reason, when their model is not in the registry (and not
described below), their accelerator has no spec sheet, or their metric is a latency.
Model shapes the registry does not carry (from the first development set):
- GPT-3 XL / 2.7B: 24 layers d 2048 24 heads d_head 128 / 32 layers d 2560 32 heads,
  vocab 50257 (Brown et al. 2020, Table 2.1);
- Switch-Transformer XL with 4 experts: a T5-XL-shaped encoder-decoder, 24 + 24 layers,
  d 2048, d_ff 5120, 32 heads, vocab 32128 (Raffel et al. 2020; Fedus et al. 2022).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from recommender.catalog import Accelerator, Catalog, UnknownAcceleratorError
from recommender.catalog.schema import Precision
from recommender.models.arch import GivenArch
from recommender.models.registry import UnknownModelError, resolve_model
from recommender.recipe import KvFormat, ServingRuntime, WeightFormat
from recommender.scoring.calibrate import Observation
from recommender.scoring.cluster_network import achieved_network_bytes_per_s
from recommender.scoring.issue_rate import kernels_of
from recommender.scoring.shape import shape_of
from recommender.workload import Workload

__all__ = ["BENCH_ACCELERATORS", "ROWS", "Row", "above_peak", "accelerator_aliases", "load_rows"]

ROWS = Path(__file__).resolve().parent / "data" / "accuracy_rows.csv"
BENCH_ACCELERATORS = ROWS.parent / "bench_accelerators.yaml"
# A header line of bench_accelerators.yaml, "#   H200-141GB -> H200-SXM-141GB: why", names an
# alias (an id that leaves one detail of a catalog part open), not an entry.
ALIAS_LINE = re.compile(r"^#\s+(\S+) -> (\S+):", re.MULTILINE)

# Shapes of the models the registry lacks, as the source ran them. NeuSight's are its own
# configs (sitar-lab/NeuSight@6945927 scripts/asplos/data/DLmodel_configs/*.json): its
# "gpt3_xl" is a GPT-2 with n_embd 3072, 24 heads and 24 layers (2.7 B parameters), not the
# GPT-3 paper's 2,048-wide XL, which had been taken until stop 38 and predicted its rows 1.45x
# too fast; its "gpt3_27" is the paper's 2.7B (n_embd 2560, 32 heads, 32 layers).
EXTRA_ARCHS: dict[str, dict[str, Any]] = {
    "gpt-3-xl": {
        "layers": 24,
        "hidden_size": 3072,
        "heads": 24,
        "vocab_size": 50257,
        "bias": True,
        "dropout": True,
        "learned_positions": 2048,
    },
    "gpt-3-2.7b": {
        "layers": 32,
        "hidden_size": 2560,
        "heads": 32,
        "vocab_size": 50257,
        "bias": True,
        "dropout": True,
        "learned_positions": 2048,
    },
    "switch-transformer-xl-4e": {
        "type": "encoder-decoder",
        "layers": 24,
        "hidden_size": 2048,
        "heads": 32,
        "intermediate_size": 5120,
        "vocab_size": 32128,
        "experts": 4,
        "dropout": True,
    },
}
# The engine's classes of work, for the per-class tables.
CLASSES = {
    "training": "training",
    "inference": "inference",
    "llm-serving": "llm-serving",
    "llm-decode-bs1": "llm-decode",
}
# The formats and precisions a row may state are the ones the engine's schemas accept.
WEIGHT_FORMATS = frozenset(get_args(WeightFormat))
COMPUTE_PRECISIONS = frozenset(get_args(Precision))
KV_FORMATS = frozenset(get_args(KvFormat))
# Serving rows that state no request shape: the engine's defaults (ServingSpec).
DEFAULT_PROMPT, DEFAULT_OUTPUT = 512, 256
# Training rows that state no sequence length: 2048 tokens, or the model's context if shorter.
DEFAULT_TRAINING_TOKENS = 2048
# MLPerf Inference's latency limits per LLM benchmark and scenario, (TTFT ms, TPOT ms), from
# loadgen/mlperf.conf at mlcommons/inference@e05fda54b31c6859361f5d91660f1c11e6fa847d (July
# 2025, the v5.1 round's configuration: ``<benchmark>.Server.ttft_latency`` /
# ``tpot_latency``; Interactive is the ``-interactive`` benchmark's Server). A Server or
# Interactive result is the throughput that meets them, so the rows state them as targets.
MLPERF_LATENCY_LIMITS: dict[tuple[str, str], tuple[float, float]] = {
    ("llama-2-70b", "mlperf_server"): (2000.0, 200.0),
    ("llama-2-70b", "mlperf_interactive"): (450.0, 40.0),
    ("mixtral-8x7b", "mlperf_server"): (2000.0, 200.0),
    ("llama-3.1-405b", "mlperf_server"): (6000.0, 175.0),
    ("llama-3.1-405b", "mlperf_interactive"): (4500.0, 80.0),
    ("llama-3.1-8b", "mlperf_server"): (2000.0, 100.0),
    ("llama-3.1-8b", "mlperf_interactive"): (500.0, 30.0),
    ("deepseek-r1", "mlperf_server"): (2000.0, 80.0),
}
# The limits hold for the 99th percentile of queries that arrive at random: "Server/
# Interactive | LoadGen sends new queries to the SUT according to a Poisson distribution |
# 600 seconds | ... | 99%* | Maximum Poisson throughput parameter supported"
# (mlcommons/inference_policies@ac93e89, inference_rules.adoc, "Scenarios" table).
MLPERF_LATENCY_PERCENTILE = 99.0
# Denoiser evaluations per image MLPerf Inference's text-to-image benchmark runs: 20 steps
# with classifier-free guidance (two UNet evaluations per step), mlcommons/inference
# text_to_image/backend_pytorch.py (``steps=20``, ``guidance=8``) at b66003e1. The registry's
# ``denoising_steps`` is diffusers' default of 50 single evaluations.
MLPERF_DENOISER_EVALUATIONS = {"stable-diffusion-xl": 40}
MLPERF_INFERENCE = "mlperf-inference-v5.1"
# Training rows whose harness times the forward and backward passes only, with no optimizer
# update: NeuSight's ``measure_e2e`` records ``model(*inputs)`` and ``loss.backward()`` and
# reports their sum (sitar-lab/NeuSight neusight/Tracing/trace.py; no optimizer is built).
NO_OPTIMIZER_SOURCES = frozenset({"neusight"})
# Training rows whose harness runs FlashAttention-2 (``attention: flash``): torchtitan's
# attention asks SDPA for its flash backend outside sm100 (pytorch/torchtitan PR #1196,
# torchtitan/models/attention.py), and before that ran SDPA on PyTorch builds where cuDNN
# attention was opt-in (pytorch/pytorch#138522); torchao's float8 end-to-end figures are
# torchtitan runs.
FLASH_ATTENTION_2_SOURCES = frozenset({"torchtitan", "torchao"})
# Serving engines that allocate only what they need instead of a share of the device
# (``inference.memory_utilization: 1``): llama.cpp loads the weights and sizes its KV cache by
# the context it is given (``n_ctx`` in ``llama_context_params``, ggml-org/llama.cpp
# include/llama.h) and has no option reserving a fraction of GPU memory, unlike vLLM's
# ``gpu_memory_utilization`` (default 0.9, the engine's default). Keyed by the runtime whose
# kernels an engine runs (``issue_rate.kernels_of``: llama.cpp-2024 is llama.cpp).
WHOLE_DEVICE_ENGINES = frozenset({"llama.cpp"})
# Engines the scoring engine models as runtimes of their own (``inference.runtime``: llama.cpp's
# decode kernels, recommender/scoring/issue_rate.py; vLLM's V0 host loop,
# serving_step.VLLM_V0_STEP_S): rows name them as the recipe spells them.
RUNTIMES = frozenset(get_args(ServingRuntime))
# Inference-engine rows (MLPerf Offline / Server) that state no batch: engines batch deeply;
# 64 is taken (an assumption, not a figure from the source).
DEFAULT_ENGINE_BATCH = 64


# The network between the nodes of a multi-node row, which the sources do not rate:
# KempnerForge "InfiniBand inter-node" (4 H200 per node); torchtitan's rows name no fabric at
# all. Both are taken as one 400 Gb/s RDMA NIC per GPU, the HGX H100 / H200 reference design
# (ConnectX-7 NDR per GPU), at the RDMA share of multinode.FABRIC_EFFICIENCY: an assumption,
# not a figure from the source. Multi-node serving rows (MLPerf over Ethernet) run a replica
# per node and are predicted as one instance.
NODE_NIC_GBPS_PER_GPU = 400.0
NODE_FABRIC = {"infiniband": "infiniband", "ethernet": "ethernet"}
DEFAULT_NODE_FABRIC = "gpudirect-rdma"


def node_network_bytes_per_s(r: dict[str, str], gpus_per_node: float) -> float:
    """Achieved bytes/s of one node's network for a multi-node row (see above)."""
    fabric = NODE_FABRIC.get(r["interconnect"], DEFAULT_NODE_FABRIC)
    return achieved_network_bytes_per_s(NODE_NIC_GBPS_PER_GPU * gpus_per_node, fabric)


@dataclass(frozen=True)
class Row:
    row_id: str
    source: str  # source family (for leave-one-source-out)
    cls: str  # training | inference | llm-serving | llm-decode
    key: str  # rows with equal keys ran the same workload: compare their hardware
    observation: Observation
    absolute: bool = True  # False: a rate in the source's own unit, scored against a baseline


def _int(text: str) -> int | None:
    return int(float(text)) if text.strip() else None


def _model(key: str) -> dict[str, Any] | None:
    if key in EXTRA_ARCHS:
        return {"architecture": EXTRA_ARCHS[key]}
    try:
        resolve_model(key)
    except UnknownModelError:
        return None
    return {"name": key}


def _context(key: str) -> int:
    try:
        arch = resolve_model(key).architecture
    except UnknownModelError:
        return DEFAULT_TRAINING_TOKENS
    limit = getattr(arch, "max_sequence_length", None) or DEFAULT_TRAINING_TOKENS
    return int(min(DEFAULT_TRAINING_TOKENS, limit))


def _precision(r: dict[str, str]) -> str:
    p = r["precision"]
    if p in COMPUTE_PRECISIONS:
        return p
    return "bf16" if p in ("int4", "fp4") else "fp16"


def _execution(r: dict[str, str]) -> str:
    """eager, compiled or engine: serving engines that capture the decode step as a CUDA
    graph (TensorRT-LLM, vLLM, SGLang, LMDeploy, llama.cpp's graphs, gpt-fast) are
    ``compiled``; TGI 1.0.3 (2023, before its CUDA-graph support) and eager PyTorch loops are
    ``eager``; vision, encoder, speech and diffusion models that the source ran through an
    inference engine (MLPerf's TensorRT and vendor builds, FasterTransformer) are ``engine``."""
    if r["execution"] == "eager" or r["engine"] == "tgi":
        return "eager"
    if r["execution"] == "engine" and CLASSES.get(r["workload"]) == "inference":
        return "engine"
    return "compiled"


def _spec(r: dict[str, str], model: dict[str, Any]) -> dict[str, Any] | None:
    cls = CLASSES.get(r["workload"])
    batch, seq = _int(r["batch"]), _int(r["seq_len"])
    execution = _execution(r)
    pixels = {"image_size": int(r["image_size"])} if r["image_size"] else {}
    spec: dict[str, Any] = {
        "name": r["row_id"],
        "model": {**_with_source_steps(r, model), **pixels, "execution": execution},
        "precision": _precision(r),
        "data": {"samples": 1e6, "source": "memory"},
    }
    if cls == "training":
        spec["kind"] = "training"
        if r["source_id"] in NO_OPTIMIZER_SOURCES:
            spec["model"]["optimizer_step"] = False
        spec["model"]["sequence_length"] = seq or _context(r["model_key"])
        tp, cp = _int(r["tensor_parallel"]), _int(r["context_parallel"])
        recipe = {k: r[k] for k in ("checkpointing", "sharding") if r[k]}
        if r["source_id"] in FLASH_ATTENTION_2_SOURCES:
            recipe["attention"] = "flash"
        spec["training"] = {
            **({"tensor_parallel": tp} if tp else {}),
            **({"context_parallel": cp} if cp else {}),
            **recipe,
        }
        replicas = (_int(r["gpus"]) or 1) // ((tp or 1) * (cp or 1))
        global_batch = _int(r["global_batch"])
        spec["batch_size"] = batch or (max(1, (global_batch or 256) // max(replicas, 1)))
    elif cls == "inference" and not r["output_tokens"]:
        spec["kind"] = "inference"
        spec["model"]["sequence_length"] = seq or 128
        spec["batch_size"] = batch or (DEFAULT_ENGINE_BATCH if r["execution"] == "engine" else 1)
    elif cls in ("inference", "llm-serving", "llm-decode"):  # a generation loop
        spec["kind"] = "inference"
        fmt = r["weight_format"] if r["weight_format"] in WEIGHT_FORMATS else None
        tp = _int(r["tensor_parallel"])
        static = r["batching"] == "static"
        stages = _layer_split_stages(r)
        whole_device = kernels_of(r["engine"]) in WHOLE_DEVICE_ENGINES
        spec["inference"] = {
            "prompt_tokens": _int(r["prompt_tokens"]) or DEFAULT_PROMPT,
            "output_tokens": _int(r["output_tokens"]) or DEFAULT_OUTPUT,
            **({"weights": fmt} if fmt else {}),
            **({"weight_bits": float(r["weight_bits"])} if r["weight_bits"] else {}),
            **({"kv_cache": r["kv_precision"]} if r["kv_precision"] in KV_FORMATS else {}),
            **({"tensor_parallel": tp} if tp else {}),
            **({"pipeline_parallel": stages} if stages > 1 else {}),
            # the engine's own cap on sequences per copy and share of memory, where its
            # configuration states them (MLPerf's vLLM submissions: normalise_rules.py)
            **({"max_batch": _int(r["max_batch"])} if r["max_batch"] else {}),
            **({"memory_utilization": float(share)} if (share := r["memory_utilization"]) else {}),
            # a static batch is the engine's batch per copy (its cap), not a load test's
            # clients; it decodes up to the generation cap
            **({"engine": "static", "max_batch": batch} if static and batch else {}),
            **({"max_output_tokens": _int(r["max_output_tokens"])} if static else {}),
            **({"memory_utilization": 1.0} if whole_device else {}),
            **({"runtime": r["engine"]} if r["engine"] in RUNTIMES else {}),
        }
        limits = MLPERF_LATENCY_LIMITS.get((r["model_key"], r["measure"]))
        if limits:
            spec["targets"] = {
                "ttft_ms": limits[0],
                "tpot_ms": limits[1],
                "latency_percentile": MLPERF_LATENCY_PERCENTILE,
            }
        if cls == "llm-decode":
            spec["batch_size"] = 1
        elif batch and not static:
            spec["batch_size"] = batch
    else:
        return None
    return spec


def _layer_split_stages(r: dict[str, str]) -> int:
    """Pipeline stages of a row whose model is split by layers over its GPUs: llama.cpp on
    several GPUs with no tensor parallelism stated runs its default ``--split-mode layer``
    (ggml-org/llama.cpp docs/multi-gpu.md: each GPU holds a contiguous slice of the layers and
    their KV cache), one stage per GPU."""
    gpus = _int(r["gpus"]) or 1
    if kernels_of(r["engine"]) == "llama.cpp" and not r["tensor_parallel"] and gpus > 1:
        return gpus
    return 1


def _measured(r: dict[str, str], w: Workload) -> tuple[float, bool] | None:
    """The row's value in the engine's unit, samples or requests per s per instance, and
    whether it is that unit. Generated tokens convert to requests by the row's output tokens
    (MLPerf's Whisper: the dataset's tokens per transcript, ``MLPERF_LLM_REQUESTS`` in
    normalise_rules.py); a per-sample workload's generated tokens of no stated length are a
    fixed multiple of its samples/s across one dataset, so they serve as a baseline for one
    another, but not as an absolute rate."""
    value, gpus = float(r["value"]), _int(r["gpus"]) or 1
    per_instance = value * (gpus if r["scope"] == "per_gpu" else 1)
    metric = r["metric"]
    if metric == "samples_per_s" or metric == "requests_per_s":
        return per_instance, True
    if metric in ("tokens_per_s", "output_tokens_per_s"):
        if w.inference is not None:
            return per_instance / w.inference.output_tokens, True
        if metric == "output_tokens_per_s":  # generated tokens of a per-sample workload
            return per_instance, False
        return per_instance / (w.model.tokens_per_sample or 1), True
    return None


def above_peak(w: Workload, acc: Accelerator, gpus: int, rate: float) -> float | None:
    """The share of the part's datasheet peak at the row's stated precision that its measured
    rate needs, counting only the model's own FLOPs (the engine's count: its matrix products
    and attention, times the training passes), when that share exceeds 1, else None. Such a
    row cannot have run as labelled (DeepLearningExamples' BERT-Large "FP32" pre-training on
    V100 needs 20.6 TFLOP/s per GPU against the part's 15.7: not FP32 arithmetic). LLM serving
    rows are not checked: their request shapes are partly the engine's defaults."""
    peak = acc.peak_tflops.get(w.precision)
    if w.is_llm_serving or peak is None:
        return None
    s = shape_of(w)
    flops = (s.matmul_flops + s.attention_flops) * (
        w.training_flops_factor if w.training_job else 1.0
    )
    share = flops * rate / gpus / (peak * 1e12)
    return share if share > 1.0 else None


def _key(r: dict[str, str]) -> str:
    fields = (
        "group",
        "model_key",
        "workload",
        "precision",
        "weight_format",
        "batch",
        "seq_len",
        "image_size",
        "prompt_tokens",
        "output_tokens",
        "measure",
        "execution",
        "engine",
        "checkpointing",
        "sharding",
    )
    # A static batch is the engine's setting per system (MLPerf's Whisper: 320 on a B200, 32 on
    # an L4), not the workload's: rows that differ only in it ran the same benchmark.
    tuned = {"batch"} if r["batching"] == "static" else set()
    return "|".join("" if f in tuned else r[f] for f in fields)


def _with_source_steps(r: dict[str, str], model: dict[str, Any]) -> dict[str, Any]:
    """MLPerf's diffusion rows as the benchmark runs them (``MLPERF_DENOISER_EVALUATIONS``):
    the registry's per-evaluation FLOPs times the evaluations per image."""
    evaluations = MLPERF_DENOISER_EVALUATIONS.get(r["model_key"])
    if evaluations is None or r["source_id"] != MLPERF_INFERENCE:
        return model
    arch = resolve_model(r["model_key"]).architecture
    assert isinstance(arch, GivenArch)
    return {**model, "flops_per_sample": arch.forward_flops * evaluations}


def accelerator_aliases(path: Path = BENCH_ACCELERATORS) -> dict[str, str]:
    """Row accelerator id -> the catalog part it stands for, as the spec-sheet file's header
    names them."""
    return dict(ALIAS_LINE.findall(path.read_text(encoding="utf-8"))) if path.exists() else {}


def load_rows(catalog: Catalog, path: Path = ROWS) -> tuple[list[Row], Counter[str]]:
    """Usable rows the engine can predict, and why the others were skipped."""
    rows: list[Row] = []
    skipped: Counter[str] = Counter()
    cache: dict[str, Workload] = {}
    aliases = accelerator_aliases()
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            if r["usable"] != "yes":
                skipped["not usable (normalise.py)"] += 1
                continue
            model = _model(r["model_key"])
            if model is None:
                skipped["model not in the registry"] += 1
                continue
            try:
                part = catalog.accelerator(aliases.get(r["accelerator"], r["accelerator"]))
            except UnknownAcceleratorError:
                skipped["accelerator without a spec sheet"] += 1
                continue
            spec = _spec(r, model)
            if spec is None:
                skipped[f"workload {r['workload']}"] += 1
                continue
            spec_key = repr(sorted((k, repr(v)) for k, v in spec.items() if k != "name"))
            if spec_key not in cache:
                cache[spec_key] = Workload.model_validate(spec)
            w = cache[spec_key]
            measured = _measured(r, w)
            if measured is None or measured[0] <= 0:
                skipped[f"metric {r['metric']}"] += 1
                continue
            gpus, nodes = _int(r["gpus"]) or 1, _int(r["nodes"]) or 1
            if measured[1] and above_peak(w, part, gpus, measured[0]):
                skipped["needs more FLOP/s than its GPUs' peak at the stated precision"] += 1
                continue
            network = node_network_bytes_per_s(r, gpus / nodes) if nodes > 1 else 0.0
            key = _key(r)
            obs = Observation(w, part.id, gpus, measured[0], key, nodes, network)
            cls = CLASSES[r["workload"]]
            rows.append(Row(r["row_id"], r["source_id"], cls, key, obs, measured[1]))
    return rows, skipped
