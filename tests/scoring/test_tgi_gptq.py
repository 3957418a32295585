"""TGI 1.0's GPTQ kernels in a decode step: its Triton matmuls' serial loop over the input
features, and exllama's fp16 rebuild above eight rows (``tgi_gptq``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from recommender import predict
from recommender.catalog import Catalog
from recommender.scoring.achievable import boost_clocks
from recommender.scoring.kernel_costs import CUDA_GRAPH_KERNEL_S, cycle_s
from recommender.scoring.tgi_gptq import (
    EXLLAMA_RECONSTRUCT_BYTES,
    TRITON_GPTQ_CYCLES_PER_INPUT,
    TRITON_LAUNCH_S,
    exllama_rebuild_bytes,
    triton_loops_s,
)
from recommender.workload import Workload

# fxmarty/q4f16-gemm-gemv-benchmark README: GPTQ-for-LLaMa's Triton kernel, 1 x 8192 by
# 8192 x 8192, on an A10G (the A100's figure is the one the constant is derived from)
A10G_TRITON_GPTQ_S = 0.1746e-3


def _serve(model: str, execution: str, batch: int, weights: str = "int4") -> Workload:
    inference: dict[str, Any] = {"prompt_tokens": 233, "output_tokens": 50, "weights": weights}
    return Workload.model_validate(
        {
            "name": "serve",
            "kind": "inference",
            "model": {"name": model, "execution": execution},
            "precision": "fp16",
            "batch_size": batch,
            "inference": inference,
        }
    )


def _cycle(kernel_s: float) -> np.ndarray:
    """The cycle length of a die whose replayed kernel costs ``kernel_s``."""
    return cycle_s(np.array([kernel_s]))


def test_the_triton_loops_cycles_hold_on_a_second_die() -> None:
    """The cycles per input feature, taken from the A100's time, give the A10G's measured
    time at its own boost clock within 5 %: the loop is a count of the die's cycles."""
    a10g_hz = boost_clocks()["A10G"].mhz * 1e6
    predicted = TRITON_GPTQ_CYCLES_PER_INPUT * 8192 / a10g_hz
    assert predicted == pytest.approx(A10G_TRITON_GPTQ_S, rel=0.05)


def test_a_long_triton_loop_costs_beyond_its_launch() -> None:
    """Llama 2 70B (8,192 features, 80 layers) on an A100: each of the two Triton matmuls a
    layer runs 204 us, 104 beyond its launch; Llama 2 7B's 4,096-feature loop (102 us) all but
    hides behind the 100 us launch. A CUDA-graph engine and fp16 weights pay nothing."""
    a100 = _cycle(CUDA_GRAPH_KERNEL_S)  # the reference die: 1,410 MHz
    assert a100[0] == pytest.approx(1.0 / 1410e6)
    loop_70b = TRITON_GPTQ_CYCLES_PER_INPUT * 8192 / 1410e6
    assert loop_70b == pytest.approx(0.2038e-3)
    big = triton_loops_s(_serve("llama-2-70b", "eager", 8), "eager", 80, 8192, a100)
    assert big[0] == pytest.approx(80 * 2 * (loop_70b - TRITON_LAUNCH_S))
    small = triton_loops_s(_serve("llama-2-7b", "eager", 8), "eager", 32, 4096, a100)
    assert small[0] < 0.2e-3
    graphs = _serve("llama-2-70b", "compiled", 8)
    assert triton_loops_s(graphs, "compiled", 80, 8192, a100)[0] == 0.0
    fp16 = _serve("llama-2-70b", "eager", 8, weights="fp16")
    assert triton_loops_s(fp16, "eager", 80, 8192, a100)[0] == 0.0
    # a faster clock runs the same loop in fewer seconds
    fast = _cycle(CUDA_GRAPH_KERNEL_S * 1410 / 1710)
    assert triton_loops_s(_serve("llama-2-70b", "eager", 8), "eager", 80, 8192, fast)[0] < big[0]


def test_exllama_rebuilds_its_matrices_above_eight_rows() -> None:
    """Above 8 rows the row-parallel O and down projections are rebuilt in fp16: Llama 2 7B's
    32 x 4,096 x (4,096 + 11,008) weights, 4 bytes each, on every step."""
    w = _serve("llama-2-7b", "eager", 16)
    rows = np.array([1.0, 8.0, 9.0, 20.0])
    rebuilt = exllama_rebuild_bytes(w, "eager", rows)
    expected = 32 * 4096 * (4096 + 11008) * EXLLAMA_RECONSTRUCT_BYTES
    assert rebuilt.tolist() == [0.0, 0.0, pytest.approx(expected), pytest.approx(expected)]
    assert not exllama_rebuild_bytes(_serve("llama-2-7b", "compiled", 16), "compiled", rows).any()
    fp16 = _serve("llama-2-7b", "eager", 16, weights="fp16")
    assert not exllama_rebuild_bytes(fp16, "eager", rows).any()


def test_an_eager_gptq_step_slows_past_eight_sequences(catalog: Catalog) -> None:
    """From 8 to 9 sequences TGI 1.0's int4 step takes the rebuild's extra traffic (7.9 GB
    for Llama 2 7B, over 4.5 ms on an A100); a CUDA-graph engine's grows by one sequence's KV
    and host time (under 1 ms)."""

    def tpot(execution: str, batch: int) -> float:
        p = predict(_serve("llama-2-7b", execution, batch), "A100", 1, catalog=catalog)
        assert p.plan is not None and p.plan.tpot_ms is not None
        return p.plan.tpot_ms

    assert tpot("eager", 9) - tpot("eager", 8) > 4.5
    assert tpot("compiled", 9) - tpot("compiled", 8) < 1.0
