"""The calibration fit recovers efficiencies from measurements, and the shipped file loads."""

from __future__ import annotations

import pytest

from recommender.catalog import Catalog
from recommender.scoring.calibrate import Observation, fit, modelled_throughput
from recommender.scoring.calibration import default_calibration, prior_calibration

from .conftest import make


def test_fit_recovers_a_known_efficiency(catalog: Catalog) -> None:
    priors = prior_calibration()
    truth = priors.with_values(compute={**priors.compute, "GA100-pcie:simt": 0.45})
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
