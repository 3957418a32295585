"""Saying what the planner assumed: the plan of one row as the public :class:`Plan`, what
fills each GPU, and the remedies when nothing fits."""

from __future__ import annotations

import math
from typing import Any

from recommender.catalog.schema import Accelerator
from recommender.scoring.calibration import Calibration
from recommender.scoring.issue_rate import runtime_limit_note
from recommender.scoring.memory import GB, NF4_BYTES_PER_PARAMETER, usable_bytes
from recommender.scoring.plan import CHECKPOINTING, SHARDING, Plans
from recommender.scoring.predict import Predictions
from recommender.scoring.results import Plan
from recommender.scoring.serving import (
    SERVING_MEMORY_UTILIZATION,
    Serving,
    next_concurrency,
    tpot_prefills,
)
from recommender.scoring.serving_formats import W4A8_ACTIVATIONS, weight_bytes, weight_support
from recommender.scoring.serving_step import charges_sequences, engine_step_s, serving_execution
from recommender.scoring.shape import Shape
from recommender.workload import Workload

# float slack when rounding a mean per-copy concurrency (5 clients / 2 copies = 2.5) up
CONCURRENCY_ROUNDING = 1e-9
# The plan names the engine's host loop when it leaves the GPU idle at least this share of
# a serving cycle (below it, the "GPU busy" figure says enough).
HOST_LOOP_NOTE_SHARE = 0.05

__all__ = ["describe_plan", "remedies"]


def _gb(x: float) -> float:
    return round(x / GB, 2)


def _attention(w: Workload, fused: bool, flash: bool) -> str:
    if not fused:
        return "eager"
    pinned = w.training.attention
    if pinned in ("flash", "sdpa"):
        return pinned
    return "flash" if flash else "sdpa"


def _assumed_training(w: Workload, plan: dict[str, Any]) -> list[str]:
    """What the plan changed from the workload as written (the ``auto`` choices it made)."""
    r = w.training
    out: list[str] = []
    if r.attention == "auto" and plan["attention"] not in (None, "eager"):
        out.append({"flash": "flash attention", "sdpa": "SDPA fused attention"}[plan["attention"]])
    if r.checkpointing == "auto" and plan["checkpointing"] != "none":
        extra = "~33 % more compute" if plan["checkpointing"] == "full" else "recomputes attention"
        out.append(f"{plan['checkpointing']} activation checkpointing ({extra})")
    if r.micro_batch is None and plan["gradient_accumulation"] > 1:
        out.append(
            f"micro-batch {plan['micro_batch']} x {plan['gradient_accumulation']} "
            "accumulation steps"
        )
    if r.sharding == "auto" and plan["sharding"] != "none":
        name = {"zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3 / FSDP"}[plan["sharding"]]
        out.append(f"{name} over {plan['data_parallel'] * plan['context_parallel']} GPUs")
    if r.tensor_parallel == "auto" and plan["tensor_parallel"] > 1:
        out.append(f"tensor parallel {plan['tensor_parallel']}")
    if r.context_parallel == "auto" and plan["context_parallel"] > 1:
        cp = plan["context_parallel"]
        out.append(f"context parallel {cp} (each sequence split over {cp} GPUs)")
    if r.offload == "auto" and plan["offload"] == "optimizer":
        out.append("optimizer state offloaded to host memory")
    return out


def _batched_plan(w: Workload, plans: Plans, i: int, flash: bool) -> Plan:
    training = w.training_job
    dp, tp, cp = int(plans.dp[i]), int(plans.tp[i]), int(plans.cp[i])
    mb, acc = int(plans.micro_batch[i]), int(plans.accumulation[i])
    fused = bool(plans.fused_attention[i])
    fields: dict[str, Any] = {
        "data_parallel": dp,
        "tensor_parallel": tp,
        "context_parallel": cp,
        "attention": _attention(w, fused, flash) if plans.transformer else None,
        "micro_batch": mb,
        "memory_gb": {
            "state": _gb(float(plans.state_bytes[i])),
            "activations": _gb(float(plans.activation_bytes[i])),
        },
    }
    if training:
        fields |= {
            "sharding": SHARDING[int(plans.stage[i])],
            "checkpointing": CHECKPOINTING[int(plans.ckpt[i])],
            "gradient_accumulation": acc,
            "global_batch": mb * acc * dp,
            "offload": "optimizer" if plans.offload[i] else "none",
        }
        fields["assumed"] = _assumed_training(w, fields)
    elif tp > 1:
        fields["assumed"] = [f"tensor parallel {tp} (the model does not fit fewer GPUs)"]
    return Plan(**fields)


def _bound(w: Workload, sv: Serving, i: int, conc: int) -> str:
    """What stopped the planner's concurrency at ``conc`` (nothing to say for one the user
    pinned): ``inference.max_batch`` (no candidate is left), the KV room (the next candidate
    does not fit it), or the latency targets (it fits, but misses them)."""
    if "batch_size" in w.model_fields_set:
        return ""
    slots = float(sv.kv_slots[i])
    room = "no limit" if math.isinf(slots) else f"room for {int(slots):,}"
    larger = next_concurrency(w, conc)
    if larger is None:
        return f" (inference.max_batch; the KV cache has {room})"
    if slots < larger:
        return f" (the KV cache has {room}; concurrency is tried in powers of two)"
    t = w.targets
    if t.tpot_ms is None and t.ttft_ms is None and t.p95_latency_ms is None:
        return ""
    return f" (the latency targets; the KV cache has {room})"


def _serving_plan(w: Workload, sv: Serving, i: int, acc: Accelerator, cal: Calibration) -> Plan:
    spec = w.inference
    assert spec is not None
    weights = spec.weights or w.precision
    # A pinned concurrency spread over copies leaves some with one more client than others:
    # the busiest copy's count is the one its KV cache must hold.
    tp, conc = int(sv.tp[i]), math.ceil(float(sv.concurrency[i]) - CONCURRENCY_ROUNDING)
    sequences = f"{conc} sequence{'' if conc == 1 else 's'} per copy"
    if spec.engine == "static":
        steps = spec.max_output_tokens or spec.output_tokens
        assumed = [f"static batches of {sequences}, each {steps} decode steps long"]
    else:
        assumed = [f"continuous batching of {sequences}{_bound(w, sv, i, conc)}"]
    copies = int(sv.copies[i])
    if "batch_size" in w.model_fields_set and copies > 1:
        assumed.append(f"the {w.batch_size} concurrent requests spread over {copies} model copies")
    queued = int(sv.queued[i])
    if queued > 0:
        assumed.append(
            f"{queued} more requests per copy wait for KV-cache room (the engine queues them; "
            "their wait counts in TTFT)"
        )
    busy = float(sv.occupancy[i])
    if busy < 1.0 and w.targets.ttft_ms is not None:
        assumed.append(
            f"requests arriving at random: slots kept {busy:.0%} busy so that "
            f"{w.targets.latency_percentile:g} % wait under the {w.targets.ttft_ms:g} ms TTFT"
        )
    tail = _tpot_tail(w, conc)
    if tail:
        assumed.append(tail)
    if spec.tensor_parallel == "auto" and tp > 1:
        assumed.append(f"tensor parallel {tp}")
    if weights == "int4":
        assumed.append(_int4_compute(w, acc))
    if spec.memory_utilization is None:
        assumed.append(
            f"the engine takes {SERVING_MEMORY_UTILIZATION:.0%} of each GPU's memory (vLLM's "
            "default; state inference.memory_utilization for your engine's)"
        )
    limited = runtime_limit_note(acc, spec.runtime, cal)
    if limited:
        assumed.append(limited)
    host = _host_loop(w, sv, i, cal)
    if host:
        assumed.append(host)
    unstated = _unstated_request_shape(w)
    if unstated:
        assumed.append(unstated)
    return Plan(
        data_parallel=int(sv.copies[i]),
        tensor_parallel=tp,
        pipeline_parallel=spec.pipeline_parallel,
        concurrency=conc,
        weights=weights,
        kv_cache=spec.kv_cache,
        ttft_ms=round(float(sv.ttft_s[i]) * 1e3, 3),
        tpot_ms=round(float(sv.tpot_s[i]) * 1e3, 3),
        memory_gb={
            "weights": _gb(float(sv.weights_bytes[i])),
            "kv_cache": _gb(float(sv.kv_bytes[i])),
        },
        assumed=assumed,
    )


def _host_loop(w: Workload, sv: Serving, i: int, cal: Calibration) -> str | None:
    """The share of a serving cycle the engine's host loop leaves the GPU idle, where it is
    worth saying (``HOST_LOOP_NOTE_SHARE``), with what it is made of."""
    share = float(sv.host_share[i])
    if share < HOST_LOOP_NOTE_SHARE:
        return None
    execution = serving_execution(w)
    parts = f"{engine_step_s(w, execution, cal) * 1e3:g} ms a step"
    if charges_sequences(w, execution):
        parts += f" and {cal.serving_sequence_s * 1e6:.0f} us a sequence"
    return (
        f"the engine's host loop between decode steps (scheduling, sampling, output handling: "
        f"{parts}) leaves the GPU idle {share:.0%} of the time"
    )


def _tpot_tail(w: Workload, concurrency: int) -> str:
    """What a TPOT target held for a percentile of random arrivals counts
    (:func:`.serving.tpot_prefills`), or ``""`` where it counts the mean."""
    spec = w.inference
    assert spec is not None
    if w.targets.tpot_ms is None or spec.engine == "static":
        return ""
    prefills = float(tpot_prefills(w, float(concurrency)))
    if prefills <= concurrency:
        return ""
    return (
        f"TPOT at the {w.targets.latency_percentile:g}th percentile: a request's decode carries "
        f"the prefills of {prefills:.0f} requests admitted meanwhile, against {concurrency} on "
        "average"
    )


def _int4_compute(w: Workload, acc: Accelerator) -> str:
    """What int4 weights compute in on ``acc``: W4A8 where the workload's precision quantises
    the activations and the chip has that rate, else 16-bit matmuls."""
    compute = weight_support(acc, "int4", w.precision)[1]
    if compute != "fp16":
        return f"int4 weights with {compute} activations (W4A8): matmuls at the {compute} rate"
    if w.precision in W4A8_ACTIVATIONS:
        return (
            f"int4 weights dequantised into fp16 matmuls: the {acc.id} has no {w.precision} "
            "matrix rate for W4A8"
        )
    return "int4 weights (AWQ / GPTQ) dequantised into fp16 matmuls"


def _unstated_request_shape(w: Workload) -> str | None:
    """The request shape the recipe left to the defaults, said out loud: the prefill is
    proportional to the prompt and the decode loop to the output, so a default that is not the
    traffic's shape moves the rate (TGI's benchmark rows: their 233-token prompts in place of
    the 512-token default changed the predicted rate by about a quarter)."""
    spec = w.inference
    if spec is None:
        return None
    missing = [
        f"{getattr(spec, name)} {label}"
        for name, label in (("prompt_tokens", "prompt tokens"), ("output_tokens", "output tokens"))
        if name not in spec.model_fields_set
    ]
    if not missing:
        return None
    return (
        f"{' and '.join(missing)} per request (the default: the recipe does not say; "
        "state inference.prompt_tokens / output_tokens for your traffic)"
    )


def describe_plan(
    w: Workload,
    p: Predictions,
    row: int,
    acc: Accelerator,
    cal: Calibration,
) -> Plan | None:
    """The plan of ``row`` of ``p`` (``None`` when the row has no plan); ``cal``, the
    calibration it was predicted under, lets it say where a runtime's kernels set the rate."""
    i = int(p.config[row])
    if p.serving is not None:
        return _serving_plan(w, p.serving, i, acc, cal)
    if p.plans is not None:
        from recommender.scoring.hardware import FLASH_ARCHITECTURES, FLASH_ATTENTION_2_SPEED

        # SDPA's own dispatch where FlashAttention-2 is not the architecture's best kernel.
        arch = acc.architecture
        flash = arch in FLASH_ARCHITECTURES and arch not in FLASH_ATTENTION_2_SPEED
        return _batched_plan(w, p.plans, i, flash)
    return None


# A job that reads at least this many tokens per parameter is pretraining, not a fine-tune:
# compute-optimal pretraining reads ~20 tokens per parameter (Hoffmann et al. 2022,
# "Chinchilla"), fine-tunes a small fraction of one (LoRA's GPT-3 runs: tens of millions of
# tokens on 175 B parameters, Hu et al. 2021). QLoRA freezes a pretrained base, so it is no
# remedy for pretraining.
PRETRAINING_TOKENS_PER_PARAMETER = 1.0


def _pretraining(w: Workload) -> bool:
    tokens = w.total_samples * (w.sequence_length or 1)
    return tokens >= PRETRAINING_TOKENS_PER_PARAMETER * w.parameters


def remedies(w: Workload, s: Shape, acc: Accelerator, bigger: list[tuple[str, float]]) -> list[str]:
    """What would make ``w`` fit on ``acc`` when no recipe on one instance does."""
    room = usable_bytes(acc.memory_gb)
    out: list[str] = []
    if w.training_job:
        if w.precision in ("fp32", "tf32"):
            out.append("train in mixed precision (bf16): half the weight and activation memory")
        state = 16.0 * (w.parameters if w.training.lora is None else 0.0)
        if state > 0.5 * room:
            n = max(2, math.ceil(state / (0.5 * room)))
            out.append(
                f"shard the 16 B/parameter state over at least {n} GPUs of "
                f"{acc.memory_gb:g} GB (ZeRO-3 / FSDP)"
            )
        if w.training.lora is None and not _pretraining(w):
            qlora = w.parameters * NF4_BYTES_PER_PARAMETER
            if qlora < 0.7 * room:
                out.append(
                    "fine-tune with QLoRA (4-bit base + LoRA adapters): "
                    f"~{qlora / GB:.0f} GB of weights"
                )
    else:
        fmt = (w.inference.weights if w.inference else None) or w.precision
        weights = w.parameters * weight_bytes(w, fmt)
        if fmt not in ("int4", "fp4"):
            out.append(
                f"quantise the weights to int4 (AWQ / GPTQ): {w.parameters * 0.53 / GB:.0f} GB"
            )
        if weights > room:
            n = math.ceil(weights / room)
            out.append(f"tensor parallel over at least {n} GPUs of {acc.memory_gb:g} GB")
    fitting = [(name, gb) for name, gb in bigger if usable_bytes(gb) >= _whole_bytes(w)]
    if fitting:
        name, gb = min(fitting, key=lambda x: x[1])
        out.append(f"use a bigger GPU: {name} ({gb:g} GB) holds it whole")
    return out


# Activations and buffers on top of the model state when a GPU holds a job whole.
WHOLE_JOB_MARGIN = 1.1


def _whole_bytes(w: Workload) -> float:
    """Bytes one GPU needs to hold ``w`` without sharding or offload (roughly)."""
    if w.training_job and w.training.lora is None:
        return 16.0 * w.parameters * WHOLE_JOB_MARGIN  # mixed-precision Adam state
    fmt = (w.inference.weights if w.inference else None) or w.precision
    return w.parameters * weight_bytes(w, fmt) * WHOLE_JOB_MARGIN
