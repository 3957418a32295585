"""Calibrating predictions with a measurement (the workload's ``baseline`` or a probe profile).

The model predicts device time on every accelerator; a measurement on one of them tells how
far the model is off for this particular workload. The ratio measured / modelled on the
measured accelerator then scales the device time everywhere: the measured time is split by
the model into compute and memory parts, and each part moves with its own hardware ratio on
the other accelerators (the idea behind Habitat's wave scaling, Yu et al., USENIX ATC 2021).

A probe profile is better than a bare throughput: it separates device compute from data
waiting, so a transfer-bound measurement does not masquerade as a slow GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recommender.catalog import Catalog
from recommender.profile import Profile
from recommender.scoring.calibration import Calibration
from recommender.scoring.demand import Demand
from recommender.scoring.hardware import Capabilities
from recommender.scoring.memory import Footprint
from recommender.scoring.predict import Rows, predict_rows
from recommender.workload import Workload

__all__ = ["SCALE_LIMITS", "Calibrated", "baseline_scale"]

# A measurement more than 5x off the model is more likely a wrong workload description
# (FLOPs, batch) than a slow machine; the scale is clipped and the answer says so.
SCALE_LIMITS = (0.2, 5.0)


@dataclass(frozen=True)
class Calibrated:
    scale: float
    source: str | None
    notes: tuple[str, ...] = ()


def _modelled_device_s_per_sample(
    w: Workload,
    d: Demand,
    fp: Footprint,
    caps: Capabilities,
    acc_index: int,
    gpus: int,
    cal: Calibration,
) -> float:
    rows = Rows(
        acc=np.array([acc_index], dtype=np.int32),
        gpus=np.array([float(gpus)]),
        vcpus=np.array([np.inf]),
        local_disk_gb=np.array([1e6]),
    )
    p = predict_rows(w, d, fp, caps, rows, cal)
    samples = float(d.batch) * (gpus if d.training else np.floor(gpus / p.shards[0]))
    return float(p.device_s[0]) / samples


def _measured(w: Workload, profile: Profile | None) -> tuple[str, int, float, str] | None:
    """(accelerator name, gpus, measured device seconds per sample, description)."""
    if profile is not None and profile.workload is not None and profile.machine.accelerator:
        wp = profile.workload
        if profile.machine.device == "cuda" and wp.compute_s.median > 0:
            per_sample = wp.compute_s.median / wp.batch_size
            gpus = max(1, wp.devices_used)
            what = (
                f"probe profile on {gpus} x {profile.machine.accelerator} "
                f"({wp.throughput_samples_per_s:.3g} samples/s, device compute "
                f"{wp.compute_s.median * 1e3:.3g} ms/step)"
            )
            return profile.machine.accelerator, gpus, per_sample / gpus, what
    if w.baseline is not None:
        b = w.baseline
        what = f"baseline {b.throughput:g} samples/s on {b.gpus} x {b.accelerator}"
        return b.accelerator, b.gpus, 1.0 / b.throughput, what
    return None


def baseline_scale(
    w: Workload,
    d: Demand,
    fp: Footprint,
    caps: Capabilities,
    catalog: Catalog,
    cal: Calibration,
    profile: Profile | None = None,
) -> Calibrated:
    measured = _measured(w, profile)
    if measured is None:
        return Calibrated(1.0, None)
    name, gpus, seconds, what = measured
    acc = catalog.accelerator(name)
    index = catalog.accelerators.index(acc)
    modelled = _modelled_device_s_per_sample(w, d, fp, caps, index, gpus, cal)
    raw = seconds / modelled
    scale = float(np.clip(raw, *SCALE_LIMITS))
    notes: tuple[str, ...] = ()
    if scale != raw:
        notes = (
            f"the measurement is {raw:.2g}x the model's estimate on {acc.id}; check "
            "flops_per_sample, batch_size and precision (scale clipped to "
            f"{scale:g}x)",
        )
    return Calibrated(scale, f"{what}: scale {scale:.3g}x the model", notes)
