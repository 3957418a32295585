"""scoring.serving with ``inference.pipeline_parallel``: a model's layers split over the GPUs
of one instance (llama.cpp's ``--split-mode layer``), each stage in turn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from recommender import predict, recommend
from recommender.catalog import Catalog
from recommender.scoring.calibration import default_calibration
from recommender.scoring.explain import UNCAPTURED_SPLIT_ADVICE, bottleneck_advice
from recommender.scoring.issue_rate import kernels_of, runtime_bandwidth_cap
from recommender.scoring.kernel_costs import EAGER_LAUNCH_S
from recommender.scoring.serving_step import (
    LLAMA_CPP_UNCAPTURED_LAYER_S,
    Rates,
    stage_handoff_s,
)
from recommender.workload import Workload

from .conftest import single_stream_decode


def _decode(model: str, weights: str = "int4", **inference: Any) -> Workload:
    return single_stream_decode(model, weights, **inference)


def test_layers_split_over_gpus_hold_a_model_no_single_gpu_can(catalog: Catalog) -> None:
    """Llama 3 70B in int4 is ~37 GB of weights: no 24 GB L4 holds it, four L4s with a quarter
    of the layers each do. A token still passes all 80 layers in turn, so it decodes at the
    rate one GPU would stream the whole model (no faster for the four), less the hand-offs."""
    alone = predict(_decode("llama-3-70b"), "L4", 1, catalog=catalog)
    split = predict(_decode("llama-3-70b", pipeline_parallel=4), "L4", 4, catalog=catalog)
    assert not alone.fits_in_memory
    assert split.fits_in_memory and split.plan is not None
    assert split.plan.pipeline_parallel == 4 and split.plan.tensor_parallel == 1
    assert split.plan.data_parallel == 1
    assert split.plan.memory_gb["weights"] == pytest.approx(alone.plan.memory_gb["weights"] / 4)
    # what one GPU would take if it held the model (a plan that does not fit keeps its figures)
    assert alone.step_time_s < split.step_time_s < 1.03 * alone.step_time_s


def test_each_hand_off_costs_a_copy_and_an_exposed_launch(catalog: Catalog) -> None:
    """An 8B model that one GPU holds runs a little slower split over more GPUs: each of the
    ``stages - 1`` hand-offs adds the link's latency, the activations' copy and one launch."""
    rates = [
        predict(_decode("llama-3-8b", pipeline_parallel=n), "L4", n, catalog=catalog)
        for n in (1, 2, 4)
    ]
    assert all(p.fits_in_memory for p in rates)
    per_token = [1.0 / (p.throughput * 512) for p in rates]
    hop = (per_token[1] - per_token[0], (per_token[2] - per_token[0]) / 3)
    assert hop[0] == pytest.approx(hop[1], rel=1e-6)
    assert EAGER_LAUNCH_S < hop[0] < 2 * EAGER_LAUNCH_S
    r = Rates(
        flops=np.array([1e14]),
        bandwidth=np.array([3e11]),
        link=np.array([2.5e10]),
        allreduce_step_s=np.array([2.8e-6]),
        supported=np.array([True]),
    )
    handoff = stage_handoff_s(r, 1.0, 4096.0)
    assert float(handoff[0]) == pytest.approx(2.8e-6 + 4096 * 2 / 2.5e10 + EAGER_LAUNCH_S)


def test_a_continuous_batching_pipeline_keeps_every_stage_busy(catalog: Catalog) -> None:
    """At 16 concurrent requests over 4 stages, a continuous-batching engine (vLLM) runs four
    micro-batches of 4, each stage working on one of them at a time; a static batch passes the
    stages as one, each stage idle while the others work. Prefill (4,096-token prompts, 8
    output tokens) is compute-bound, so the micro-batches' overlap makes the first ~4x faster;
    a memory-bound decode (short prompts, long outputs) re-reads each stage's weights for every
    micro-batch, so the overlap buys nothing and both rates agree."""

    def serve(engine: str, prompt: int, output: int) -> float:
        w = _decode(
            "llama-3-8b",
            "bf16",
            pipeline_parallel=4,
            engine=engine,
            max_batch=16,
            prompt_tokens=prompt,
            output_tokens=output,
            max_output_tokens=output,
        )
        assert w.inference is not None
        pinned = {"batch_size": 16, "model": w.model.model_copy(update={"execution": "compiled"})}
        return predict(w.model_copy(update=pinned), "L4", 4, catalog=catalog).throughput

    assert serve("continuous", 4096, 8) > 3.0 * serve("static", 4096, 8)
    assert serve("continuous", 16, 512) == pytest.approx(serve("static", 16, 512), rel=0.05)


def test_stages_must_fit_the_instances_gpus(catalog: Catalog) -> None:
    """Four stages need four GPUs per copy: two L4s hold no whole copy, and the prediction says
    so instead of blaming memory; ``recommend`` counts such offers under that reason."""
    one = predict(_decode("llama-3-8b", pipeline_parallel=4), "L4", 2, catalog=catalog)
    assert not one.fits_in_memory
    assert one.notes[0].startswith("does not fit: one model copy spans 4 GPUs")
    fix = "run on a multiple of 4 GPUs, or pin fewer tensor / pipeline stages"
    assert one.memory.remedies == [fix]
    ranked = recommend(_decode("llama-3-8b", pipeline_parallel=4), catalog=catalog, top=3)
    assert ranked.picks and all(p.gpus % 4 == 0 for p in ranked.picks)
    assert all(p.plan is not None and p.plan.pipeline_parallel == 4 for p in ranked.picks)
    reason = "no whole model copy: one spans 4 GPUs (inference.tensor_parallel x pipeline_parallel)"
    assert ranked.excluded[reason] > 0
    two_copies = predict(
        _decode("llama-3-8b", "bf16", pipeline_parallel=2).model_copy(update={"batch_size": 2}),
        "L4",
        4,
        catalog=catalog,
    )
    assert two_copies.fits_in_memory and two_copies.plan is not None
    assert two_copies.plan.data_parallel == 2 and two_copies.plan.pipeline_parallel == 2
    for bad in (0, 17):
        with pytest.raises(ValidationError, match="pipeline_parallel"):
            _decode("llama-3-8b", pipeline_parallel=bad)


def test_a_2024_llama_cpp_launches_a_split_models_kernels_one_by_one(catalog: Catalog) -> None:
    """llama.cpp builds of May 2024 - May 2025 replay the decode as a CUDA graph on one GPU
    only: split over GPUs, each token's kernels launch from the host, 27.3 us a layer (the
    difference ggml-org/llama.cpp#6763 times on an H100 PCIe server: 143.35 tokens/s launched,
    163.83 replayed, for the 32-layer Llama 2 7B in Q4_K_M). On one GPU the dated build decodes
    as today's; over four, each token is 32 layers' launches slower, and the plan advises the
    newer build."""

    def per_token(runtime: str, gpus: int) -> float:
        w = _decode("llama-3-8b", pipeline_parallel=gpus, runtime=runtime)
        p = predict(w, "L4", gpus, catalog=catalog)
        assert p.fits_in_memory
        return 1.0 / (p.throughput * 512)

    launched = 1.0 / (1.0 / 163.83 + 32 * LLAMA_CPP_UNCAPTURED_LAYER_S)  # #6763's H100 PCIe
    assert launched == pytest.approx(143.35)
    assert per_token("llama.cpp-2024", 1) == pytest.approx(per_token("llama.cpp", 1), rel=1e-9)
    extra = per_token("llama.cpp-2024", 4) - per_token("llama.cpp", 4)
    assert extra == pytest.approx(32 * LLAMA_CPP_UNCAPTURED_LAYER_S, rel=1e-6)
    for runtime, gpus, advised in (("llama.cpp-2024", 4, True), ("llama.cpp-2024", 1, False),
                                   ("llama.cpp", 4, False)):  # fmt: skip
        w = _decode("llama-3-8b", pipeline_parallel=gpus, runtime=runtime)
        assert (UNCAPTURED_SPLIT_ADVICE in bottleneck_advice(w, "memory-bandwidth", 1.0)) is advised


def test_a_dated_llama_cpp_build_runs_the_same_kernels(catalog: Catalog) -> None:
    """``llama.cpp-2024`` differs from ``llama.cpp`` in how it launches its decode kernels,
    not in them: both are held to the calibration's one bytes-per-SM-cycle limit, which a fit
    on either's rows moves alike."""
    assert kernels_of("llama.cpp-2024") == kernels_of("llama.cpp") == "llama.cpp"
    assert kernels_of(None) == "" and kernels_of("vllm-v0") == "vllm-v0"
    accs = [catalog.accelerator("A100-SXM4-80GB"), catalog.accelerator("L4")]
    cal = default_calibration()
    dated = runtime_bandwidth_cap(accs, "llama.cpp-2024", cal)
    assert np.all(np.isfinite(dated[:1]))
    np.testing.assert_array_equal(dated, runtime_bandwidth_cap(accs, "llama.cpp", cal))


def test_a_2024_llama_cpp_captures_no_graph_below_ampere(catalog: Catalog) -> None:
    """Those builds also capture no graph below compute capability 8.0 ("disabling CUDA graphs
    due to GPU architecture"): on one T4 (Turing) the dated build pays the launches that an
    A10G (Ampere) does not; today's build captures on both."""

    def per_token(runtime: str, acc: str) -> float:
        p = predict(_decode("llama-3-8b", runtime=runtime), acc, 1, catalog=catalog)
        assert p.fits_in_memory
        return 1.0 / (p.throughput * 512)

    launches = 32 * LLAMA_CPP_UNCAPTURED_LAYER_S
    t4 = per_token("llama.cpp-2024", "T4") - per_token("llama.cpp", "T4")
    assert t4 == pytest.approx(launches, rel=1e-6)
    assert per_token("llama.cpp-2024", "A10G") == pytest.approx(per_token("llama.cpp", "A10G"))


def test_an_offer_with_too_few_gpus_for_the_split_is_not_a_memory_misfit(
    catalog: Catalog,
) -> None:
    """Llama 3 70B in int4 pinned to two stages leaves out every 1-GPU offer for its GPU
    count: its per-GPU need (a half of the weights) fits an 80-96 GB card, so the memory
    advice must not read that as a host that cannot hold an offloaded optimizer (an inference
    workload has none); it names an offer that has the GPUs and still lacks the memory."""
    r = recommend(_decode("llama-3-70b", pipeline_parallel=2), catalog=catalog, top=3)
    assert r.picks
    assert not any("optimizer" in line for line in r.advice)
    misfit = [line for line in r.advice if line.startswith("Does not fit")]
    assert all(" 1 x " not in line for line in misfit)
