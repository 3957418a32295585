"""Rebuild accuracy_rows.csv: one normalised table over the three published-throughput files.

Reads published_throughput_dev.csv, published_throughput_dev2.csv and
published_throughput_extra.csv (this folder) and writes accuracy_rows.csv, one row per source
row, in file order, so the output is deterministic. The lookup tables live in
normalise_rules.py; the rules that need a row's context are the functions below, each with
its reason beside it.

    python benchmarks/data/normalise.py            # rewrite accuracy_rows.csv
    python benchmarks/data/normalise.py --summary  # print counts (README.md quotes them)
    python benchmarks/data/normalise.py --check    # exit 1 if accuracy_rows.csv is stale
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import normalise_rules as rules

__all__ = ["COLUMNS", "INPUTS", "OUTPUT", "build_rows", "render", "summary"]

HERE = Path(__file__).resolve().parent
INPUTS = (
    ("dev", "published_throughput_dev.csv"),
    ("dev2", "published_throughput_dev2.csv"),
    ("extra", "published_throughput_extra.csv"),
)
OUTPUT = HERE / "accuracy_rows.csv"
COLUMNS = [
    "row_id",
    "file",
    "source_id",
    "group",
    "model_key",
    "workload",
    "execution",
    "engine",
    "precision",
    "weight_format",
    "weight_bits",
    "kv_precision",
    "batch",
    "global_batch",
    "seq_len",
    "image_size",
    "prompt_tokens",
    "output_tokens",
    "max_output_tokens",
    "batching",
    "max_batch",
    "memory_utilization",
    "accelerator",
    "gpus",
    "nodes",
    "tensor_parallel",
    "pipeline_parallel",
    "context_parallel",
    "checkpointing",
    "sharding",
    "interconnect",
    "metric",
    "measure",
    "value",
    "scope",
    "usable",
    "why_not",
    "source",
]

MS_PER_S = 1000.0
MINUTES_PER_HOUR = 60.0
MINUTES_PER_DAY = 1440.0
LLM_MODELS = re.compile(r"^(llama|mixtral|mistral|deepseek|opt-|gpt-3-175b)")
SERVING_METRICS = frozenset(
    {
        "llm_offline_throughput",
        "llm_concurrency_throughput",
        "llm_batch_latency",
        "llm_ttft",
        "llm_tpot",
        "llm_ttft_mean",
        "llm_itl_mean",
        "llm_static_batch_throughput",
    }
)
# What a metric's value is, beyond its unit (TTFT and TPOT are both seconds).
MEASURES = {
    "time_to_train": "time_to_train",
    "llm_ttft": "ttft_median",
    "llm_tpot": "tpot_median",
    "llm_ttft_mean": "ttft_mean",
    "llm_itl_mean": "itl_mean",
    "llm_static_batch_throughput": "static_batch_throughput",
    "llm_batch_latency": "batch_latency",
    "infer_latency": "batch_latency",
    "mlperf_inference_offline": "mlperf_offline",
    "mlperf_inference_server": "mlperf_server",
    "mlperf_inference_interactive": "mlperf_interactive",
    "llm_concurrency_throughput": "concurrency_throughput",
    "llm_decode_bs1": "decode_bs1",
}
# Sources that ran one engine throughout; their rows' `software` says which.
ENGINE_BY_FAMILY = {
    "tgi-sagemaker": "tgi",
    "amd-instinct": "vllm",
    "oci-blog": "vllm",
    "azure-aibench": "vllm",
    "vllm-ci": "vllm",
    "sglang": "sglang",
    "datacrunch-h200": "sglang",
    "fastertransformer": "fastertransformer",
    # Its notebooks (XiongjieDai/GPU-Benchmarks-on-LLM-Inference@aa72e0ec, "LLaMA 3/*_v3.ipynb")
    # build llama.cpp 2824-2843 (May 2024) with -DGGML_CUDA_USE_GRAPHS: the runtime of the
    # builds that replay CUDA graphs on one GPU only (recipe.ServingRuntime).
    "llamacpp-gpu-benchmarks": "llama.cpp-2024",
}
# Sources that compare engines name the one each row ran on in `software`.
ENGINE_KEYWORDS = (
    ("nim", "nim-tensorrt-llm"),
    ("vllm", "vllm"),
    ("tgi", "tgi"),
    ("turbomind", "lmdeploy-turbomind"),
    ("mlc-llm", "mlc-llm"),
    ("llm-awq", "llm-awq"),
)
RACK_SCALE_NVLINK = frozenset({"GB200", "GB300"})  # NVL72: one NVLink domain over 18 trays
Row = dict[str, str]


def _find(pattern: str, text: str) -> str:
    """The first capture group of `pattern` in `text` (case-insensitive), else ''."""
    hit = re.search(pattern, text, re.IGNORECASE)
    return hit.group(1) if hit else ""


def source_id(tag: str, row: Row) -> str:
    """The publisher family; dev has no group, so its two sources are told apart by URL."""
    if tag == "dev":
        return "nvidia-dle" if "DeepLearningExamples" in row["source"] else "neusight"
    for prefix, family in rules.SOURCE_PREFIXES:
        if row["group"].startswith(prefix):
            return family
    raise ValueError(f"{tag}: no source family for group {row['group']!r}")


def model_key(row: Row) -> str:
    key = rules.first_match(rules.MODEL_RULES, row["model"])
    if key is None:
        raise ValueError(f"no model key for {row['model']!r}")
    return key


def workload(row: Row, model: str) -> str:
    """Class by metric; MLPerf Inference rows are LLM serving only for the LLM benchmarks."""
    metric = row.get("metric", "")
    if metric == "time_to_train":
        return "time-to-train"
    if metric == "llm_decode_bs1":
        return "llm-decode-bs1"
    if metric in SERVING_METRICS or (
        metric.startswith("mlperf_inference") and LLM_MODELS.match(model)
    ):
        return "llm-serving"
    if metric == "train_throughput" or row["task"].startswith("training"):
        return "training"
    return "inference"


def engine(family: str, row: Row) -> str:
    """The serving engine or benchmark harness that replaces eager framework code, else ''."""
    software = row.get("software", "").lower()
    if family in ("mlperf-training", "mlperf-inference-v5.1"):
        for name in ("tensorrt", "vllm", "sglang"):
            if name in software:
                return name
        return "mlperf-submission"  # MLPerf submitters' own fused implementations
    if family in ENGINE_BY_FAMILY:
        return ENGINE_BY_FAMILY[family]
    for keyword, name in ENGINE_KEYWORDS:
        if re.search(rf"\b{keyword}\b", software):
            return name
    return ""


def execution(row: Row, engine_name: str) -> str:
    """Engine rows are 'engine'; framework rows are 'compiled' when the text says torch.compile
    is on (gpt-fast compiles by default), else 'eager', PyTorch's default."""
    if engine_name:
        return "engine"
    text = f"{row['task']} {row.get('software', '')}".lower()
    if "compile off" in text or "compile" not in text:
        return "eager"
    return "compiled"


def precision(row: Row) -> str:
    return rules.first_match(rules.PRECISION_RULES, row["precision"]) or "unknown"


def weight_only_activations(row: Row) -> str | None:
    """The activation precision of a weight-only quantised run (int8 / int4 / fp8 weights,
    dequantised into 16-bit matmuls: torchao's int8wo / int4wo / float8wo, gpt-fast's
    ``--mode int8``, AWQ's W4A16), else None. Its matmuls run at the 16-bit rate, so the
    precision is the activations' and the quantised format is the weight format. A source
    that names no activation type gets fp16: fp16 and bf16 tensor rates are equal on every
    part that has both, and fp16 is the one every tensor-core part has."""
    text = row["precision"].lower()
    if not re.search(rules.WEIGHT_ONLY_PATTERN, text):
        return None
    return rules.first_match(rules.ACTIVATION_RULES, text) or "fp16"


def kv_precision(row: Row, work: str) -> str:
    """fp8 where the model or settings name an fp8 KV cache; serving rows without it: unknown."""
    if work not in ("llm-serving", "llm-decode-bs1"):
        return ""
    text = f"{row['model']} {row['task']} {row.get('software', '')}".lower()
    if "fp8-kv" in text or "kv-cache-dtype fp8" in text:
        return "fp8"
    return "unknown"


def batches(family: str, row: Row, gpus: int) -> tuple[str, str]:
    """(per-GPU batch or serving concurrency, global batch).

    MLPerf Training's `batch` is the global batch (dev2 README); the per-GPU batch is it
    divided by the GPU count when that divides evenly. torchtitan writes 'local L / global G'.
    DeepSpeed-Chat's '1024 (query-answer pairs, max)' is a global maximum. Everything else is
    per GPU (training) or the batch / concurrency of a serving run.
    """
    text = row.get("batch", "")
    local, glob = _find(r"local (\d+)", text), _find(r"global (\d+)", text)
    if local or glob:
        return local, glob
    number = _find(r"^(\d+)", text)
    if family == "deepspeed-chat":
        return "", number
    if family == "mlperf-training" and number:
        divides = int(number) % gpus == 0
        return (str(int(number) // gpus) if divides else ""), number
    return number, ""


def parallelism(family: str, row: Row, gpus: int) -> tuple[str, str]:
    """(tensor, pipeline) degrees as the task states them; one GPU is 1/1; data-parallel-only
    harnesses (DLE, NeuSight, timm, FSDP without TP) are 1/1; TGI's GPU count is its TP degree
    (dev2 README), and so is that of a group whose GPUs serve one copy
    (``ONE_COPY_GROUPS``)."""
    task = row["task"]
    tp = _find(r"\bTP[ =]?(\d+)", task) or _find(r"tensor parallel(?: over)? (\d+)", task)
    pp = _find(r"\bPP[ =]?(\d+)", task) or _find(r"pipeline parallel (\d+)", task)
    if family == "tgi-sagemaker" or (not tp and row.get("group") in rules.ONE_COPY_GROUPS):
        tp = str(gpus)
    data_parallel = family in ("nvidia-dle", "neusight", "timm") or "fsdp" in task.lower()
    if gpus == 1 or (data_parallel and not tp):
        tp = tp or "1"
    if tp and not pp and (gpus == 1 or data_parallel or int(tp) == gpus):
        pp = "1"
    return tp, pp


def context_parallel(work: str, row: Row) -> str:
    """A training row's context-parallel degree as its task states it (torchtitan's "CP 2");
    blank where it is silent."""
    return _find(r"\bCP[ =]?(\d+)", row["task"]) if work == "training" else ""


def recipe(work: str, row: Row) -> Row:
    """A training row's activation checkpointing and sharding as its task states them
    (``CHECKPOINTING_RULES``, ``SHARDING_RULES``); blank where it is silent or not training."""
    if work != "training":
        return {"checkpointing": "", "sharding": ""}
    task = row["task"]
    return {
        "checkpointing": rules.first_match(rules.CHECKPOINTING_RULES, task) or "",
        "sharding": rules.first_match(rules.SHARDING_RULES, task) or "",
    }


def interconnect(row: Row, accelerator: str, gpus: int, nodes: int) -> str:
    """The link that carries the multi-GPU traffic: the inter-node network for multi-node runs,
    the intra-node link otherwise; blank for one GPU. Boards without NVLink use PCIe."""
    if gpus <= 1:
        return ""
    text = row.get("interconnect", "").lower()
    if accelerator in RACK_SCALE_NVLINK and "nvlink" in text:
        return "nvswitch"
    if nodes > 1:
        inter = text.split("inter-node:", 1)[-1]
        if re.search(r"infiniband|ipoib|\bib\b|ndr|hdr|edr", inter):
            return "infiniband"
        if re.search(r"ethernet|roce|gbe", inter):
            return "ethernet"
        return "unknown"
    if accelerator in rules.NO_NVLINK:
        return "pcie"
    if accelerator in rules.XGMI_ONLY:
        return "xgmi"
    for pattern, kind in (
        ("switch", "nvswitch"),
        ("nvlink", "nvlink"),
        ("xgmi|infinity fabric", "xgmi"),
        ("pcie", "pcie"),
    ):
        if re.search(pattern, text):
            return kind
    return "unknown"


def metric_value(row: Row) -> tuple[str, str, float]:
    """(metric, measure, value) in the table's units; hours and days become minutes, ms become
    seconds (the only arithmetic done to a published figure)."""
    unit, metric = row["unit"].lower(), row.get("metric", "")
    value = float(row["throughput"])
    measure = MEASURES.get(metric, "throughput")
    conversions: tuple[tuple[str, str, Callable[[float], float]], ...] = (
        ("total vs output", "tokens_per_s", lambda v: v),  # AMD page: which tokens unknown
        ("minutes", "minutes_to_train", lambda v: v),
        ("hours", "minutes_to_train", lambda v: v * MINUTES_PER_HOUR),
        ("days", "minutes_to_train", lambda v: v * MINUTES_PER_DAY),
        ("^ms", "seconds_latency", lambda v: v / MS_PER_S),
        ("^seconds", "seconds_latency", lambda v: v),
        ("requests/s", "requests_per_s", lambda v: v),
        ("queries/s|images/s|sequences/s|items/s|samples/s", "samples_per_s", lambda v: v),
        ("output|generated|one stream|single stream", "output_tokens_per_s", lambda v: v),
        ("tokens/s", "tokens_per_s", lambda v: v),
    )
    for pattern, name, convert in conversions:
        if re.search(pattern, unit):
            return name, measure, convert(value)
    raise ValueError(f"no metric for unit {row['unit']!r}")


def usability(norm: Row, row: Row) -> tuple[str, str]:
    """('yes', '') or ('no', reasons): what keeps a row from being scored on its own."""
    reasons = []
    if norm["metric"] == "minutes_to_train":
        reasons.append("time-to-train: compare within group only")
    if norm["precision"] == "unknown":
        reasons.append("precision unknown")
    if norm["accelerator"] in rules.UNPINNED_ACCELERATORS:
        reasons.append("accelerator variant not stated")
    if rules.UNSTATED_POWER_CAP.search(row["gpu"].lower()):
        reasons.append("power limited to a cap the source does not state")
    if "total vs output tokens not stated" in row["unit"]:
        reasons.append("total vs output tokens not stated")
    return ("no", "; ".join(reasons)) if reasons else ("yes", "")


def _count(row: Row, column: str, pattern: str) -> int:
    text = row.get(column, "")
    return int(text) if text else int(_find(pattern, row["task"]) or 1)


def request_shape(family: str, model: str, row: Row) -> Row:
    """Prompt and output tokens: the row's own, else (MLPerf Inference, whose summary states
    none) the benchmark dataset's means from its reference implementation, else (TGI on
    SageMaker) the mean of the prompts its load script draws from."""
    prompt, output = row.get("prompt_tokens", ""), row.get("output_tokens", "")
    if family == "mlperf-inference-v5.1" and not (prompt or output):
        prompt, output = rules.MLPERF_LLM_REQUESTS.get(model, ("", ""))
    if family == "tgi-sagemaker" and not prompt:
        prompt = rules.TGI_SAGEMAKER_PROMPT_TOKENS
    return {"prompt_tokens": prompt, "output_tokens": output}


def static_batching(family: str, model: str, accelerator: str) -> Row:
    """How a submission's engine batched where it did not batch in flight
    (``MLPERF_STATIC_BATCHES``: MLPerf's TensorRT Whisper runs static batches of its configured
    size per GPU, each decoding up to the generation cap): its batch, ``batching: static`` and
    the cap; else nothing."""
    batch = rules.MLPERF_STATIC_BATCHES.get(model, {}).get(accelerator)
    if family != "mlperf-inference-v5.1" or batch is None:
        return {}
    cap = rules.MLPERF_MAX_OUTPUT_TOKENS.get(model, "")
    return {"batch": str(batch), "batching": "static", "max_output_tokens": cap}


def vllm_run(family: str, model: str, row: Row) -> Row:
    """The engine settings of an MLPerf submission that ran AMD's vLLM harness, read from its
    code (``MLPERF_VLLM_RUNS``): tensor parallelism (pipeline 1), the cap on sequences one
    copy decodes at once, the share of memory the engine takes and, where the file sets one,
    the KV cache's format; else nothing."""
    location = _find(r"Location (closed/[^)]+)\)", row["source"])
    parts = location.split("/") if family == "mlperf-inference-v5.1" else []
    if len(parts) != 6:
        return {}
    _, submitter, _, system, _, scenario = parts
    run = rules.MLPERF_VLLM_RUNS.get((model, submitter, system, scenario))
    if run is None:
        return {}
    tp, max_batch, memory, kv = run
    return {
        "tensor_parallel": str(tp),
        "pipeline_parallel": "1",
        **_batching_limits(max_batch, memory),
        **({"kv_precision": kv} if kv else {}),
    }


def stated_engine_settings(row: Row) -> Row:
    """The cap on sequences per copy and the memory share a source's own script sets for its
    group (``STATED_ENGINE_SETTINGS``); else nothing."""
    settings = rules.STATED_ENGINE_SETTINGS.get(row.get("group", ""))
    return _batching_limits(*settings) if settings is not None else {}


def _batching_limits(max_batch: int, memory: float) -> Row:
    """A continuous-batching engine's cap on sequences per copy and share of GPU memory, as
    the normalised columns spell them."""
    return {"max_batch": str(max_batch), "memory_utilization": f"{memory:g}"}


def image_size(family: str, model: str) -> str:
    """Pixels a side of the images a row's harness feeds its model where that is not the
    registry entry's resolution (``DLE_IMAGE_SIZE``), else blank."""
    if family == "nvidia-dle":
        return str(rules.DLE_IMAGE_SIZE.get(model, ""))
    return ""


def reference_run(family: str, model: str, row: Row) -> Row:
    """What an MLPerf reference implementation ran where its code or its run's log overrides
    the submission's labels (``MLPERF_REFERENCE_RUNS``: Whisper's reference runs vLLM in bf16
    on one GPU, one transcript at a time, RetinaNet's TorchScript model eager at batch 1),
    else nothing."""
    if family != "mlperf-inference-v5.1" or rules.MLPERF_REFERENCE_SYSTEM not in row["source"]:
        return {}
    return dict(rules.MLPERF_REFERENCE_RUNS.get(model, {}))


def gpus_per_board(name: str) -> int:
    """GPUs on one board of the source's accelerator (``GPUS_PER_BOARD``: dual-GPU cards)."""
    return rules.first_match(rules.GPUS_PER_BOARD, name) or 1


def dle_batch(model: str, accelerator: str, precision: str, task: str) -> str:
    """Per-GPU batch of a DeepLearningExamples training row whose table states no micro-batch:
    the accumulated per-GPU batch where the task quotes the table's "Batch size / GPU" column
    (BERT pre-training: the step's samples per GPU; the planner picks the micro-batch), else
    the ConvNets harness's configs.yml batch for the platform and precision."""
    accumulated = _find(r"reads (\d+) and \1 \(accumulated\)", task)
    if accumulated:
        return accumulated
    per_gpu = rules.DLE_CONVNET_BATCH.get(
        (model, rules.DLE_PLATFORMS.get(accelerator, ""), precision)
    )
    return str(per_gpu) if per_gpu else ""


def normalise_row(tag: str, index: int, row: Row) -> Row:
    family = source_id(tag, row)
    model = model_key(row)
    work = workload(row, model)
    gpus, nodes = _count(row, "gpus", r"(\d+) GPU"), _count(row, "nodes", r"(\d+) nodes?")
    accelerator = rules.first_match(rules.ACCELERATOR_RULES, row["gpu"])
    if accelerator is None:
        raise ValueError(f"{tag} row {index}: no accelerator id for {row['gpu']!r}")
    engine_name = engine(family, row)
    reference = reference_run(family, model, row)
    # a reference run's GPU count is already GPUs; a source's count is of its boards
    gpus = int(reference["gpus"]) if "gpus" in reference else gpus * gpus_per_board(row["gpu"])
    metric, measure, value = metric_value(row)
    if family == "mlperf-inference-v5.1" and model in rules.MLPERF_TOKEN_RESULTS:
        metric = "output_tokens_per_s"  # the results summary's "samples/s" label is wrong
    batch, global_batch = batches(family, row, gpus)
    tp, pp = parallelism(family, row, gpus)
    group = row.get("group") or f"{family}/{model}/{work}"
    if metric == "minutes_to_train" and global_batch:
        group = f"{group}/global_batch={global_batch}"  # dev2 README: compare within this
    norm: Row = {
        "row_id": f"{tag}:{index:04d}",
        "file": dict(INPUTS)[tag],
        "source_id": family,
        "group": group,
        "model_key": model,
        "workload": work,
        "execution": execution(row, engine_name),
        "engine": engine_name,
        "precision": precision(row),
        "kv_precision": kv_precision(row, work),
        "batch": batch,
        "global_batch": global_batch,
        "seq_len": row.get("seq_len") or _find(r"seq(?:uence)?[_ ]len(?:gth)? (\d+)", row["task"]),
        "image_size": image_size(family, model),
        **request_shape(family, model, row),
        "max_output_tokens": "",
        "batching": "",
        "max_batch": "",
        "memory_utilization": "",
        "accelerator": accelerator,
        "gpus": str(gpus),
        "nodes": str(nodes),
        "tensor_parallel": tp,
        "pipeline_parallel": pp,
        "context_parallel": context_parallel(work, row),
        **recipe(work, row),
        "interconnect": interconnect(row, accelerator, gpus, nodes),
        "metric": metric,
        "measure": measure,
        "value": f"{value:.10g}",
        "scope": row.get("scope") or "system",
        "source": row["source"],
    }
    norm.update(static_batching(family, model, accelerator) if not reference else {})
    norm.update(reference)  # what a reference implementation really ran
    norm.update(vllm_run(family, model, row))
    norm.update(stated_engine_settings(row))
    if family == "torchtitan" and work == "training" and not norm["seq_len"]:
        norm["seq_len"] = str(rules.TORCHTITAN_SEQ_LEN)
    if family == "nvidia-dle" and work == "training" and not norm["batch"]:
        norm["batch"] = dle_batch(model, accelerator, norm["precision"], row["task"])
    serving = work in ("llm-serving", "llm-decode-bs1")
    norm["weight_format"] = norm["precision"] if serving else ""
    fmt = norm["weight_format"]
    bits = rules.WEIGHT_BITS.get((family, model, fmt), rules.WEIGHT_BITS.get((family, "", fmt)))
    norm["weight_bits"] = f"{bits:.4g}" if bits is not None else ""
    activations = weight_only_activations(row) if serving else None
    if activations is not None:
        norm["precision"] = activations
    w4a8 = rules.MLPERF_W4A8_FORMATS.get((accelerator, model)) if serving else None
    if family == "mlperf-inference-v5.1" and w4a8 and fmt == "int4":
        norm["precision"], norm["kv_precision"] = w4a8
    norm["usable"], norm["why_not"] = usability(norm, row)
    return norm


def build_rows(data_dir: Path = HERE) -> list[Row]:
    """Every row of the three input files, normalised, in file order."""
    out: list[Row] = []
    for tag, name in INPUTS:
        with (data_dir / name).open(newline="", encoding="utf-8") as handle:
            for index, row in enumerate(csv.DictReader(handle), start=1):
                out.append(normalise_row(tag, index, row))
    return out


def render(rows: list[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def summary(rows: list[Row]) -> str:
    """Markdown tables of row counts per source, workload, precision, accelerator."""
    parts = [f"{len(rows)} rows, {sum(r['usable'] == 'yes' for r in rows)} usable.\n"]
    for column in ("source_id", "workload", "precision", "execution", "accelerator", "usable"):
        counts = Counter(r[column] for r in rows)
        usable = Counter(r[column] for r in rows if r["usable"] == "yes")
        parts.append(f"| {column} | rows | usable |\n|---|---:|---:|")
        for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            parts.append(f"| {name} | {count} | {usable[name]} |")
        parts.append("")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="print counts, write nothing")
    parser.add_argument("--check", action="store_true", help="exit 1 if the output is stale")
    args = parser.parse_args(argv)
    rows = build_rows()
    if args.summary:
        print(summary(rows))
        return 0
    text = render(rows)
    if args.check:
        stale = not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text
        print(f"{OUTPUT.name} is {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} rows to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
