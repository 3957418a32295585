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


@pytest.fixture
def bert_training() -> Workload:
    return make()
