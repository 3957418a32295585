"""hardware.sustained_clock_share: a power-capped board of a die sustains less compute than its
datasheet, by the cube root of its power share against the die's full-power board."""

from __future__ import annotations

import pytest

from recommender.catalog import Catalog
from recommender.scoring.achievable import full_power_dies
from recommender.scoring.calibration import prior_calibration
from recommender.scoring.hardware import capabilities, sustained_clock_share


def test_a_72_w_l4_sustains_the_cube_root_of_its_power_share(catalog: Catalog) -> None:
    l4 = catalog.accelerator("L4")
    ref = full_power_dies()["AD104"]  # GeForce RTX 4070 Ti: 285 W, 40.1 TFLOP/s
    share = (72 / 30.3) / (ref.tdp_w / ref.fp32_tflops)
    assert sustained_clock_share(l4) == pytest.approx(share ** (1 / 3))
    assert 0.65 < sustained_clock_share(l4) < 0.75


def test_full_power_boards_and_dies_without_a_reference_keep_their_clock(
    catalog: Catalog,
) -> None:
    for name in ("H100-SXM5-80GB", "A100-SXM4-80GB", "T4", "V100-SXM2-16GB"):
        assert sustained_clock_share(catalog.accelerator(name)) == 1.0
    assert sustained_clock_share(catalog.accelerator("H100-PCIe-80GB")) < 1.0
    assert sustained_clock_share(catalog.accelerator("A10")) < sustained_clock_share(
        catalog.accelerator("A10G")
    )


def test_a_capped_board_loses_the_same_clock_on_its_cuda_and_tensor_cores(
    catalog: Catalog,
) -> None:
    """The clock the cap leaves is the chip's, so FP32 and tensor-core rates both carry it;
    a board the rule does not cap keeps its datasheet rates."""
    cal = prior_calibration()
    l4, t4 = catalog.accelerator("L4"), catalog.accelerator("T4")
    clock = sustained_clock_share(l4)
    assert clock < 0.75
    fp32 = capabilities([l4], "fp32", cal).flops[0]
    bf16 = capabilities([l4], "bf16", cal).flops[0]
    assert fp32 == pytest.approx(30.3e12 * cal.compute_efficiency(l4, "fp32") * clock)
    assert bf16 == pytest.approx(121e12 * cal.compute_efficiency(l4, "bf16") * clock)
    assert sustained_clock_share(t4) == 1.0
    fp16 = capabilities([t4], "fp16", cal).flops[0]
    assert fp16 == pytest.approx(t4.peak_tflops.fp16 * 1e12 * cal.compute_efficiency(t4, "fp16"))


def test_every_reference_die_is_one_the_catalog_sells(catalog: Catalog) -> None:
    chips = {a.chip for a in catalog.accelerators}
    for chip, ref in full_power_dies().items():
        assert chip in chips, chip
        assert ref.source.strip() and ref.tdp_w > 0 and ref.fp32_tflops > 0


def test_a_300_w_gb202_sustains_less_than_the_600_w_boards_of_its_die(catalog: Catalog) -> None:
    """The RTX PRO 6000 Max-Q (300 W, 110.1 TFLOP/s FP32 on the Server card's 188-SM GB202)
    against the 600 W Workstation Edition; the 600 W Server card keeps its clock."""
    server = catalog.accelerator("RTX-PRO-6000-Server")
    assert sustained_clock_share(server) == 1.0
    peaks = server.peak_tflops.model_copy(update={"fp32": 110.1})
    max_q = server.model_copy(update={"tdp_w": 300.0, "peak_tflops": peaks})
    ref = full_power_dies()["GB202"]
    share = (300 / 110.1) / (ref.tdp_w / ref.fp32_tflops)
    assert sustained_clock_share(max_q) == pytest.approx(share ** (1 / 3))
    assert 0.8 < sustained_clock_share(max_q) < 0.85
