"""The published-throughput development set as workloads and measurements.

Reads ``benchmarks/data/published_throughput_dev.csv`` (each row cites its source) and
describes each model the way a user would, through the public workload schema. Model shapes:
- ResNet-50 v1.5: 4.1 GFLOPs per 224 px image forward, 25.6 M parameters (He et al. 2016;
  NVIDIA DeepLearningExamples ResNet-50 v1.5 README);
- BERT-Large: 24 layers, d 1024, 16 heads, vocab 30522 (Devlin et al. 2019);
- GPT-2 Large: 36 layers, d 1280, 20 heads, vocab 50257 (Radford et al. 2019);
- GPT-3 XL / 2.7B: 24 layers d 2048 24 heads / 32 layers d 2560 32 heads, vocab 50257
  (Brown et al. 2020, Table 2.1);
- OPT-1.3B: 24 layers, d 2048, 32 heads, vocab 50272 (Zhang et al. 2022, Table 1);
- Switch-Transformer XL with 4 experts: taken as a T5-XL-shaped encoder-decoder, 24 + 24
  layers, d 2048, d_ff 5120, 32 heads, vocab 32128 (Raffel et al. 2020; Fedus et al. 2022).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recommender.scoring.calibrate import Observation
from recommender.workload import Workload

__all__ = ["DATA", "Row", "load_rows"]

DATA = Path(__file__).resolve().parent / "data" / "published_throughput_dev.csv"

ARCHS: dict[str, dict[str, Any]] = {
    "BERT-Large": {
        "layers": 24,
        "hidden_size": 1024,
        "heads": 16,
        "vocab_size": 30522,
        "kind": "encoder",
    },
    "GPT2-Large": {"layers": 36, "hidden_size": 1280, "heads": 20, "vocab_size": 50257},
    "GPT3-2.7B": {"layers": 32, "hidden_size": 2560, "heads": 32, "vocab_size": 50257},
    "GPT3-XL": {"layers": 24, "hidden_size": 2048, "heads": 24, "vocab_size": 50257},
    "OPT-1.3B": {"layers": 24, "hidden_size": 2048, "heads": 32, "vocab_size": 50272},
    "Switch-Transformer XL": {
        "layers": 24,
        "hidden_size": 2048,
        "heads": 32,
        "vocab_size": 32128,
        "ffn_multiplier": 2.5,
        "experts": 4,
        "kind": "encoder-decoder",
    },
}
GPU_IDS = {
    "A100-SXM4-80GB": "A100-SXM4-80GB",
    "A100-PCIe-40GB": "A100-PCIe-40GB",
    "A100-PCIe-80GB": "A100-PCIe-80GB",
    "H100-SXM5-80GB": "H100-SXM5-80GB",
    "V100-SXM2-16GB": "V100-SXM2-16GB",
    "V100-SXM2-32GB": "V100-SXM2-32GB",
    "V100-PCIe-32GB": "V100-PCIe-32GB",
    "P100-PCIe-16GB": "P100-PCIe-16GB",
    "T4": "T4",
    "L4": "L4",
    "P4": "P4",
}


@dataclass(frozen=True)
class Row:
    model: str  # short model name
    group: tuple[str, str, str, int]  # (model, task, precision, batch): same run, other GPUs
    observation: Observation


def _gpu(text: str) -> str:
    for prefix, canonical in GPU_IDS.items():
        if text.startswith(prefix):
            return canonical
    raise KeyError(f"GPU {text!r} has no catalog id in published.py")


def _precision(text: str) -> str:
    if text.startswith("FP32"):
        return "fp32"
    if text == "TF32":
        return "tf32"
    return "fp16"  # "AMP mixed precision" on V100/T4/A100 runs fp16 tensor cores


def _sequence(task: str) -> int:
    for token in task.replace(",", " ").split():
        if token.isdigit() and int(token) >= 128:
            return int(token)
    raise ValueError(f"no sequence length in {task!r}")


def _workload(model: str, task: str, precision: str, batch: int) -> tuple[str, Workload]:
    training = task.startswith("train")
    kind = "training" if training else "inference"
    data = {"samples": 1e6, "source": "memory"}
    compiled = "torch.compile" in task
    if model.startswith("ResNet-50"):
        spec: dict[str, Any] = {
            "parameters": 25.6e6,
            "family": "cnn",
            "flops_per_sample": 4.1e9 * (3 if training else 1),
        }
        short = "ResNet-50"
    else:
        short = next(k for k in ARCHS if model.startswith(k))
        arch = {**ARCHS[short], "sequence_length": _sequence(task)}
        spec = {
            "architecture": arch,
            "family": "transformer",
            "optimizer_step": "no optimizer step" not in task,
        }
    spec["execution"] = "compiled" if compiled else "eager"
    w = Workload.model_validate(
        {
            "name": short,
            "kind": kind,
            "model": spec,
            "precision": precision,
            "batch_size": batch,
            "data": data,
        }
    )
    return short, w


def load_rows(path: Path = DATA) -> list[Row]:
    rows: list[Row] = []
    cache: dict[tuple[str, str, str, int], tuple[str, Workload]] = {}
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            precision = _precision(r["precision"])
            batch = int(r["batch"]) if r["batch"] else 256
            group = (r["model"], r["task"].split(";")[0], precision, batch)
            if group not in cache:
                cache[group] = _workload(r["model"], r["task"], precision, batch)
            short, w = cache[group]
            obs = Observation(
                w, _gpu(r["gpu"]), 1, float(r["throughput"]), "|".join(map(str, group))
            )
            rows.append(Row(short, group, obs))
    return rows
