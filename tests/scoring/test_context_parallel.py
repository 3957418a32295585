"""Context parallelism: long-context training with each sequence split over GPUs.

The scenario is torchtitan's Llama 3.1 8B context-parallel table (pytorch/torchtitan,
benchmarks/llama3_h100_202412_torchtitan.md, Table 2): 8 x H100, FSDP over the data x context
ranks, full checkpointing, sequences of 32k to 262k tokens; CP 1 at 32k, 2 at 65k, 4 at
131k, 8 at 262k.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from recommender import predict
from recommender.catalog import Catalog
from recommender.scoring.context_parallel import (
    Ring,
    context_choices,
    ring_exposed_s,
    ring_kernels_per_forward,
)
from recommender.scoring.shape import shape_of
from recommender.workload import Workload

H100 = "H100-SXM5-80GB"


def _long(tokens: int, **training: Any) -> Workload:
    """Llama 3.1 8B trained on ``tokens``-token sequences, eight per optimizer step."""
    return Workload.model_validate(
        {
            "name": f"llama8b-{tokens}",
            "kind": "training",
            "model": {"name": "llama-3.1-8b", "sequence_length": tokens, "execution": "compiled"},
            "precision": "bf16",
            "batch_size": 1,
            "training": {"global_batch": 8, "sharding": "zero3", **training},
            "data": {"samples": 1e5, "epochs": 1},
        }
    )


def test_auto_tries_context_parallel_only_for_long_fused_training() -> None:
    long, short = _long(65536), _long(8192)
    assert context_choices(long, shape_of(long)) == [1, 2, 4, 8]
    assert context_choices(short, shape_of(short)) == [1]
    eager = _long(65536, attention="eager")
    assert context_choices(eager, shape_of(eager)) == [1]
    pinned = _long(65536, context_parallel=4)
    assert context_choices(pinned, shape_of(pinned)) == [4]


def test_a_sequence_one_gpu_cannot_hold_is_split_over_the_instance(catalog: Catalog) -> None:
    p = predict(_long(131072), H100, 8, catalog=catalog)
    assert p.fits_in_memory and p.plan is not None
    assert p.plan.context_parallel > 1
    assert p.plan.data_parallel * p.plan.context_parallel * p.plan.tensor_parallel == 8
    assert any("context parallel" in a for a in p.plan.assumed)
    # Without it the same job does not fit: 131k tokens of activations on one GPU.
    alone = predict(_long(131072, context_parallel=1, tensor_parallel=1), H100, 8, catalog=catalog)
    assert not alone.fits_in_memory


def test_short_sequences_keep_one_rank_per_sequence(catalog: Catalog) -> None:
    p = predict(_long(8192), H100, 8, catalog=catalog)
    assert p.plan is not None and p.plan.context_parallel == 1


def test_throughput_per_token_falls_with_sequence_length_as_attention_grows(
    catalog: Catalog,
) -> None:
    """Attention FLOPs grow with the square of the sequence: torchtitan's tokens/s per GPU
    fall 3890 -> 2540 -> 1071 -> 548 from 32k to 262k tokens (Table 2)."""
    rates = []
    for tokens in (32768, 65536, 131072, 262144):
        p = predict(_long(tokens), H100, 8, catalog=catalog)
        assert p.fits_in_memory
        rates.append(p.throughput * tokens / 8)
    assert all(b < a for a, b in itertools.pairwise(rates))
    assert 3.0 < rates[0] / rates[-1] < 12.0


def test_a_pinned_degree_is_honoured(catalog: Catalog) -> None:
    p = predict(_long(131072, context_parallel=4), H100, 8, catalog=catalog)
    assert p.plan is not None and p.plan.context_parallel == 4
    assert p.plan.data_parallel == 2 // p.plan.tensor_parallel or p.plan.tensor_parallel == 1


def test_a_pinned_degree_is_honoured_on_several_nodes(catalog: Catalog) -> None:
    w = _long(131072, context_parallel=8)
    w = w.model_copy(update={"training": w.training.model_copy(update={"global_batch": 16})})
    p = predict(w, H100, 8, nodes=4, catalog=catalog)
    assert p.fits_in_memory and p.plan is not None
    assert p.plan.context_parallel == 8
    assert p.plan.data_parallel * 8 * p.plan.tensor_parallel * p.plan.pipeline_parallel == 32


def test_the_ring_is_hidden_by_attention_and_free_without_a_split() -> None:
    w = _long(131072)
    s = shape_of(w)
    one = np.ones(1)

    def ring(cp: float, link: float, attention_s: float) -> float:
        r = Ring(cp=np.full(1, cp), link_bytes_per_s=np.full(1, link), latency_s=np.full(1, 1e-5))
        return float(ring_exposed_s(s, r, one, one, 0 * one, np.full(1, attention_s), 2.0)[0])

    assert ring(1, 100e9, 0.0) == 0.0
    slow, fast = ring(8, 10e9, 0.0), ring(8, 100e9, 0.0)
    assert slow > fast > 0
    assert ring(8, 100e9, 10 * slow) == 0.0  # attention that long hides every send
    assert ring_kernels_per_forward(s, np.array([1.0]))[0] == 0.0
    assert ring_kernels_per_forward(s, np.array([4.0]))[0] == 3 * s.layers * 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"training": {"context_parallel": 3}}, "does not divide"),
        ({"training": {"context_parallel": 2, "attention": "eager"}}, "fused kernel"),
        ({"kind": "inference", "training": {"context_parallel": 2}}, "none to split"),
    ],
)
def test_an_impossible_split_is_refused_naming_the_field(
    change: dict[str, Any], message: str
) -> None:
    spec = _long(65536).model_dump(exclude_none=True)
    spec.pop("training")
    spec.update(change)
    with pytest.raises(ValidationError, match=message):
        Workload.model_validate(spec)
