"""Load the workload to profile (``reference:NAME`` or ``module:function``) and handle batches.

A user workload is a function that takes a ``torch.device`` and returns ``(batches, step)``:
an iterable of CPU batches (a tensor, or tuples / lists / dicts of tensors) and a callable
that runs one step on a batch already moved to the device. ``module`` is a dotted module
importable from the current directory or ``PYTHONPATH``, or a path to a ``.py`` file.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from probes.reference import REFERENCE, WorkloadKind, compute_dtype

__all__ = [
    "LoadedWorkload",
    "WorkloadLoadError",
    "batch_nbytes",
    "batch_size",
    "is_pinned",
    "load_workload",
    "tensors",
    "to_device",
]


class WorkloadLoadError(ValueError):
    """The ``--workload`` value cannot be loaded; the message says why and what to do."""


@dataclass
class LoadedWorkload:
    name: str
    batches: Iterator[Any]
    step: Callable[[Any], object]
    kind: WorkloadKind | None = None
    precision: str | None = None
    batch_size: int | None = None

    def __post_init__(self) -> None:
        """Peek at the first batch for its size (kept: it is the first one profiled)."""
        try:
            first = next(self.batches)
        except StopIteration:
            raise WorkloadLoadError(f"--workload {self.name}: batches is empty") from None
        self.batch_size = batch_size(first)
        self.batches = itertools.chain([first], self.batches)


def tensors(batch: Any) -> list[torch.Tensor]:
    """Every tensor in a batch (a tensor, or nested tuples / lists / dicts of them)."""
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, dict):
        return [t for v in batch.values() for t in tensors(v)]
    if isinstance(batch, list | tuple):
        return [t for v in batch for t in tensors(v)]
    return []


def to_device(batch: Any, device: torch.device) -> Any:
    """The batch with every tensor on ``device`` (asynchronous from pinned memory)."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=batch.is_pinned())
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(to_device(v, device) for v in batch))
    if isinstance(batch, list | tuple):
        return type(batch)(to_device(v, device) for v in batch)
    return batch


def batch_nbytes(batch: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors(batch))


def batch_size(batch: Any) -> int:
    """Samples in a batch: the first dimension of its first tensor (1 for a scalar)."""
    found = tensors(batch)
    if not found or found[0].dim() == 0:
        return 1
    return max(1, int(found[0].shape[0]))


def is_pinned(batch: Any) -> bool:
    found = tensors(batch)
    return bool(found) and all(t.is_pinned() for t in found if t.device.type == "cpu")


def _import(module: str, spec: str) -> Any:
    if module.endswith(".py"):
        path = Path(module)
        if not path.is_file():
            raise WorkloadLoadError(f"--workload {spec}: no file {path}")
        name = f"_probe_workload_{path.stem}"  # never shadow an installed module
        mod_spec = importlib.util.spec_from_file_location(name, path)
        if mod_spec is None or mod_spec.loader is None:
            raise WorkloadLoadError(f"--workload {spec}: cannot load {path} as Python")
        mod = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = mod
        mod_spec.loader.exec_module(mod)
        return mod
    if sys.path[:1] != [os.getcwd()]:  # as `python -m` does: the current directory first
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise WorkloadLoadError(
            f"--workload {spec}: cannot import {module!r} ({exc}); run from the directory "
            "that holds it, add that directory to PYTHONPATH, or pass path/to/file.py:function"
        ) from exc


def _user(spec: str, device: torch.device) -> LoadedWorkload:
    module, _, func_name = spec.rpartition(":")
    if not module or not func_name:
        raise WorkloadLoadError(
            f"--workload {spec!r}: expected reference:NAME or module:function "
            f"(reference workloads: {', '.join(REFERENCE)})"
        )
    func = getattr(_import(module, spec), func_name, None)
    if not callable(func):
        raise WorkloadLoadError(f"--workload {spec}: {module} has no function {func_name!r}")
    result = func(device)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise WorkloadLoadError(
            f"--workload {spec}: {func_name}(device) must return (batches, step), "
            f"got {type(result).__name__}"
        )
    batches, step = result
    if not isinstance(batches, Iterable) or not callable(step):
        raise WorkloadLoadError(
            f"--workload {spec}: {func_name}(device) must return (an iterable of batches, "
            "a callable step(batch)); check the order of the pair"
        )
    return LoadedWorkload(spec, iter(batches), step)


def load_workload(spec: str, device: torch.device) -> LoadedWorkload:
    """Build the workload named by ``spec`` for ``device``."""
    if spec.startswith("reference:"):
        name = spec.removeprefix("reference:")
        info = REFERENCE.get(name)
        if info is None:
            raise WorkloadLoadError(
                f"--workload {spec}: unknown reference workload; choose one of "
                + ", ".join(f"reference:{n}" for n in REFERENCE)
            )
        batches, step = info.make(device)
        dtype = compute_dtype(device)
        precision = {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, "fp32")
        return LoadedWorkload(spec, iter(batches), step, info.kind, precision)
    return _user(spec, device)
