"""The calibration fit recovers efficiencies from measurements, and the shipped file loads."""

from __future__ import annotations

import pytest

from recommender.catalog import Catalog
from recommender.scoring.achievable import measured
from recommender.scoring.calibrate import Observation, fit, modelled_throughput
from recommender.scoring.calibration import (
    DATASHEET_TRIAD_SHARE,
    GDDR_TRIAD_SHARE,
    default_calibration,
    prior_calibration,
)
from recommender.scoring.hardware import capabilities

from ..triad_shares import median_triad_share
from .conftest import make


def test_fit_recovers_a_known_efficiency(catalog: Catalog) -> None:
    priors = prior_calibration()
    truth = priors.with_values(compute={**priors.compute, "ampere:simt": 0.45})
    workloads = [make(precision="fp32", batch_size=b) for b in (4, 8, 16)]
    obs = [Observation(w, "A100-PCIe-40GB", 1, 0.0) for w in workloads]
    measured = modelled_throughput(obs, catalog, truth)
    obs = [
        Observation(o.workload, o.accelerator, 1, float(m))
        for o, m in zip(obs, measured, strict=True)
    ]
    fitted = fit(obs, catalog, priors, prior_weight=1e-3)
    acc = catalog.accelerator("A100-PCIe-40GB")
    assert fitted.compute_efficiency(acc, "fp32") == pytest.approx(0.45, rel=0.15)
    again = modelled_throughput(obs, catalog, fitted)
    assert again == pytest.approx(measured, rel=0.02)


def test_shipped_calibration_refines_the_priors() -> None:
    shipped, priors = default_calibration(), prior_calibration()
    assert "fitted" in shipped.notes
    assert set(priors.compute) <= set(shipped.compute)
    assert all(0 < v <= 1 for v in shipped.compute.values())
    assert all(0 < v <= 1 for v in shipped.memory.values())


def test_fitted_constants_stay_inside_their_physical_limits() -> None:
    """Every fitted efficiency is at most 1, the per-kernel device cost at most
    KERNEL_GPU_S_MAX, the serving engines' host time per step is the sourced prior (it is
    not fitted) and per sequence at most SERVING_SEQUENCE_S_MAX, and each runtime's decode
    limit a positive rate."""
    from recommender.scoring.calibrate import KERNEL_GPU_S_MAX, SERVING_SEQUENCE_S_MAX

    shipped, priors = default_calibration(), prior_calibration()
    scalars = (
        shipped.attention_gemm_efficiency,
        shipped.comm_overlap,
        shipped.interconnect_efficiency,
        shipped.host_link_efficiency,
    )
    assert all(0 < v <= 1 for v in scalars)
    assert 0 < shipped.kernel_gpu_s <= KERNEL_GPU_S_MAX
    assert shipped.serving_step_s == priors.serving_step_s
    assert 0 < shipped.serving_sequence_s <= SERVING_SEQUENCE_S_MAX
    # a runtime's decode limit is a rate (bytes per SM-cycle), one for every runtime the
    # priors name
    limits = shipped.decode_bytes_per_sm_cycle
    assert set(limits) == set(priors.decode_bytes_per_sm_cycle)
    assert all(0 < v < float("inf") for v in limits.values())


def test_datasheet_share_is_the_median_measured_triad_share(catalog: Catalog) -> None:
    """DATASHEET_TRIAD_SHARE is what achievable.yaml's triads say, not a free factor: the
    median of triad / datasheet over the chips the catalog carries."""
    hbm = {a.id: a.memory_bandwidth_gbs for a in catalog.accelerators if a.memory_type == "hbm"}
    share, chips = median_triad_share(hbm)
    assert chips >= 5
    assert share == pytest.approx(DATASHEET_TRIAD_SHARE, abs=5e-4)


def test_a_gddr_board_without_a_triad_reaches_the_gddr_share(catalog: Catalog) -> None:
    """A GDDR card with no triad of its own (L4) gets the GDDR share, an HBM one (V100) the
    HBM median; both times the one fitted ``memory.measured``."""
    priors = prior_calibration()
    l4, v100 = catalog.accelerator("L4"), catalog.accelerator("V100-SXM2-16GB")
    assert (l4.memory_type, v100.memory_type) == ("gddr", "hbm")
    assert "L4" not in measured() and "V100-SXM2-16GB" not in measured()
    fitted = priors.memory["measured"]
    assert priors.memory_efficiency(l4) == pytest.approx(GDDR_TRIAD_SHARE * fitted)
    assert priors.memory_efficiency(v100) == pytest.approx(DATASHEET_TRIAD_SHARE * fitted)


def test_one_fitted_memory_share_moves_every_chip(catalog: Catalog) -> None:
    """Chips with and without a measured triad scale together with ``memory.measured``, so a
    fit cannot set the bandwidth of datasheet-only chips apart from the measured ones."""
    priors = prior_calibration()
    halved = priors.with_values(memory={"measured": priors.memory["measured"] / 2})
    accs = [catalog.accelerator(a) for a in ("H100-SXM5-80GB", "L4", "A10G")]
    before = capabilities(accs, "bf16", priors).bandwidth
    after = capabilities(accs, "bf16", halved).bandwidth
    assert list(after / before) == pytest.approx([0.5, 0.5, 0.5])
    l4 = accs[1]
    share = GDDR_TRIAD_SHARE * priors.memory["measured"]
    assert before[1] == pytest.approx(l4.memory_bandwidth_gbs * 1e9 * share)


def test_fit_moves_one_efficiency_per_architecture(catalog: Catalog) -> None:
    """Two parts of one architecture (a GA100 and a GA102 board) share the fitted efficiency:
    the fit adds no per-chip key, so a source that measured one GPU cannot give it a free
    factor of its own (calibrate._parameters has the cross-validated reason)."""
    priors = prior_calibration()
    parts = ("A100-PCIe-40GB", "A10G")
    obs = [
        Observation(make(precision="fp32", batch_size=b), acc, 1, 100.0 * b, group=acc)
        for acc in parts
        for b in (4, 16)
    ]
    fitted = fit(obs, catalog, priors)
    assert set(fitted.compute) == set(priors.compute)
    a100, a10g = (fitted.compute_efficiency(catalog.accelerator(p), "fp32") for p in parts)
    assert a100 == a10g == fitted.compute["ampere:simt"]


def test_a_multi_node_training_observation_is_planned_across_its_nodes(catalog: Catalog) -> None:
    """A training job over 4 nodes of 8 H100 is predicted by the multi-node planner, with
    its collectives over the nodes' network, not as one 32-GPU NVLink instance: a slower
    network gives a slower job, and one node is the single-instance prediction."""
    import numpy as np

    from recommender.scoring.engine import context
    from recommender.scoring.multinode import ClusterHardware, plan_clusters

    w = make(
        model={"name": "llama-3-8b", "sequence_length": 4096},
        batch_size=4,
        training={"sharding": "zero3", "tensor_parallel": 1},
    )
    cal = default_calibration()

    def job(nodes: int, network: float) -> float:
        o = Observation(w, "H100-SXM5-80GB", 8 * nodes, 1.0, None, nodes, network)
        return float(modelled_throughput([o], catalog, cal)[0])

    fast, slow = job(4, 4 * 50e9), job(4, 12.5e9 * 0.3)
    assert 0 < slow < fast
    ctx = context(w, catalog)
    index = catalog.accelerators.index(catalog.accelerator("H100-SXM5-80GB"))
    hw = ClusterHardware(
        acc=np.array([index], dtype=np.int32),
        gpus=np.array([8.0]),
        network_bytes_per_s=np.array([4 * 50e9]),
    )
    plans = plan_clusters(w, ctx.shape, ctx.state, ctx.caps, hw, np.array([4.0]), cal, 2.0)
    assert fast == pytest.approx(float(plans.samples_per_s[0, 0]), rel=1e-9)
    one = Observation(w, "H100-SXM5-80GB", 8, 1.0)
    assert job(1, 0.0) == pytest.approx(float(modelled_throughput([one], catalog, cal)[0]))
