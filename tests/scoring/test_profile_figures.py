"""A probe profile of another workload brings the machine's figures, not a calibration.

The issue's rule (scoring engine v2, part 2): a GPU profile of the user's own workload
calibrates it on other hardware; a profile of a different workload contributes only machine
capabilities; a CPU profile is refused with a message saying why.
"""

from __future__ import annotations

import pytest

import recommender
from recommender.catalog import Catalog
from recommender.profile import Figure, Profile
from recommender.scoring.achievable import measured
from recommender.scoring.profile_use import (
    FLOPS_MATCH_FACTOR,
    other_workload,
    profile_measured,
)
from recommender.workload import Workload
from tests.test_profile import make_profile

# A compute-bound training workload (big GEMMs at a large batch, data in memory).
TRAIN = {
    "name": "wide-mlp",
    "kind": "training",
    "model": {"parameters": 1e9, "flops_per_sample": 6e12, "family": "transformer"},
    "precision": "bf16",
    "batch_size": 64,
    "data": {"samples": 1e6, "source": "memory"},
}
H200, H100 = "H200-SXM-141GB", "H100-SXM5-80GB"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return recommender.load_catalog()


def _with_bf16(profile: Profile, tflops: float) -> Profile:
    fig = Figure(value=tflops, unit="TFLOP/s", repeats=5)
    caps = profile.capabilities.model_copy(update={"matmul_tflops": {"bf16": fig}})
    return profile.model_copy(update={"capabilities": caps})


def _own(profile: Profile, flops_per_sample: float = 6e12) -> Profile:
    """``profile`` as if it had measured TRAIN's own code."""
    assert profile.workload is not None
    wp = profile.workload.model_copy(
        update={"name": "train.py:make", "kind": "training", "flops_per_sample": flops_per_sample}
    )
    return profile.model_copy(update={"workload": wp})


def test_the_probes_reference_workload_is_another_workload() -> None:
    w = Workload.model_validate(TRAIN)
    reason = other_workload(make_profile(), w)  # reference:transformer-train
    assert "reference workload reference:transformer-train" in reason
    assert other_workload(_own(make_profile()), w) == ""


def test_a_step_of_another_kind_or_other_flops_is_another_workload() -> None:
    w = Workload.model_validate(TRAIN)
    own = _own(make_profile())
    assert own.workload is not None
    inference = own.model_copy(
        update={"workload": own.workload.model_copy(update={"kind": "inference"})}
    )
    assert "inference step" in other_workload(inference, w)
    far = _own(make_profile(), 6e12 * FLOPS_MATCH_FACTOR * 1.5)
    assert "GFLOPs a sample" in other_workload(far, w)
    near = _own(make_profile(), 6e12 * FLOPS_MATCH_FACTOR * 0.9)
    assert other_workload(near, w) == ""
    unknown = _own(make_profile()).model_copy(
        update={"workload": own.workload.model_copy(update={"flops_per_sample": None})}
    )
    assert other_workload(unknown, w) == ""  # no count to compare: taken as the workload
    assert "no workload measurement" in other_workload(own.model_copy(update={"workload": None}), w)


def test_profile_figures_replace_the_shipped_ones_for_its_part_only() -> None:
    figures = profile_measured(_with_bf16(make_profile(), 300.0))
    assert figures is not None and set(figures) == {H200}
    m = figures[H200]
    shipped = measured()[H200]
    assert m.matmul("bf16") == 300.0
    assert m.matmul("fp8") == shipped.matmul("fp8")  # not measured by the probe: kept
    assert m.memory_bandwidth_gbs == shipped.memory_bandwidth_gbs
    assert m.allreduce_busbw_gbs == shipped.allreduce_busbw_gbs


def test_a_reference_profile_moves_its_part_only_and_says_so(catalog: Catalog) -> None:
    slow = _with_bf16(make_profile(), 200.0)  # a throttled H200: a quarter of mamf-finder's
    base_h200 = recommender.predict(TRAIN, H200, catalog=catalog)
    base_h100 = recommender.predict(TRAIN, H100, catalog=catalog)
    got_h200 = recommender.predict(TRAIN, H200, catalog=catalog, profile=slow)
    got_h100 = recommender.predict(TRAIN, H100, catalog=catalog, profile=slow)
    assert got_h200.throughput < 0.5 * base_h200.throughput
    assert got_h100.throughput == pytest.approx(base_h100.throughput)
    assert got_h200.calibrated_from is None  # its throughput is another workload's
    (note,) = [n for n in got_h200.notes if "did not calibrate" in n]
    assert "reference workload reference:transformer-train" in note
    assert f"rates on {H200} replace the shipped figures" in note


def test_a_profile_of_the_workload_itself_calibrates(catalog: Catalog) -> None:
    own = _own(make_profile())
    p = recommender.predict(TRAIN, H100, catalog=catalog, profile=own)
    assert p.calibrated_from is not None and p.calibrated_from.startswith("probe profile")
    assert not any("did not calibrate" in n for n in p.notes)


def test_a_cpu_profile_is_refused_and_brings_no_figures(catalog: Catalog) -> None:
    from recommender.profile import Machine

    cpu = make_profile().model_copy(
        update={"machine": Machine(hostname="laptop", vcpus=8, device="cpu", cpu_model="EPYC")}
    )
    assert profile_measured(cpu) is None
    base = recommender.predict(TRAIN, H200, catalog=catalog)
    got = recommender.predict(TRAIN, H200, catalog=catalog, profile=cpu)
    assert got.throughput == pytest.approx(base.throughput)
    assert any("measured on the cpu (EPYC)" in n for n in got.notes)
