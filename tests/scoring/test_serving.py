"""scoring.serving: continuous batching, KV room, TTFT/TPOT targets, formats, MoE reads."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from recommender import predict, recommend
from recommender.catalog import Catalog
from recommender.scoring.calibration import default_calibration
from recommender.scoring.queueing import poisson_quantile
from recommender.scoring.serving import request_timing
from recommender.scoring.serving_step import VLLM_V0_STEP_S, engine_step_s
from recommender.workload import Workload


def _serve(model: str, **extra: Any) -> Workload:
    spec: dict[str, Any] = {
        "name": "serve",
        "kind": "inference",
        "model": {"name": model},
        "precision": "bf16",
        "inference": {"prompt_tokens": 1024, "output_tokens": 256},
    }
    for key, value in extra.items():
        spec[key] = {**spec.get(key, {}), **value} if isinstance(value, dict) else value
    return Workload.model_validate(spec)


def test_llama_3_70b_at_50_tokens_per_s_per_user_runs_tp8_on_8_h100(catalog: Catalog) -> None:
    w = _serve("llama-3-70b", targets={"tpot_ms": 20})  # 50 tokens/s per user
    p = predict(w, "H100-SXM5-80GB", 8, catalog=catalog)
    assert p.fits_in_memory
    assert p.plan is not None
    assert p.plan.tensor_parallel == 8
    assert p.plan.tpot_ms is not None and p.plan.tpot_ms <= 20
    feasible = recommend(w, catalog=catalog, top=3)
    assert feasible.picks


def test_concurrency_is_bounded_by_the_kv_cache_room(catalog: Catalog) -> None:
    # 8B bf16 = 16 GB of weights; the rest of an 80 GB H100 holds KV blocks of
    # 131,072 B/token x 1,280 tokens = 168 MB per sequence; 24 GB L4 holds far fewer.
    w = _serve("llama-3-8b")
    big = predict(w, "H100-SXM5-80GB", 1, catalog=catalog)
    small = predict(w, "L4", 1, catalog=catalog)
    assert big.plan is not None and small.plan is not None
    assert big.plan.concurrency is not None and small.plan.concurrency is not None
    assert small.plan.concurrency < big.plan.concurrency
    kv_per_seq = 131_072 * (1024 + 256)
    assert small.plan.concurrency * kv_per_seq < 24 * 2**30 - 16e9


def test_a_pinned_concurrency_beyond_the_kv_room_queues_instead_of_failing(
    catalog: Catalog,
) -> None:
    """64 clients against an 8B bf16 model on a 24 GB L4: the KV room holds a few of them
    (vLLM admits a request only when its blocks fit), the rest wait, and their wait shows in
    TTFT. Throughput is that of the batch that runs (every sequence the room holds, at least
    the planner's own pick of a power of two), not 'does not fit'."""
    pinned = predict(_serve("llama-3-8b", batch_size=64), "L4", 1, catalog=catalog)
    free = predict(_serve("llama-3-8b"), "L4", 1, catalog=catalog)
    assert pinned.fits_in_memory and pinned.plan is not None and free.plan is not None
    running = pinned.plan.concurrency
    assert running is not None and 1 <= running < 64
    kv_per_seq = 131_072 * (1024 + 256)
    assert running * kv_per_seq < 24 * 2**30 - 16e9
    assert any("wait for KV-cache room" in a for a in pinned.plan.assumed)
    assert (pinned.plan.ttft_ms or 0) > 10 * (free.plan.ttft_ms or 0)
    assert running >= (free.plan.concurrency or 0)
    assert (free.tokens_per_s or 0) <= (pinned.tokens_per_s or 0) < 2 * (free.tokens_per_s or 0)


def test_a_tpot_target_trades_concurrency_for_latency(catalog: Catalog) -> None:
    loose = predict(_serve("llama-3-8b"), "H100", 1, catalog=catalog)
    tight = predict(_serve("llama-3-8b", targets={"tpot_ms": 15}), "H100", 1, catalog=catalog)
    assert loose.plan is not None and tight.plan is not None
    assert (tight.plan.concurrency or 0) < (loose.plan.concurrency or 0)
    assert (tight.tokens_per_s or 0) < (loose.tokens_per_s or 0)
    assert (tight.plan.tpot_ms or 99) <= 15


def test_int4_weights_halve_what_bf16_needs(catalog: Catalog) -> None:
    bf16 = predict(_serve("llama-3-70b"), "H100", 2, catalog=catalog)
    int4 = predict(_serve("llama-3-70b", inference={"weights": "int4"}), "H100", 1, catalog=catalog)
    assert not predict(_serve("llama-3-70b"), "H100", 1, catalog=catalog).fits_in_memory
    assert int4.fits_in_memory and bf16.fits_in_memory
    assert int4.plan is not None and int4.plan.memory_gb["weights"] < 40


def test_a_checkpoints_own_bits_per_weight_size_and_pace_its_decode(catalog: Catalog) -> None:
    # llama.cpp's Q4_K_M GGUF of Llama 3 8B is 4.58 GB against 14.96 GB in f16: 4.9 bits a
    # weight, not AWQ's 4.25. Batch-1 decode streams the weights, so it is that much slower.
    one = {"inference": {"max_batch": 1, "weights": "int4"}, "batch_size": 1}
    awq = predict(_serve("llama-3-8b", **one), "L40S", 1, catalog=catalog)
    gguf = _serve("llama-3-8b", **{**one, "inference": {**one["inference"], "weight_bits": 4.9}})
    q4km = predict(gguf, "L40S", 1, catalog=catalog)
    assert awq.plan is not None and q4km.plan is not None
    assert q4km.plan.memory_gb["weights"] == pytest.approx(
        awq.plan.memory_gb["weights"] * 4.9 / 4.25, rel=0.01
    )
    assert q4km.throughput < awq.throughput
    assert q4km.throughput > awq.throughput * 4.25 / 4.9 * 0.95
    with pytest.raises(ValueError, match="weight_bits"):
        _serve("llama-3-8b", inference={"weight_bits": 0})


def test_fp4_weights_only_where_the_chip_has_fp4(catalog: Catalog) -> None:
    w = _serve("llama-3-8b", inference={"weights": "fp4"})
    assert not predict(w, "H100", 1, catalog=catalog).fits_in_memory
    b200 = catalog.accelerator("B200")
    if getattr(b200.peak_tflops, "fp4", None):
        assert predict(w, "B200", 1, catalog=catalog).fits_in_memory


def test_moe_decode_reads_active_experts_but_holds_all(catalog: Catalog) -> None:
    # Mixtral 8x7B holds 46.7 B parameters but reads ~12.9 B per token at batch 1.
    tp2 = {"tensor_parallel": 2}
    mixtral = _serve("mixtral-8x7b", batch_size=1, inference=tp2)
    dense = _serve("llama-2-13b", batch_size=1, inference=tp2)
    m = predict(mixtral, "H100", 2, catalog=catalog)
    d = predict(dense, "H100", 2, catalog=catalog)
    assert m.plan is not None and m.plan.memory_gb["weights"] > 40  # all experts, TP 2
    # Both are bandwidth-bound at batch 1: time per token follows bytes read (~13 B each).
    assert m.plan.tpot_ms == pytest.approx(d.plan.tpot_ms if d.plan else 0, rel=0.2)


def _transcribe(**extra: Any) -> Workload:
    """Whisper large-v3 transcribing ~30 s clips: the decoder's 4-token forced prefix and a
    75-token transcript (MLPerf Inference's LibriSpeech set)."""
    return _serve(
        "whisper-large-v3",
        precision="fp16",
        inference={"prompt_tokens": 4, "output_tokens": 75},
        **extra,
    )


def test_an_encoder_decoder_generates_from_its_encoders_fixed_source() -> None:
    """Whisper's encoder runs its 1,500 audio frames once per request, whatever the prompt;
    each decode step runs the 32 decoder layers only, and reads K and V of every frame in
    every one of them: 2 x 32 layers x 1,280 x 1,500 x 2 B = 245.76 MB per sequence."""
    from recommender.scoring.shape import shape_of

    enc = shape_of(_transcribe()).encoder
    assert enc is not None
    assert enc.source_tokens == 1500 and enc.decoder_prompt_tokens == 4
    assert enc.decoder_layers == 32
    assert enc.cross_kv_bytes_16 == 2 * 32 * 1280 * 1500 * 2
    # decoder blocks and the (tied) output head: ~906 M of the 1.55 B weights
    assert 0.85e9 < enc.decode_parameters < 0.95e9
    # the encoder over 1,500 frames, ~2.2 TFLOP of matrices (2 x 635 M x 1,500 + cross K/V)
    assert 2.0e12 < enc.matmul_flops < 2.4e12
    # T5 reads its prompt with the encoder and starts decoding from one token
    t5 = shape_of(_serve("t5-11b", inference={"prompt_tokens": 512, "output_tokens": 64}))
    assert t5.encoder is not None
    assert t5.encoder.source_tokens == 512 and t5.encoder.decoder_prompt_tokens == 1
    assert shape_of(_serve("llama-3-8b")).encoder is None
    # a mixture-of-experts decoder: a step streams every expert, a token multiplies one
    switch = {
        "type": "encoder-decoder", "layers": 12, "hidden_size": 768, "heads": 12,
        "intermediate_size": 3072, "vocab_size": 32128, "experts": 8, "experts_per_token": 1,
    }  # fmt: skip
    w = Workload.model_validate(
        {
            "name": "moe",
            "kind": "inference",
            "model": {"family": "transformer", "architecture": switch},
            "precision": "bf16",
            "inference": {"prompt_tokens": 256, "output_tokens": 32},
        }
    )
    moe = shape_of(w).encoder
    assert moe is not None
    expert = 2 * 768 * 3072
    assert moe.decode_parameters - moe.decode_active_parameters == 12 * 7 * expert


def test_vllms_v0_engine_pays_its_host_loop_between_decode_steps(catalog: Catalog) -> None:
    """vLLM's V0 engine (0.10's fallback for Whisper) leaves the GPU idle ~4 ms between decode
    steps (``VLLM_V0_STEP_S``, vllm-project/vllm#6854) where a V1 engine's captured step takes
    the calibration's 1 ms: one transcript at a time, each of its steps is 3 ms longer, and
    the plan names the 4 ms. Other runtimes, and an eager V0 loop, keep the calibration's."""
    request = {"prompt_tokens": 4, "output_tokens": 75}
    v1 = _serve("whisper-large-v3", precision="fp16", batch_size=1, inference=request)
    v0 = _serve(
        "whisper-large-v3", precision="fp16", batch_size=1,
        inference={**request, "runtime": "vllm-v0"},
    )  # fmt: skip
    cal = default_calibration()
    assert engine_step_s(v0, "compiled", cal) == VLLM_V0_STEP_S == pytest.approx(4e-3)
    assert engine_step_s(v1, "compiled", cal) == cal.serving_step_s["compiled"]
    # with --enforce-eager every kernel launches from Python: the eager loop's cost stands
    assert engine_step_s(v0, "eager", cal) == cal.serving_step_s["eager"]
    old, new = predict(v0, "L4", 1, catalog=catalog), predict(v1, "L4", 1, catalog=catalog)
    assert old.plan is not None and new.plan is not None
    gap = (VLLM_V0_STEP_S - cal.serving_step_s["compiled"]) * 1e3
    assert (old.plan.tpot_ms or 0) - (new.plan.tpot_ms or 0) == pytest.approx(gap, rel=0.05)
    said = [a for a in old.plan.assumed if "host loop" in a]
    assert len(said) == 1 and "4 ms a step" in said[0]
    assert old.throughput < new.throughput


def test_cross_attention_kv_bounds_an_encoder_decoders_batch(catalog: Catalog) -> None:
    """The ~246 MB of cross-attention K and V per Whisper sequence, not the decoder's own
    ~13 MB of self-attention cache, is what fills a 24 GB L4: the batch stays below a
    hundred sequences, and decoding is bandwidth-bound."""
    p = predict(_transcribe(), "L4", 1, catalog=catalog)
    assert p.fits_in_memory and p.plan is not None
    running = p.plan.concurrency
    assert running is not None and running >= 1
    per_sequence = 2 * 32 * 1280 * (1500 + 79) * 2
    assert running * per_sequence < 24 * 2**30
    assert p.bottleneck == "memory-bandwidth"
    # the same GPU-time on the H100 (3.35 vs 0.3 TB/s) transcribes many times faster
    fast = predict(_transcribe(), "H100-SXM5-80GB", 1, catalog=catalog)
    assert (fast.throughput or 0) > 5 * (p.throughput or 0)


def test_a_tensor_parallel_prefill_all_reduces_the_whole_prompt() -> None:
    """Megatron-style tensor parallelism all-reduces each layer's output twice for every token
    it processes: a decode step sends one token per sequence, a prefill its whole prompt. For
    Llama-3-8B's 4,096-token prompt split 4 ways over a 25 GB/s PCIe link that is 64 x 16 MB
    rings (3/2 of each over the link): ~60 ms on top of a quarter of the arithmetic."""
    import numpy as np

    from recommender.scoring import serving_step
    from recommender.scoring.shape import shape_of
    from recommender.scoring.step_time import (
        ALLREDUCE_STEP_LATENCY_NVLINK_S,
        ALLREDUCE_STEP_LATENCY_PCIE_S,
    )

    s = shape_of(_serve("llama-3-8b", inference={"prompt_tokens": 4096}))
    cal = default_calibration()

    def rates(link: float, nvlink: bool) -> serving_step.Rates:
        one = np.ones(1)
        step = ALLREDUCE_STEP_LATENCY_NVLINK_S if nvlink else ALLREDUCE_STEP_LATENCY_PCIE_S
        return serving_step.Rates(
            flops=one * 300e12,
            bandwidth=one * 2e12,
            link=one * link,
            allreduce_step_s=one * step,
            supported=np.array([True]),
        )

    alone = serving_step.prefill(s, rates(25e9, False), np.ones(1), 4096.0, cal)[0]
    pcie = serving_step.prefill(s, rates(25e9, False), np.full(1, 4.0), 4096.0, cal)[0]
    nvlink = serving_step.prefill(s, rates(450e9, True), np.full(1, 4.0), 4096.0, cal)[0]
    message = 4096 * 4096 * 2.0
    ring = 2 * 32 * (1.5 * message / 25e9)
    latency = 3.6e-6 + 2 * 3 * (42.6e-6 - 3.6e-6) / 14  # NCCL's ring over 4 ranks, PCIe
    assert pcie == pytest.approx(alone / 4 + ring + 2 * 32 * latency, rel=1e-6)
    assert alone / 4 < nvlink < pcie


def test_a_serving_plan_says_which_request_shape_it_took_from_the_defaults(
    catalog: Catalog,
) -> None:
    """The rate depends on the prompt and output lengths; when the recipe leaves them to the
    defaults the plan says so, and says nothing when both are stated."""
    stated = predict(_serve("llama-3-8b"), "H100-SXM5-80GB", 1, catalog=catalog).plan
    assert stated is not None
    assert not any("per request (the default" in a for a in stated.assumed)

    spec = _serve("llama-3-8b").model_dump(exclude_unset=True)
    spec["inference"] = {"output_tokens": 128}
    partly = predict(Workload.model_validate(spec), "H100-SXM5-80GB", 1, catalog=catalog).plan
    assert partly is not None
    said = [a for a in partly.assumed if "per request (the default" in a]
    assert said == [
        "512 prompt tokens per request (the default: the recipe does not say; state "
        "inference.prompt_tokens / output_tokens for your traffic)"
    ]


def _compiled(precision: str, **inference: Any) -> Workload:
    return Workload.model_validate(
        {
            "name": "decode",
            "kind": "inference",
            "model": {"name": "llama-2-7b", "execution": "compiled"},
            "precision": precision,
            "batch_size": 1,
            "inference": {"max_batch": 1, **inference},
        }
    )


def test_int8_dynamic_activation_decode_says_what_the_model_misses(catalog: Catalog) -> None:
    # torchao's int8dq at batch 1 ran 10-18x below the int8 roofline in its own benchmark:
    # the prediction keeps the roofline but says so, and names the recipe that delivers it.
    int8dq = _compiled("int8")
    p = predict(int8dq, "A100-SXM4-80GB", 1, catalog=catalog)
    assert any("int8 dynamic quantisation" in n for n in p.notes)
    r = recommend(int8dq, catalog=catalog, top=1)
    assert any("int8 weight-only" in a for a in r.advice)
    weight_only = predict(_compiled("bf16", weights="int8"), "A100", 1, catalog=catalog)
    assert not any("dynamic quantisation" in n for n in weight_only.notes)


def test_random_arrivals_keep_slots_free_for_the_ttft_tail(catalog: Catalog) -> None:
    # A 99th-percentile TTFT under Poisson arrivals (MLPerf's Server scenario) caps how busy
    # the slots may be: a long request holds its slot for the whole decode, so the rate falls
    # below the always-full (Offline) rate; the plan says why. A pinned concurrency is a
    # closed loop of clients and keeps the full rate.
    targets = {"ttft_ms": 2000.0}
    full = predict(_serve("llama-3-70b", targets=targets), "H100-SXM5-80GB", 8, catalog=catalog)
    tail = _serve("llama-3-70b", targets={**targets, "latency_percentile": 99.0})
    server = predict(tail, "H100-SXM5-80GB", 8, catalog=catalog)
    assert 0.5 * full.throughput < server.throughput < full.throughput
    assert server.plan is not None
    assert any("arriving at random" in a for a in server.plan.assumed)
    pinned = _serve("llama-3-70b", targets={**targets, "latency_percentile": 99.0}, batch_size=32)
    closed = _serve("llama-3-70b", targets=targets, batch_size=32)
    a = predict(pinned, "H100-SXM5-80GB", 8, catalog=catalog)
    b = predict(closed, "H100-SXM5-80GB", 8, catalog=catalog)
    assert a.throughput == pytest.approx(b.throughput)


def test_a_ttft_tail_no_occupancy_meets_reports_the_full_rate_and_misses(catalog: Catalog) -> None:
    # A TTFT limit shorter than the prefill itself: no occupancy holds it, so the plan misses
    # its targets and reports what full slots would reach, as a missed TPOT target does.
    w = _serve("llama-3-70b", targets={"ttft_ms": 1.0, "latency_percentile": 99.0})
    p = predict(w, "H100-SXM5-80GB", 8, catalog=catalog)
    mean = predict(_serve("llama-3-70b", targets={"ttft_ms": 1.0}), "H100", 8, catalog=catalog)
    assert p.throughput > 0
    assert p.throughput == pytest.approx(mean.throughput)
    assert p.plan is not None
    assert not any("arriving at random" in a for a in p.plan.assumed)


def test_an_offer_whose_plan_misses_the_ttft_or_tpot_target_is_not_picked(catalog: Catalog) -> None:
    # A plan that meets no latency target is still reported for predict (what it would reach),
    # but recommend leaves the offer out and says why, as it does for a missed p95 latency.
    impossible = _serve("llama-3-8b", targets={"tpot_ms": 0.01})
    r = recommend(impossible, catalog=catalog, top=3)
    assert not r.picks
    assert r.excluded.get("misses the TTFT / TPOT target", 0) > 0
    assert any("TTFT / TPOT" in a for a in r.advice)
    reachable = recommend(_serve("llama-3-8b", targets={"tpot_ms": 50.0}), catalog=catalog, top=3)
    assert reachable.picks
    assert all(p.plan is not None and (p.plan.tpot_ms or 0) <= 50.0 for p in reachable.picks)


def test_a_pinned_concurrency_is_the_instances_clients_spread_over_its_copies(
    catalog: Catalog,
) -> None:
    """One client against 8 x H100 serving an 8B model one copy per GPU keeps one copy busy:
    the instance generates what one GPU does for one sequence, not eight times that (the
    load test's clients are the deployment's, not each replica's). Sixteen clients keep every
    copy busy with two each."""
    tp1 = {"tensor_parallel": 1}
    one_client = predict(
        _serve("llama-3-8b", batch_size=1, inference=tp1), "H100-SXM5-80GB", 8, catalog=catalog
    )
    one_gpu = predict(
        _serve("llama-3-8b", batch_size=1, inference=tp1), "H100-SXM5-80GB", 1, catalog=catalog
    )
    assert one_client.plan is not None and one_client.plan.data_parallel == 8
    assert one_client.plan.concurrency == 1
    assert one_client.throughput == pytest.approx(one_gpu.throughput, rel=1e-6)
    many = predict(
        _serve("llama-3-8b", batch_size=16, inference=tp1), "H100-SXM5-80GB", 8, catalog=catalog
    )
    two_each = predict(
        _serve("llama-3-8b", batch_size=2, inference=tp1), "H100-SXM5-80GB", 1, catalog=catalog
    )
    assert many.plan is not None and many.plan.concurrency == 2
    assert many.throughput == pytest.approx(8 * two_each.throughput, rel=1e-6)
    assert any("16 concurrent requests spread over 8" in a for a in many.plan.assumed)


def test_a_static_batch_decodes_until_its_longest_output_ends(catalog: Catalog) -> None:
    """Static batches (TensorRT-LLM with in-flight batching off, a Python generate loop) keep
    finished sequences padded along until the longest ends: with a 150-token cap on outputs
    of 75 tokens on average, a batch runs 150 decode steps, not 75, so it serves fewer
    requests per second than continuous batching at the same batch; with outputs of one
    length (no cap) both run the same steps. Its prefills run together before the first
    token, so TPOT is one decode step."""
    shape = {"prompt_tokens": 512, "output_tokens": 75, "max_batch": 64, "tensor_parallel": 1}

    def run(**inference: Any) -> Any:
        w = Workload.model_validate(
            {
                "name": "static",
                "kind": "inference",
                "model": {"name": "llama-3-8b", "execution": "engine"},
                "inference": {**shape, **inference},
            }
        )
        return predict(w, "H100-SXM5-80GB", 1, catalog=catalog)

    continuous = run()
    same_length = run(engine="static")
    capped = run(engine="static", max_output_tokens=150)
    assert same_length.throughput == pytest.approx(continuous.throughput, rel=0.02)
    assert 0.4 * continuous.throughput < capped.throughput < 0.75 * continuous.throughput
    assert capped.plan is not None and continuous.plan is not None
    assert (capped.plan.tpot_ms or 0) < (continuous.plan.tpot_ms or 0)
    # the step is the batch's whole run: 150 decode steps against 75, the same prefills
    assert continuous.step_time_s < capped.step_time_s < 2 * continuous.step_time_s
    assert any("150 decode steps long" in a for a in capped.plan.assumed)
    with pytest.raises(ValueError, match="cannot be below output_tokens"):
        run(engine="static", max_output_tokens=50)


def test_request_timing_is_one_formula_for_continuous_and_static_batches() -> None:
    """Both planners (one node, several) take their cycle, TPOT, TTFT and latency from
    ``request_timing``: 4 slots, a 10 ms decode step, 100 ms prefills, 100 output tokens.
    Continuous: cycle 100 x 10 + 4 x 100 = 1,400 ms, TPOT 14 ms, TTFT 110 ms, latency
    1,510 ms. Static with a 150-token cap: cycle 1,900 ms, TPOT 10 ms, the first token after
    all 4 prefills and a step (410 ms), the request done with the cycle. Two clients queued
    ahead wait 2 / 4 of a cycle more."""
    import numpy as np

    from recommender.scoring.serving import request_timing

    def timing(waiting: float = 0.0, **inference: Any) -> list[float]:
        w = _serve("llama-3-8b", inference={"output_tokens": 100, **inference})
        got = request_timing(w, np.array(0.010), np.array(0.100), np.array(4.0), waiting)
        return [float(x) * 1e3 for x in got]

    assert timing() == pytest.approx([1400.0, 14.0, 110.0, 1510.0])
    static = timing(engine="static", max_output_tokens=150)
    assert static == pytest.approx([1900.0, 10.0, 410.0, 1900.0])
    queued = timing(2.0, engine="static", max_output_tokens=150)
    assert queued == pytest.approx([1900.0, 10.0, 410.0 + 950.0, 1900.0 + 950.0])
    assert timing(2.0)[2] == pytest.approx(110.0 + 700.0)


def test_an_engine_that_takes_the_whole_gpu_fits_what_vllms_default_does_not(
    catalog: Catalog,
) -> None:
    """Llama 3 8B in fp16 is 15.0 GiB of weights. On a 16 GB T4, vLLM's default 0.9 of the
    memory leaves 13.6 GiB after the runtime: it does not fit. An engine that allocates only
    what it needs (llama.cpp: ``memory_utilization: 1``) holds it with KV room to spare, and
    the plan says which share it assumed."""

    def run(**inference: Any) -> Any:
        w = _serve("llama-3-8b", precision="fp16", inference={"tensor_parallel": 1, **inference})
        return predict(w, "T4", 1, catalog=catalog)

    default, whole = run(), run(memory_utilization=1.0)
    assert not default.fits_in_memory
    assert whole.fits_in_memory and whole.throughput > 0
    assert whole.plan is not None and whole.plan.concurrency >= 1
    assert not any("of each GPU's memory" in a for a in whole.plan.assumed)
    on_a100 = predict(_serve("llama-3-8b"), "A100-SXM4-80GB", 1, catalog=catalog)
    assert on_a100.plan is not None
    assert any("takes 90% of each GPU's memory" in a for a in on_a100.plan.assumed)
    half = _serve("llama-3-8b", inference={"memory_utilization": 0.5})
    assert half.inference is not None and half.inference.memory_utilization == 0.5
    with pytest.raises(ValueError, match="less than or equal to 1"):
        _serve("llama-3-8b", inference={"memory_utilization": 1.2})


def test_int4_weights_with_int8_activations_compute_at_the_int8_rate(catalog: Catalog) -> None:
    """W4A8 (``precision: int8`` with ``weights: int4``): the matmuls run on the int8 units
    where the chip has them, so a prefill-bound run (long prompts, short answers) on an L4
    (242 int8 TOPS against 121 fp16 TFLOP/s) is faster than the same int4 weights in 16-bit
    compute, with the same weights in memory; a V100 has no int8 tensor rate and keeps 16-bit."""
    from recommender.scoring.serving_formats import weight_support

    assert weight_support(catalog.accelerator("L4"), "int4") == (True, "fp16")
    assert weight_support(catalog.accelerator("L4"), "int4", "int8") == (True, "int8")
    assert weight_support(catalog.accelerator("V100-SXM2-16GB"), "int4", "int8") == (True, "fp16")
    assert weight_support(catalog.accelerator("L4"), "int8", "bf16") == (True, "int8")
    shape = {"inference": {"weights": "int4", "prompt_tokens": 4096, "output_tokens": 8}}
    a16 = predict(_serve("llama-3-8b", **shape), "L4", 1, catalog=catalog)
    a8 = predict(_serve("llama-3-8b", precision="int8", **shape), "L4", 1, catalog=catalog)
    assert a16.plan is not None and a8.plan is not None
    assert a8.plan.memory_gb["weights"] == pytest.approx(a16.plan.memory_gb["weights"])
    assert a8.throughput > 1.5 * a16.throughput
    assert any("int8 activations (W4A8)" in a for a in a8.plan.assumed)
    assert any("AWQ / GPTQ" in a for a in a16.plan.assumed)
    v_a16 = predict(_serve("llama-3-8b", **shape), "V100-SXM2-16GB", 1, catalog=catalog)
    v_a8 = predict(
        _serve("llama-3-8b", precision="int8", **shape), "V100-SXM2-16GB", 1, catalog=catalog
    )
    assert v_a8.throughput == pytest.approx(v_a16.throughput, rel=1e-6)
    assert v_a8.plan is not None
    assert any("has no int8 matrix rate" in a for a in v_a8.plan.assumed)


def _llama_2_7b(execution: str, batch: int, **inference: Any) -> Workload:
    """Llama 2 7B served in fp16 under ``execution`` at ``batch`` sequences."""
    return Workload.model_validate(
        {
            "name": "serve",
            "kind": "inference",
            "model": {"name": "llama-2-7b", "execution": execution},
            "precision": "fp16",
            "batch_size": batch,
            "inference": inference,
        }
    )


def test_an_eager_engines_int4_matmuls_pay_for_their_triton_launches(catalog: Catalog) -> None:
    """TGI 1.0.3 runs two of each layer's GPTQ matmuls as Triton kernels, launched from Python
    at ~100 us each against ~30 us for the kernels they replace: Llama 2 7B's 32 layers add
    32 x 2 x 70 us = 4.48 ms to every eager step, and nothing to a CUDA-graph engine's."""
    from recommender.scoring.tgi_gptq import triton_launches_s

    def decode(execution: str, weights: str) -> Workload:
        return _llama_2_7b(execution, 1, prompt_tokens=1024, output_tokens=256, weights=weights)

    assert triton_launches_s(decode("eager", "int4"), "eager", 32) == pytest.approx(4.48e-3)
    assert triton_launches_s(decode("eager", "fp16"), "eager", 32) == 0.0
    assert triton_launches_s(decode("compiled", "int4"), "compiled", 32) == 0.0
    eager_int4 = decode("eager", "int4")
    assert eager_int4.inference is not None
    spec = eager_int4.inference.model_copy(update={"engine": "static"})
    static = eager_int4.model_copy(update={"inference": spec})
    assert triton_launches_s(static, "eager", 32) == 0.0  # HF generate: CUDA GPTQ kernels
    eager = predict(decode("eager", "int4"), "A100", 1, catalog=catalog)
    graphs = predict(decode("compiled", "int4"), "A100", 1, catalog=catalog)
    assert eager.plan is not None and graphs.plan is not None
    # the Python loop's 20 ms of host work and the Triton launches, against a graph's 1 ms
    assert (eager.plan.tpot_ms or 0) - (graphs.plan.tpot_ms or 0) >= 19 + 4.48 - 1


def test_a_tpot_held_for_a_percentile_carries_that_percentile_of_interleaved_prefills(
    catalog: Catalog,
) -> None:
    # A continuously batched request's decode steps carry the prefills of the requests
    # admitted meanwhile: B of them on average with B slots, a Poisson count under random
    # arrivals, so the 99th percentile's TPOT is longer than the mean and a tight TPOT
    # target held for it allows less concurrency (MLPerf's Interactive scenario).
    step, prefill, batch = np.array([0.02]), np.array([0.05]), np.array([64.0])
    mean_w = _serve("llama-3-70b", targets={"tpot_ms": 40.0})
    tail_w = _serve("llama-3-70b", targets={"tpot_ms": 40.0, "latency_percentile": 99.0})
    _, mean_tpot, _, mean_latency = request_timing(mean_w, step, prefill, batch)
    _, tail_tpot, _, tail_latency = request_timing(tail_w, step, prefill, batch)
    assert float(mean_tpot[0]) == pytest.approx(0.02 + 64 * 0.05 / 256)
    q99 = float(poisson_quantile(batch, 99.0)[0])
    assert 80 < q99 < 86  # exactly 83 for a Poisson mean of 64
    assert float(tail_tpot[0]) == pytest.approx(0.02 + q99 * 0.05 / 256)
    assert float(tail_latency[0]) == pytest.approx(float(mean_latency[0]))  # a mean, as before
    pinned = _serve("llama-3-70b", targets=tail_w.targets.model_dump(), batch_size=64)
    assert float(request_timing(pinned, step, prefill, batch)[1][0]) == pytest.approx(
        float(mean_tpot[0])
    )
    interactive = {"ttft_ms": 2000.0, "tpot_ms": 25.0}
    mean = predict(_serve("llama-3-70b", targets=interactive), "H100-SXM5-80GB", 8, catalog=catalog)
    tail = predict(
        _serve("llama-3-70b", targets={**interactive, "latency_percentile": 99.0}),
        "H100-SXM5-80GB",
        8,
        catalog=catalog,
    )
    assert tail.plan is not None and tail.plan.tpot_ms is not None and tail.plan.tpot_ms <= 25.0
    assert tail.throughput < mean.throughput


def test_the_plan_says_what_a_percentile_tpot_counts(catalog: Catalog) -> None:
    w = _serve(
        "llama-3-70b", targets={"ttft_ms": 2000.0, "tpot_ms": 40.0, "latency_percentile": 99.0}
    )
    p = predict(w, "H100-SXM5-80GB", 8, catalog=catalog)
    assert p.plan is not None and p.plan.concurrency is not None
    notes = [a for a in p.plan.assumed if a.startswith("TPOT at the 99th percentile")]
    assert len(notes) == 1 and f"against {p.plan.concurrency} on average" in notes[0]
    plain = predict(_serve("llama-3-70b", targets={"tpot_ms": 40.0}), "H100", 8, catalog=catalog)
    assert plain.plan is not None
    assert not any(a.startswith("TPOT at the") for a in plain.plan.assumed)


def _room(assumed: str) -> int:
    """The KV room a plan's first note states ('room for 1,121')."""
    match = re.search(r"room for ([\d,]+)", assumed)
    assert match, assumed
    return int(match.group(1).replace(",", ""))


def test_the_plan_says_what_stopped_its_concurrency(catalog: Catalog) -> None:
    """The cap (raising it helps: the KV room holds more), the KV room (the next power of
    two does not fit) or the latency targets (it fits but misses them); nothing for a
    concurrency the user pinned."""
    capped = predict(_serve("llama-3-8b"), "H100-SXM5-80GB", 1, catalog=catalog)
    assert capped.plan is not None and capped.plan.concurrency == 256
    note = capped.plan.assumed[0]
    assert "(inference.max_batch;" in note and _room(note) > 256
    room = _room(note)
    wider = predict(
        _serve("llama-3-8b", inference={"max_batch": room}), "H100-SXM5-80GB", 1, catalog=catalog
    )
    assert wider.plan is not None and wider.plan.concurrency == room
    assert wider.tokens_per_s > capped.tokens_per_s

    kv = predict(_serve("llama-3-8b"), "L4", 1, catalog=catalog)
    assert kv.plan is not None and kv.plan.concurrency is not None
    note = kv.plan.assumed[0]
    assert "powers of two" in note
    assert kv.plan.concurrency <= _room(note) < 2 * kv.plan.concurrency

    tight = predict(
        _serve("llama-3-8b", targets={"tpot_ms": 10}), "H100-SXM5-80GB", 1, catalog=catalog
    )
    assert tight.plan is not None and tight.plan.concurrency is not None
    note = tight.plan.assumed[0]
    assert "(the latency targets;" in note and _room(note) >= 2 * tight.plan.concurrency

    pinned = predict(_serve("llama-3-8b", batch_size=8), "H100-SXM5-80GB", 1, catalog=catalog)
    assert pinned.plan is not None
    assert pinned.plan.assumed[0] == "continuous batching of 8 sequences per copy"


def test_one_sequence_is_one_sequence(catalog: Catalog) -> None:
    """A single-stream plan reads as English: one sequence per copy, not '1 sequences'."""
    single = predict(_serve("llama-3-8b", batch_size=1), "H100-SXM5-80GB", 1, catalog=catalog)
    assert single.plan is not None
    assert single.plan.assumed[0] == "continuous batching of 1 sequence per copy"


def test_a_serving_engine_pays_host_time_for_every_sequence_it_decodes(
    catalog: Catalog,
) -> None:
    """Between two captured decode steps a serving engine walks its batch sequence by
    sequence (scheduling, sampling, output processing), so each iteration grows by
    ``serving_sequence_s`` a sequence: 64 sequences at 50 us add 3.2 ms to the TPOT. A plain
    Hugging Face generate loop (eager static batches) handles the batch as tensors."""

    def serve(execution: str, engine: str) -> Workload:
        static = {"max_batch": 64} if engine == "static" else {}
        return _llama_2_7b(
            execution, 64, prompt_tokens=512, output_tokens=128, engine=engine, **static
        )

    free = default_calibration().with_values(serving_sequence_s=1e-9)
    paid = free.with_values(serving_sequence_s=50e-6)

    def tpot_ms(w: Workload, cal: Any) -> float:
        p = predict(w, "H100", 1, catalog=catalog, calibration=cal)
        assert p.plan is not None and p.plan.concurrency == 64 and p.plan.tpot_ms
        return p.plan.tpot_ms

    engine = serve("compiled", "continuous")
    assert tpot_ms(engine, paid) - tpot_ms(engine, free) == pytest.approx(3.2, rel=0.05)
    generate = serve("eager", "static")
    assert tpot_ms(generate, paid) == pytest.approx(tpot_ms(generate, free))


def test_the_engines_host_loop_is_gpu_idle_time_the_plan_names(catalog: Catalog) -> None:
    """Between decode steps the GPU waits for the engine's host loop, so a serving
    prediction's GPU-busy share is what is left of the cycle, and the plan says what the loop
    costs where it is a visible share: an eager engine's 20 ms a step at one sequence leaves
    an A10G's Llama 2 7B decode idle for a large part of each token; a CUDA-graph engine at
    the same point far less."""
    request = {"prompt_tokens": 512, "output_tokens": 256}
    eager = predict(_llama_2_7b("eager", 1, **request), "A10G", catalog=catalog)
    graphs = predict(_llama_2_7b("compiled", 1, **request), "A10G", catalog=catalog)
    assert eager.plan is not None and graphs.plan is not None
    assert eager.utilization < 0.75 < graphs.utilization < 1.0
    said = [a for a in eager.plan.assumed if "host loop" in a]
    assert len(said) == 1 and "20 ms a step" in said[0]
    assert f"idle {1 - eager.utilization:.0%}" in said[0]
    assert any(f"GPU busy {eager.utilization:.0%}" in n for n in eager.notes)


def test_an_answer_whose_gpu_waits_on_the_engine_loop_says_what_shortens_it(
    catalog: Catalog,
) -> None:
    """Where the engine's host loop leaves the GPU idle for a fifth or more of the time the
    advice says so and what to change: for an eager engine's Python loop, a CUDA-graph
    engine; for a CUDA-graph engine's 1 ms a step at one sequence on a fast GPU, scheduling
    that overlaps the GPU, and more sequences a step. A GPU busy 90 % of the time gets none."""
    from recommender.scoring.explain import bottleneck_advice

    request = {"prompt_tokens": 512, "output_tokens": 256}
    eager = recommend(_llama_2_7b("eager", 1, **request), catalog=catalog)
    graphs = recommend(_llama_2_7b("compiled", 1, **request), catalog=catalog)
    said = [a for a in eager.advice if "host loop" in a]
    assert len(said) == 1 and "CUDA graph" in said[0]
    said = [a for a in graphs.advice if "host loop" in a]
    assert len(said) == 1 and "while the GPU runs" in said[0] and "CUDA graph" not in said[0]
    busy = bottleneck_advice(_llama_2_7b("compiled", 1, **request), "memory-bandwidth", 0.9)
    assert not [a for a in busy if "host loop" in a]
