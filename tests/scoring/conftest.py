"""Workload builders shared by the scoring tests."""

from __future__ import annotations

from typing import Any

import pytest

from recommender.workload import Workload


def make(**overrides: Any) -> Workload:
    """A mid-size bf16 training job; override any top-level field."""
    spec: dict[str, Any] = {
        "name": "test",
        "kind": "training",
        "model": {
            "family": "transformer",
            "architecture": {
                "layers": 24,
                "hidden_size": 1024,
                "heads": 16,
                "sequence_length": 512,
                "vocab_size": 30522,
                "kind": "encoder",
            },
        },
        "precision": "bf16",
        "batch_size": 16,
        "data": {"samples": 1e6, "epochs": 1, "bytes_per_sample": 2e3, "source": "memory"},
    }
    spec.update(overrides)
    return Workload.model_validate(spec)


def single_stream_decode(model: str, weights: str | None = "int4", **inference: Any) -> Workload:
    """A single-stream decode as llama.cpp runs it: one sequence, the whole GPU's memory;
    ``weights=None`` keeps the model's 16-bit precision."""
    spec: dict[str, Any] = {
        "prompt_tokens": 16,
        "output_tokens": 512,
        "tensor_parallel": 1,
        "memory_utilization": 1.0,
        **({"weights": weights} if weights is not None else {}),
        **inference,
    }
    return Workload.model_validate(
        {
            "name": "decode",
            "kind": "inference",
            "model": {"name": model},
            "precision": "fp16",
            "batch_size": 1,
            "inference": spec,
        }
    )


@pytest.fixture
def bert_training() -> Workload:
    return make()
