"""A baseline's gap to the model carries over to other parts by a fitted power (transfer.py)."""

from __future__ import annotations

import numpy as np
import pytest

from recommender import predict
from recommender.catalog import Catalog
from recommender.scoring.calibration import default_calibration
from recommender.scoring.hardware import effective_precision
from recommender.scoring.transfer import (
    DECAY_KEY,
    RELATIONS,
    bandwidth_distance,
    fit_transfer,
    peak_distance,
    relation,
    roofline_distance,
    transfer_exponents,
)

from .conftest import make

# A baseline 2x slower than the model on one A100 (the model of make()'s job).
A100, H100, A100_PCIE = "A100-SXM4-80GB", "H100-SXM5-80GB", "A100-PCIe-80GB"


def test_relation_names_how_a_part_relates_to_the_measured_one(catalog: Catalog) -> None:
    a100, pcie, h100 = (catalog.accelerator(x) for x in (A100, A100_PCIE, H100))
    assert relation(a100, a100) == "accelerator"
    assert relation(a100, pcie) == "architecture"  # both Ampere
    assert relation(a100, h100) == "other"
    exps = transfer_exponents(
        catalog.accelerators,
        catalog.accelerators.index(a100),
        {"accelerator": 0.9, "architecture": 0.7},
        "bf16",
    )
    assert exps[catalog.accelerators.index(a100)] == 0.9
    assert exps[catalog.accelerators.index(pcie)] == 0.7
    assert exps[catalog.accelerators.index(h100)] == 1.0  # a relation it lacks carries it all


def test_fit_finds_how_much_of_the_gap_carries_over() -> None:
    rng = np.random.default_rng(0)
    gaps = np.exp(rng.normal(0.0, 0.4, 400))
    # Where the target is off by the same factor as the baseline, all of it carries over;
    # where the target is right whatever the baseline shows, none does; where the target
    # shares half the baseline's log gap, alpha is 0.5.
    whole = fit_transfer(gaps, 1.0 / gaps, ["accelerator"] * 400)
    none = fit_transfer(gaps, np.ones(400), ["other"] * 400)
    half = fit_transfer(gaps, gaps**-0.5, ["architecture"] * 400)
    assert whole == {"accelerator": 1.0}
    assert none == {"other": 0.0}
    assert half == {"architecture": 0.5}


def test_weights_decide_which_pairs_the_exponent_follows() -> None:
    """Half the pairs carry their whole gap, half none: the exponent follows the half that
    weighs more, and a label outside the relations gets an exponent of its own."""
    rng = np.random.default_rng(1)
    gaps = np.exp(rng.normal(0.0, 0.4, 400))
    misses = np.concatenate([1.0 / gaps[:200], np.ones(200)])
    heavy_first = np.concatenate([np.full(200, 3.0), np.ones(200)])
    assert fit_transfer(gaps, misses, ["other"] * 400, weights=heavy_first) == {"other": 1.0}
    assert fit_transfer(gaps, misses, ["other"] * 400, weights=heavy_first[::-1]) == {"other": 0.0}
    split = fit_transfer(gaps, misses, ["other"] * 200 + ["other:llm"] * 200)
    assert split == {"other": 1.0, "other:llm": 0.0}
    assert list(split) == ["other", "other:llm"]  # the relations first, as the file writes them


def test_the_roofline_distance_is_the_mean_of_the_two_axes(catalog: Catalog) -> None:
    """An H100 SXM has 3.35 TB/s to an A100's 2.04 and 989 bf16 TFLOP/s to its 312 (NVIDIA
    datasheets, the catalog's figures): the distance is the mean of the two |ln| ratios. An
    fp8 workload compares the A100, which has no fp8 units, at the 16-bit rate its matrix
    units fall back to (``hardware.effective_precision``), as the predictor runs it."""
    a100, h100 = catalog.accelerator(A100), catalog.accelerator(H100)
    bandwidth = abs(np.log(h100.memory_bandwidth_gbs / a100.memory_bandwidth_gbs))
    peak = abs(np.log(h100.peak_tflops.bf16 / a100.peak_tflops.bf16))
    assert bandwidth_distance(a100, h100) == pytest.approx(bandwidth)
    assert peak_distance(a100, h100, "bf16") == pytest.approx(peak)
    assert roofline_distance(a100, h100, "bf16") == pytest.approx((bandwidth + peak) / 2.0)
    assert roofline_distance(h100, a100, "bf16") == pytest.approx((bandwidth + peak) / 2.0)
    fallback = effective_precision(a100, "fp8")
    fp8 = abs(np.log(h100.peak_tflops.fp8 / a100.peak_tflops.get(fallback)))
    assert peak_distance(a100, h100, "fp8") == pytest.approx(fp8)


def test_the_share_fades_with_the_roofline_distance(catalog: Catalog) -> None:
    a100, h100, t4 = (catalog.accelerator(x) for x in (A100, H100, "T4"))
    at = catalog.accelerators.index
    exps = transfer_exponents(
        catalog.accelerators,
        at(a100),
        {"other": 0.6, "architecture": 0.8, DECAY_KEY: 0.5},
        "fp16",
    )
    far = roofline_distance(a100, h100, "fp16")
    assert exps[at(h100)] == pytest.approx(0.6 * np.exp(-0.5 * far))
    assert exps[at(t4)] < exps[at(h100)] < 0.6  # a T4 is further from an A100 than an H100 is
    # Pairs whose shared share halves per unit of distance: the fit finds the decay.
    rng = np.random.default_rng(2)
    gaps, far = np.exp(rng.normal(0.0, 0.4, 600)), rng.uniform(0.0, 2.0, 600)
    misses = gaps ** (-0.8 * np.exp(-0.5 * far))
    fitted = fit_transfer(gaps, misses, ["other"] * 600, far)
    assert fitted == {"other": 0.8, DECAY_KEY: 0.5}


def test_shipped_exponents_are_shares_and_carry_more_to_closer_parts() -> None:
    alpha = default_calibration().baseline_transfer
    assert set(RELATIONS) <= set(alpha) <= {*RELATIONS, DECAY_KEY}
    assert all(0.0 <= alpha[k] <= 1.0 for k in RELATIONS)
    assert alpha.get(DECAY_KEY, 0.0) >= 0.0
    assert alpha["accelerator"] >= alpha["architecture"] >= alpha["other"]


def test_a_baseline_carries_its_gap_by_the_relations_power(catalog: Catalog) -> None:
    alpha = {"accelerator": 0.9, "architecture": 0.6, "other": 0.3}
    cal = default_calibration().with_values(baseline_transfer=alpha)
    plain = {
        (acc, gpus): predict(make(), acc, gpus, catalog=catalog, calibration=cal).throughput
        for acc, gpus in ((A100, 1), (A100, 8), (A100_PCIE, 1), (H100, 1))
    }
    measured = plain[(A100, 1)] / 2.0  # the job runs at half the modelled rate on one A100
    w = make(baseline={"accelerator": A100, "gpus": 1, "throughput": measured})

    def rate(acc: str, gpus: int = 1) -> float:
        return predict(w, acc, gpus, catalog=catalog, calibration=cal).throughput

    assert rate(A100) == pytest.approx(measured, rel=1e-6)  # the measured config: all of it
    assert rate(A100, 8) == pytest.approx(plain[(A100, 8)] / 2.0**0.9, rel=1e-6)
    assert rate(A100_PCIE) == pytest.approx(plain[(A100_PCIE, 1)] / 2.0**0.6, rel=1e-6)
    assert rate(H100) == pytest.approx(plain[(H100, 1)] / 2.0**0.3, rel=1e-6)
    here = predict(w, H100, catalog=catalog, calibration=cal)
    note = f"carried here as {2.0**0.3:.3g}x: another architecture"
    assert any(note in n for n in here.notes)
    measured_config = predict(w, A100, catalog=catalog, calibration=cal)
    assert not any("carried here" in n for n in measured_config.notes)
    source = here.calibrated_from or ""
    assert f"{2.0**0.6:.3g}x on other parts of its architecture" in source
    assert f"{2.0**0.3:.3g}x on other architectures" in source


def test_each_pick_says_the_scale_it_took_from_the_baseline(catalog: Catalog) -> None:
    from recommender import recommend

    alpha = {"accelerator": 0.9, "architecture": 0.6, "other": 0.3}
    cal = default_calibration().with_values(baseline_transfer=alpha)
    plain = predict(make(), A100, 1, catalog=catalog, calibration=cal).throughput
    w = make(baseline={"accelerator": A100, "gpus": 1, "throughput": plain / 2.0})
    picks = recommend(w, catalog=catalog, calibration=cal, top=5).picks
    assert picks
    for pick in picks:
        line = next(x for x in pick.why if x.startswith("calibrated with your baseline"))
        assert f"scale {2.0:.3g}x the model on {A100}" in line
        acc = catalog.accelerator(pick.accelerator)
        kind = relation(catalog.accelerator(A100), acc)
        if pick.accelerator == A100 and pick.total_gpus in (None, 1) and pick.gpus == 1:
            assert "here" not in line  # the measured configuration takes all of it
        else:
            assert f"{2.0 ** alpha[kind]:.3g}x here" in line
