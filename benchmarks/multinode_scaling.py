"""Predicted multi-node scaling efficiency against published measurements.

For each group of published runs of one workload at several cluster sizes
(``benchmarks/data/multinode_scaling.csv``, every row with its source), the measured
scaling efficiency of a run is its per-GPU rate over the per-GPU rate of the group's
smallest run; the predicted one is the same ratio of the multi-node planner's predictions
(:func:`recommender.scoring.multinode.plan_clusters`, with the layout the source states
pinned, or chosen by the planner where it states none). The naive reference is linear
scaling: 100 % for every run. Errors are in percentage points; the reference rows
(efficiency 100 % by definition) are not scored.

Sources: Megatron-LM weak scaling (Narayanan et al. 2021, Table 1: model FLOP/s per GPU,
1.7 B on 32 to 1 T parameters on 3,072 A100s); MLPerf Training v3.0-v5.0 time-to-train
(GPT-3 175 B and Llama 3.1 405 B pretraining, Llama 2 70B LoRA fine-tuning; system sizes of
one submitter at the same global batch, so the samples to converge are the same; the LoRA
time-to-train includes evaluation and start-up the planner does not model); torchtitan's FSDP
Llama 3.1 8B on 8 vs 128 H100 and 32 vs 64 H200. Nothing here is fitted: the planner's
constants are the product's. Each row states the software the source ran: the Megatron-LM
runs of 2021 predate FlashAttention and materialise the attention score matrix
(``attention: eager``), which costs the small, tensor-parallel-free models of the table far
more of their step than the large ones. The LoRA rows were added after the others, before their
predictions were seen.

    python benchmarks/multinode_scaling.py
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from recommender import load_catalog
from recommender.catalog import Catalog
from recommender.scoring.cluster_network import achieved_network_bytes_per_s
from recommender.scoring.engine import context
from recommender.scoring.multinode import ClusterHardware, plan_clusters
from recommender.workload import Workload

DATA = Path(__file__).resolve().parent / "data" / "multinode_scaling.csv"
GPT_VOCABULARY = 51_200  # Megatron-LM's GPT runs (Narayanan et al. 2021, section 5)
TARGET_POINTS = 10.0
LORA_SUFFIX = "-lora"
MLPERF_LORA_RANK = 16  # MLPerf Training llama2_70b_lora reference (lora_r 16)


def _model(row: dict[str, str]) -> dict[str, Any]:
    if row["model"].startswith("gpt:"):
        _, layers, hidden, heads = row["model"].split(":")
        return {
            "architecture": {
                "layers": int(layers),
                "hidden_size": int(hidden),
                "heads": int(heads),
                "vocab_size": GPT_VOCABULARY,
                "mlp": "plain",
            },
            "sequence_length": int(row["seq_len"]),
            "execution": row["execution"],
        }
    name = row["model"].removesuffix(LORA_SUFFIX)
    return {"name": name, "sequence_length": int(row["seq_len"]), "execution": row["execution"]}


def _workload(row: dict[str, str]) -> Workload:
    training: dict[str, Any] = {"global_batch": int(row["global_batch"])}
    if row["model"].endswith(LORA_SUFFIX):  # MLPerf's LoRA: rank 16 on the attention matrices
        training["lora"] = {"rank": MLPERF_LORA_RANK, "targets": "attention"}
    for key in ("tp", "pp"):
        if row[key] != "auto":
            training["tensor_parallel" if key == "tp" else "pipeline_parallel"] = int(row[key])
    if row["sharding"] != "auto":
        training["sharding"] = row["sharding"]
    for key in ("checkpointing", "attention"):
        if row[key] != "auto":
            training[key] = row[key]
    return Workload.model_validate(
        {
            "name": row["group"],
            "kind": "training",
            "model": _model(row),
            "precision": "bf16",
            "batch_size": 1,
            "training": training,
            "data": {"samples": 1e6, "epochs": 1},
        }
    )


def predicted_rate(row: dict[str, str], catalog: Catalog) -> float:
    """Predicted model FLOP/s per GPU of the run ``row`` describes."""
    w = _workload(row)
    ctx = context(w, catalog)
    index = catalog.accelerators.index(catalog.accelerator(row["accelerator"]))
    network = achieved_network_bytes_per_s(float(row["node_gbps"]), row["fabric"])
    gpus, nodes = float(row["gpus_per_node"]), float(row["nodes"])
    hw = ClusterHardware(
        acc=np.array([index], dtype=np.int32),
        gpus=np.array([gpus]),
        network_bytes_per_s=np.array([network]),
    )
    plans = plan_clusters(
        w, ctx.shape, ctx.state, ctx.caps, hw, np.array([nodes]), ctx.calibration, 2.0
    )
    if not plans.fits[0, 0]:
        return float("nan")
    return float(plans.samples_per_s[0, 0]) * w.flops_per_sample / (gpus * nodes)


def measured_rate(row: dict[str, str]) -> float:
    """Published per-GPU rate, up to a constant per group."""
    value, gpus = float(row["measured"]), float(row["gpus_per_node"]) * float(row["nodes"])
    if row["unit"].startswith("minutes"):
        return 1.0 / (value * gpus)  # time to train the same samples
    return value  # already per GPU


def score(catalog: Catalog) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per source family, the model's and linear scaling's errors (points); prints each row."""
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in csv.DictReader(DATA.open()):
        groups[row["group"]].append(row)
    errors: dict[str, list[float]] = defaultdict(list)
    linear: dict[str, list[float]] = defaultdict(list)
    print(f"{'group':34} {'GPUs':>6} {'measured':>9} {'predicted':>9} {'linear':>7}  source")
    for group, members in groups.items():
        members.sort(key=lambda r: int(r["nodes"]))
        ref = members[0]
        m_ref, p_ref = measured_rate(ref), predicted_rate(ref, catalog)
        family = group.split("-")[0]
        for row in members[1:]:
            measured = measured_rate(row) / m_ref
            predicted = predicted_rate(row, catalog) / p_ref
            errors[family].append(abs(predicted - measured) * 100.0)
            linear[family].append(abs(1.0 - measured) * 100.0)
            gpus = int(row["nodes"]) * int(row["gpus_per_node"])
            print(
                f"{group:34} {gpus:6d} {measured:9.1%} {predicted:9.1%} {1.0:7.0%}  "
                f"{row['source'][:60]}"
            )
    return errors, linear


def _line(name: str, model: list[float], linear: list[float]) -> str:
    return (
        f"{name:30} {len(model):4d} {statistics.mean(model):12.1f} {statistics.mean(linear):13.1f}"
    )


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    errors, linear = score(load_catalog())
    print()
    print(f"{'source family':30} {'rows':>4} {'model error':>12} {'linear error':>13}  (points)")
    for family in errors:
        print(_line(family, errors[family], linear[family]))
    same = [f for f in errors if f != "megatron"]  # one workload at several sizes
    print(
        _line(
            "same workload (mlperf, torchtitan)",
            [e for f in same for e in errors[f]],
            [e for f in same for e in linear[f]],
        )
    )
    every = [e for v in errors.values() for e in v]
    every_linear = [e for v in linear.values() for e in v]
    print(_line("all", every, every_linear))
    mean = statistics.mean(every)
    verdict = "meets" if mean <= TARGET_POINTS else "misses"
    print(
        f"mean error over all rows {mean:.1f} points: {verdict} the {TARGET_POINTS:g}-point target"
    )


if __name__ == "__main__":
    main()
