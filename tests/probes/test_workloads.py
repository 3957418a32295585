"""Loading workloads: the reference ones, ``module:function``, file paths, and bad input."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import pytest
import torch

from probes.reference import REFERENCE
from probes.workloads import (
    WorkloadLoadError,
    batch_nbytes,
    batch_size,
    is_pinned,
    load_workload,
    to_device,
)

CPU = torch.device("cpu")
SAMPLES = "tests.probes.sample_workloads"


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_each_reference_workload_runs_a_step_on_the_cpu(name: str) -> None:
    wl = load_workload(f"reference:{name}", CPU)
    assert wl.kind == REFERENCE[name].kind and wl.precision == "fp32"
    assert wl.batch_size is not None and wl.batch_size >= 1
    wl.step(to_device(next(wl.batches), CPU))


def test_an_unknown_reference_lists_the_known_ones() -> None:
    with pytest.raises(WorkloadLoadError, match="reference:cnn-train"):
        load_workload("reference:bert", CPU)


def test_a_user_function_is_loaded_by_module_and_name() -> None:
    wl = load_workload(f"{SAMPLES}:linear", CPU)
    assert wl.name == f"{SAMPLES}:linear" and wl.batch_size == 16


def test_a_user_function_is_loaded_from_a_file(tmp_path: Path) -> None:
    src = tmp_path / "job.py"
    src.write_text(
        "import itertools, torch\n"
        "def make(device):\n"
        "    return itertools.repeat(torch.ones(4, 2)), lambda b: b.sum()\n"
    )
    assert load_workload(f"{src}:make", CPU).batch_size == 4


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:f", "PYTHONPATH"),
        (f"{SAMPLES}:missing", "has no function 'missing'"),
        (f"{SAMPLES}:not_a_pair", r"must return \(batches, step\)"),
        (f"{SAMPLES}:wrong_order", "check the order"),
        ("justaname", "expected reference:NAME or module:function"),
        ("/nowhere/job.py:make", "no file"),
    ],
)
def test_bad_workloads_say_what_to_do(spec: str, message: str) -> None:
    with pytest.raises(WorkloadLoadError, match=message):
        load_workload(spec, CPU)


def test_empty_batches_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "empty.py"
    src.write_text("def make(device):\n    return [], lambda b: None\n")
    with pytest.raises(WorkloadLoadError, match="batches is empty"):
        load_workload(f"{src}:make", CPU)


def test_batches_keep_their_structure_on_the_way_to_the_device() -> None:
    pair = namedtuple("pair", "x y")
    batch = {"a": pair(torch.ones(3, 2), torch.zeros(3)), "meta": "id", "b": [torch.ones(1)]}
    moved = to_device(batch, CPU)
    assert isinstance(moved["a"], pair) and moved["meta"] == "id"
    assert batch_size(batch) == 3
    assert batch_nbytes(batch) == (6 + 3 + 1) * 4
    assert not is_pinned(batch)
    assert batch_size(torch.tensor(1.0)) == 1
