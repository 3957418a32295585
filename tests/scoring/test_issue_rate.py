"""``inference.runtime``: a serving runtime whose decode kernels, not the memory, set the
rate (llama.cpp), limited by the GPU's multiprocessor-cycles (``scoring.issue_rate``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from recommender import predict
from recommender.catalog import Catalog
from recommender.scoring.calibrate import Observation, fit, modelled_throughput
from recommender.scoring.calibration import Calibration, prior_calibration
from recommender.scoring.issue_rate import sm_cycles_per_s
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


def test_the_prior_limit_binds_on_no_catalog_part(catalog: Catalog) -> None:
    """priors.json assumes no limit: its bytes per SM-cycle let every part with a cycle rate
    reach its datasheet bandwidth, so only a fit to a runtime's rows introduces one."""
    per_cycle = prior_calibration().decode_bytes_per_sm_cycle["llama.cpp"]
    for acc in catalog.accelerators:
        cycles = sm_cycles_per_s(acc)
        if cycles is not None:
            assert per_cycle * cycles >= acc.memory_bandwidth_gbs * 1e9, acc.id


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
    assert l4[1].throughput == pytest.approx(l4[0].throughput)


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


def test_under_the_priors_the_runtime_changes_nothing(catalog: Catalog) -> None:
    cal = prior_calibration()
    rates = [
        predict(_decode(rt), "H100-SXM5-80GB", calibration=cal, catalog=catalog)
        for rt in (None, "llama.cpp")
    ]
    assert rates[1].throughput == pytest.approx(rates[0].throughput)


def test_the_fit_finds_a_runtime_limit_its_rows_show(catalog: Catalog) -> None:
    """Rows generated with a 6 B per SM-cycle limit (A100, H100 bound by it, the L4 not) are
    fitted from the priors, which assume none: the min() has no gradient where it does not
    bind, so the fit starts the limit where it binds and the rows move it to where the parts
    compare as measured."""
    truth = _limited(6.0)
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
    assert limit < 0.5 * priors.decode_bytes_per_sm_cycle["llama.cpp"]
    assert limit == pytest.approx(6.0, rel=0.25)


def test_a_fit_without_the_runtimes_rows_learns_no_limit(catalog: Catalog) -> None:
    """A fold whose rows hold no llama.cpp run cannot learn its limit: the prior's pull takes
    it back from where the fit starts, and llama.cpp is predicted as any engine."""
    obs = [Observation(_decode(None), "A100-SXM4-80GB", 1, 50.0)]
    fitted = fit(obs, catalog, prior_calibration())
    rates = [
        predict(_decode(rt), "A100-SXM4-80GB", calibration=fitted, catalog=catalog).throughput
        for rt in (None, "llama.cpp")
    ]
    assert rates[1] == pytest.approx(rates[0])


def test_an_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValidationError, match="runtime"):
        _decode("ollama-turbo")
