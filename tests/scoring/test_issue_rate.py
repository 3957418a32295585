"""``inference.runtime``: a serving runtime whose decode kernels, not the memory, set the
rate (llama.cpp), limited by the GPU's multiprocessor-cycles (``scoring.issue_rate``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from recommender import predict
from recommender.catalog import Accelerator, Catalog
from recommender.scoring.achievable import boost_clocks, memory_latency_cycles
from recommender.scoring.calibrate import Observation, fit, modelled_throughput
from recommender.scoring.calibration import (
    Calibration,
    prior_calibration,
)
from recommender.scoring.issue_rate import (
    REFERENCE_DIE,
    latency_share,
    runtime_bandwidth_cap,
    sm_cycles_per_s,
)
from recommender.scoring.kernel_costs import (
    CUDA_GRAPH_KERNEL_S,
    REFERENCE_KERNEL_CLOCK_MHZ,
    replayed_kernel_s,
)
from recommender.scoring.results import Prediction
from recommender.scoring.serving_step import (
    LLAMA_CPP_KERNELS_PER_LAYER,
    LLAMA_CPP_QUANTISE_KERNELS_PER_LAYER,
    SERVING_KERNELS_PER_LAYER,
)
from recommender.workload import Workload

from .conftest import single_stream_decode


def _decode(runtime: str | None, model: str = "llama-3-8b") -> Workload:
    """A 16-bit single-stream decode, on ``runtime`` where one is named."""
    extra = {"runtime": runtime} if runtime is not None else {}
    return single_stream_decode(model, None, **extra)


def _limited(per_cycle: float) -> Calibration:
    priors = prior_calibration()
    return priors.with_values(decode_bytes_per_sm_cycle={"llama.cpp": per_cycle})


@pytest.mark.parametrize(
    ("acc", "sms", "boost_mhz"),
    [
        # NVIDIA A100 whitepaper (108 SMs, 1,410 MHz); H100 whitepaper (SXM5: 132 SMs, 1,980
        # MHz); Ada whitepaper (RTX 4090: 128 SMs, 2,520 MHz)
        ("A100-SXM4-80GB", 108, 1410),
        ("H100-SXM5-80GB", 132, 1980),
        ("L40S", 142, 2520),
    ],
)
def test_cycle_rate_is_the_whitepapers_sms_times_clock(
    catalog: Catalog, acc: str, sms: int, boost_mhz: float
) -> None:
    """Derived from the datasheet FP32 peak and the architecture's lanes per SM, the
    SM-cycles per second are the SM count times the boost clock the whitepapers give."""
    cycles = sm_cycles_per_s(catalog.accelerator(acc))
    assert cycles == pytest.approx(sms * boost_mhz * 1e6, rel=0.01)


def test_no_cycle_rate_where_the_fp32_peak_does_not_count_lanes(catalog: Catalog) -> None:
    """MI300X's catalog FP32 peak is its matrix rate: no cycle rate, so no runtime limit."""
    assert sm_cycles_per_s(catalog.accelerator("MI300X")) is None


# ggml-org/llama.cpp#6017 (2024-03-12): ggerganov's llama-bench on one NVIDIA A100 80GB PCIe,
# llama 7B F16 (12.55 GiB), tg 128: 74.77 +- 0.10 tokens/s.
LLAMA_CPP_A100_F16_TOKENS_PER_S = 74.77


def test_the_prior_reproduces_the_measurement_it_cites(catalog: Catalog) -> None:
    """priors.json's llama.cpp limit is the one at which the engine, with every other prior,
    predicts llama.cpp#6017's measurement: Llama 7B in F16 generating 128 tokens from an empty
    context on one A100 PCIe, a source outside the development set. The limit binds there (the
    plan says so), so the measurement pins it."""
    tg128 = single_stream_decode(
        "llama-2-7b", None, runtime="llama.cpp", prompt_tokens=1, output_tokens=128
    )
    priors = prior_calibration()
    p = predict(tg128, "A100-PCIe-80GB", catalog=catalog, calibration=priors)
    assert p.tokens_per_s == pytest.approx(LLAMA_CPP_A100_F16_TOKENS_PER_S, rel=0.01)
    assert any("llama.cpp's decode kernels stream at most" in n for n in p.notes)
    unlimited = priors.with_values(decode_bytes_per_sm_cycle={})
    free = predict(tg128, "A100-PCIe-80GB", catalog=catalog, calibration=unlimited)
    assert free.tokens_per_s is not None and free.tokens_per_s > 1.15 * p.tokens_per_s


def test_a_limited_runtime_decodes_slower_on_hbm_parts_only(catalog: Catalog) -> None:
    """At 5.6 B per SM-cycle an A100 (152 G SM-cycles/s) streams 0.85 TB/s, under its
    memory's 1.7 TB/s, so llama.cpp decodes slower there than an engine at the memory's rate;
    an L4 (118 G SM-cycles/s, 300 GB/s of GDDR) is memory-bound either way."""
    cal = _limited(5.6)
    a100 = [
        predict(_decode(rt), "A100-SXM4-80GB", calibration=cal, catalog=catalog)
        for rt in (None, "llama.cpp")
    ]
    l4 = [
        predict(_decode(rt), "L4", calibration=cal, catalog=catalog) for rt in (None, "llama.cpp")
    ]
    assert a100[1].throughput < 0.8 * a100[0].throughput
    # On the L4 llama.cpp pays only the kernels its unfused graph launches beyond a fused
    # engine's: (23 - 8) a layer, each a replayed kernel's 2,820 cycles at the L4's clock.
    assert _seconds_per_token(l4[1]) - _seconds_per_token(l4[0]) == pytest.approx(
        _extra_kernels_s(LLAMA_CPP_KERNELS_PER_LAYER, catalog.accelerator("L4")), rel=1e-3
    )


# Llama 3 8B's decoder layers (meta-llama/Meta-Llama-3-8B config.json, num_hidden_layers).
LLAMA_3_8B_LAYERS = 32


def _seconds_per_token(p: Prediction) -> float:
    assert p.tokens_per_s is not None
    return 1.0 / p.tokens_per_s


def _extra_kernels_s(per_layer: float, acc: Accelerator) -> float:
    """Seconds a decode token of Llama 3 8B takes on ``acc`` for ``per_layer`` kernels a layer
    against a fused engine's ``SERVING_KERNELS_PER_LAYER``."""
    kernel_s = float(replayed_kernel_s([acc])[0])
    return (per_layer - SERVING_KERNELS_PER_LAYER) * LLAMA_3_8B_LAYERS * kernel_s


@pytest.mark.parametrize(
    ("weights", "per_layer"),
    [
        (None, LLAMA_CPP_KERNELS_PER_LAYER),
        ("int4", LLAMA_CPP_KERNELS_PER_LAYER + LLAMA_CPP_QUANTISE_KERNELS_PER_LAYER),
    ],
)
def test_llama_cpp_launches_its_graphs_kernels_one_per_op(
    catalog: Catalog, weights: str | None, per_layer: float
) -> None:
    """llama.cpp's Llama graph launches 23 kernels a layer, 30 with quantised weights (each
    weight matmul first quantises its input to q8_1), where a fused engine launches 8: on an
    L4, whose memory sets the rate either way, a token takes that many more replayed kernels,
    and a llama.cpp-2024 build (the same kernels, launched otherwise) the same on one GPU."""
    plain, runtime, dated = (
        predict(
            single_stream_decode("llama-3-8b", weights, **({"runtime": rt} if rt else {})),
            "L4",
            catalog=catalog,
        )
        for rt in (None, "llama.cpp", "llama.cpp-2024")
    )
    extra = _seconds_per_token(runtime) - _seconds_per_token(plain)
    assert extra == pytest.approx(_extra_kernels_s(per_layer, catalog.accelerator("L4")), rel=1e-3)
    assert _seconds_per_token(dated) == pytest.approx(_seconds_per_token(runtime), rel=1e-9)


def test_the_plan_says_where_the_runtime_sets_the_rate(catalog: Catalog) -> None:
    """The prediction's plan names the limit where it binds (the A100) and not where the
    memory sets the rate anyway (the L4)."""
    cal = _limited(5.6)
    a100 = predict(_decode("llama.cpp"), "A100-SXM4-80GB", calibration=cal, catalog=catalog)
    l4 = predict(_decode("llama.cpp"), "L4", calibration=cal, catalog=catalog)
    assert a100.plan is not None and l4.plan is not None
    said = [line for line in a100.plan.assumed if "decode kernels stream at most" in line]
    assert len(said) == 1 and "0.85 TB/s" in said[0] and "A100-SXM4-80GB" in said[0]
    assert not any("decode kernels" in line for line in l4.plan.assumed)


def test_under_the_priors_the_limit_binds_on_hbm_parts_only(catalog: Catalog) -> None:
    """The prior slows llama.cpp on every HBM part in the catalog (A100, H100, H200, B200)
    and on no GDDR card (L4, A10G, L40S), where the memory sets the rate anyway."""
    cal = prior_calibration()
    for acc, limited in (
        ("A100-SXM4-80GB", True),
        ("H100-SXM5-80GB", True),
        ("H200-SXM-141GB", True),
        ("B200", True),
        ("L4", False),
        ("A10G", False),
        ("L40S", False),
    ):
        plain, runtime = (
            predict(_decode(rt), acc, calibration=cal, catalog=catalog).throughput
            for rt in (None, "llama.cpp")
        )
        assert (runtime < 0.95 * plain) is limited, acc
        assert runtime <= plain * (1 + 1e-9), acc


def test_the_fit_finds_a_runtime_limit_its_rows_show(catalog: Catalog) -> None:
    """Rows generated with a 4.5 B per SM-cycle limit (A100, H100 bound by it, the L4 not) are
    fitted from the priors' 7.98: the limit binds on the HBM parts, so the rows move it to
    where the parts compare as measured."""
    truth = _limited(4.5)
    obs = [
        Observation(_decode("llama.cpp", model), acc, 1, 0.0, group=model)
        for model in ("llama-3-8b", "llama-2-7b")
        for acc in ("A100-SXM4-80GB", "H100-SXM5-80GB", "L4")
    ]
    measured = modelled_throughput(obs, catalog, truth)
    obs = [
        Observation(o.workload, o.accelerator, 1, float(m), group=o.group)
        for o, m in zip(obs, measured, strict=True)
    ]
    priors = prior_calibration()
    fitted = fit(obs, catalog, priors, prior_weight=1e-3)
    # within a group only ratios are identified (the L4's rate moves with the memory share),
    # so the fit must reproduce how the parts compare, and have found a binding limit
    again = modelled_throughput(obs, catalog, fitted)
    for group in range(0, len(obs), 3):
        ratios = again[group : group + 3] / again[group + 2]
        truths = measured[group : group + 3] / measured[group + 2]
        assert list(ratios) == pytest.approx(list(truths), rel=0.05)
    limit = fitted.decode_bytes_per_sm_cycle["llama.cpp"]
    assert limit < priors.decode_bytes_per_sm_cycle["llama.cpp"] / 1.3
    assert limit == pytest.approx(4.5, rel=0.25)


def test_only_a_runtimes_own_rows_move_its_limit(catalog: Catalog) -> None:
    """A fold whose rows hold no llama.cpp run cannot learn its limit: the fit frees it only
    for observations that state the runtime (else it keeps the prior, scaled only by the
    common level every bandwidth shares)."""
    from recommender.scoring.calibrate import _parameters

    priors = prior_calibration()
    names = {
        rt: {
            p.name
            for p in _parameters([Observation(_decode(rt), "L4", 1, 1.0)], catalog, priors)[0]
        }
        for rt in (None, "llama.cpp")
    }
    assert "decode_bytes_per_sm_cycle[llama.cpp]" in names["llama.cpp"]
    assert names[None] == names["llama.cpp"] - {"decode_bytes_per_sm_cycle[llama.cpp]"}


def test_every_measured_latency_is_a_catalog_die_and_the_reference_is_measured(
    catalog: Catalog,
) -> None:
    chips = {a.chip for a in catalog.accelerators}
    latencies = memory_latency_cycles()
    assert REFERENCE_DIE in latencies
    assert set(latencies) <= chips
    # a pointer chase to DRAM takes hundreds of cycles on every GPU measured
    assert all(300 < lat.cycles < 1000 for lat in latencies.values())


def test_the_limit_scales_with_the_dies_dram_latency(catalog: Catalog) -> None:
    """Little's law at a fixed number of bytes in flight: the limit is stated at the A100's
    latency (571.8 cycles); an H100 (658.4) keeps 13 % fewer bytes per cycle flowing, a die
    with no measurement (GA102: the A10G) the reference's."""
    cal = _limited(6.0)
    names = ("A100-PCIe-80GB", "H100-PCIe-80GB", "A10G")
    accs = [catalog.accelerator(n) for n in names]
    caps = runtime_bandwidth_cap(accs, "llama.cpp", cal)
    shares = [latency_share(a) for a in accs]
    assert shares == pytest.approx([1.0, 571.8 / 658.4, 1.0])
    for acc, cap, share in zip(accs, caps, shares, strict=True):
        cycles = sm_cycles_per_s(acc)
        assert cycles is not None and cap == pytest.approx(6.0 * share * cycles)


# ggml-org/llama.cpp#6763 (agray3, 2024-04-19), proposing CUDA graphs: llama-2-7b.Q4_K_M
# (3.80 GiB) on an H100 PCIe server, ``--n-gpu-layers 100 -n 128``: 163.83 tokens/s with the
# decode replayed as a graph. Outside the development set, and on the die whose latency the
# prior's A100 does not share.
LLAMA_CPP_H100_Q4_K_M_TOKENS_PER_S = 163.83


def test_the_h100s_latency_brings_an_outside_h100_measurement_closer(catalog: Catalog) -> None:
    """Under the priors, which reproduce the A100 measurement, the H100 PCIe Q4_K_M decode is
    predicted nearer what #6763 measured with the H100's own latency than with the A100's."""
    import recommender.scoring.issue_rate as issue_rate

    tg128 = single_stream_decode(
        "llama-2-7b",
        "int4",
        runtime="llama.cpp",
        prompt_tokens=1,
        output_tokens=128,
        weight_bits=3.80 * 2**30 * 8 / 6.74e9,
    )
    priors = prior_calibration()
    own = predict(tg128, "H100-PCIe-80GB", catalog=catalog, calibration=priors).tokens_per_s
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(issue_rate, "latency_share", lambda acc: 1.0)
        a100s = predict(tg128, "H100-PCIe-80GB", catalog=catalog, calibration=priors).tokens_per_s
    assert own is not None and a100s is not None
    measured = LLAMA_CPP_H100_Q4_K_M_TOKENS_PER_S
    assert measured < own < a100s
    assert own / a100s == pytest.approx(571.8 / 658.4, rel=0.1)


def test_a_replayed_kernel_costs_cycles_of_the_parts_own_clock(catalog: Catalog) -> None:
    """A replayed kernel's fixed cost is 2 us at an A100's 1,410 MHz (the part llama.cpp's
    prior from #6017 was derived on, so that derivation stands), the same count of cycles at
    another part's boost clock (an RTX 4090's 2,520 MHz: 1.12 us; a share of a device at the
    device's), and the 2 us on a part with no clock in achievable.yaml."""
    names = ("A100-PCIe-80GB", "A100-SXM4-80GB", "L4", "H100-NVL-94GB", "L4-0.125")
    cost = replayed_kernel_s([catalog.accelerator(n) for n in names])
    clocks = boost_clocks()
    assert clocks["A100-PCIe-80GB"].mhz == REFERENCE_KERNEL_CLOCK_MHZ
    assert "H100-NVL-94GB" not in clocks
    assert cost == pytest.approx(
        [
            CUDA_GRAPH_KERNEL_S,
            CUDA_GRAPH_KERNEL_S,
            CUDA_GRAPH_KERNEL_S * 1410.0 / 2040.0,
            CUDA_GRAPH_KERNEL_S,
            CUDA_GRAPH_KERNEL_S * 1410.0 / 2040.0,  # an eighth of an L4: the L4's clock
        ]
    )


def test_a_faster_clock_decodes_a_kernel_bound_token_faster(catalog: Catalog) -> None:
    """With a fused engine's decode the kernels are a fixed share of a token; llama.cpp's
    unfused Q4 graph (30 kernels a layer) pays them in the part's cycles, so two parts that
    differ only in clock differ in the kernels' time by the clocks' ratio."""
    import recommender.scoring.kernel_costs as kernel_costs

    w = single_stream_decode("llama-3-8b", "int4", runtime="llama.cpp")
    base = predict(w, "L4", catalog=catalog)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel_costs, "REFERENCE_KERNEL_CLOCK_MHZ", 2.0 * REFERENCE_KERNEL_CLOCK_MHZ)
        slower = predict(w, "L4", catalog=catalog)
    per_layer = LLAMA_CPP_KERNELS_PER_LAYER + LLAMA_CPP_QUANTISE_KERNELS_PER_LAYER
    kernels = (
        per_layer * LLAMA_3_8B_LAYERS * float(replayed_kernel_s([catalog.accelerator("L4")])[0])
    )
    assert _seconds_per_token(slower) - _seconds_per_token(base) == pytest.approx(kernels, rel=1e-3)


def test_an_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValidationError, match="runtime"):
        _decode("ollama-turbo")
