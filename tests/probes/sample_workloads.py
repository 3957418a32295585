"""User workloads for the probe's tests, in the ``module:function`` form users write.

Each takes a ``torch.device`` and returns ``(batches, step)``. They are tiny so the tests
stay fast on two CPU cores.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import torch

IN, OUT, BATCH = 64, 32, 16


def _pool(n: int = 4) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    items = [(torch.randn(BATCH, IN), torch.zeros(BATCH, dtype=torch.int64)) for _ in range(n)]
    return itertools.cycle(items)


def slow_loader(device: torch.device) -> tuple[Iterator[Any], Any]:
    """Batches take 20 ms each to arrive; the step is a tiny matmul: transfer-bound."""
    w = torch.randn(IN, OUT, device=device)

    def batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for batch in _pool():
            time.sleep(0.02)
            yield batch

    def step(batch: tuple[torch.Tensor, torch.Tensor]) -> None:
        x, _ = batch
        x @ w

    return batches(), step


def heavy_compute(device: torch.device) -> tuple[Iterator[Any], Any]:
    """Batches are ready at once; each step runs ~10 ms of matmuls: compute-bound."""
    a = torch.randn(256, 256, device=device)

    def step(batch: tuple[torch.Tensor, torch.Tensor]) -> None:
        x = a
        for _ in range(24):
            x = torch.tanh(x @ a)

    return _pool(), step


def linear(device: torch.device) -> tuple[Iterator[Any], Any]:
    """One (BATCH x IN) @ (IN x OUT) matmul per step: 2 * IN * OUT FLOPs per sample."""
    w = torch.randn(IN, OUT, device=device)
    return _pool(), lambda batch: batch[0] @ w


def oom_step(device: torch.device) -> tuple[Iterator[Any], Any]:
    """The step fails the way a too-big batch does on a GPU."""

    def step(batch: Any) -> None:
        raise torch.cuda.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 79.10 GiB total capacity)"
        )

    return _pool(), step


def broken_step(device: torch.device) -> tuple[Iterator[Any], Any]:
    def step(batch: Any) -> None:
        raise ValueError("shapes (16,64) and (3,3) not aligned")

    return _pool(), step


def finite(device: torch.device) -> tuple[list[Any], Any]:
    """Only three batches: the profiler must say it needs an endless iterator."""
    return [next(_pool()) for _ in range(3)], lambda batch: None


def wrong_order(device: torch.device) -> tuple[Any, Any]:
    return (lambda batch: None), _pool()


def not_a_pair(device: torch.device) -> Any:
    return _pool()
