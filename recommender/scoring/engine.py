"""The two public entry points: ``predict`` (one accelerator) and ``recommend`` (every offer).

Both are pure computation over a loaded catalog: no I/O, no web, no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from recommender.catalog import Catalog
from recommender.catalog.offers import OffersTable
from recommender.errors import InvalidOptionError
from recommender.profile import Profile
from recommender.scoring.baseline import Calibrated, baseline_scale
from recommender.scoring.calibration import Calibration, default_calibration
from recommender.scoring.hardware import Capabilities, capabilities
from recommender.scoring.memory import StateBytes, state_bytes
from recommender.scoring.predict import Predictions, Rows, predict_rows
from recommender.scoring.profile_use import calibrates, profile_measured
from recommender.scoring.shape import Shape, shape_of
from recommender.workload import Workload

__all__ = ["Context", "context", "offer_rows", "typical_host"]

DEFAULT_VCPUS_PER_GPU = 12.0


@dataclass(frozen=True)
class Context:
    """Everything about one request that does not depend on the offer."""

    workload: Workload
    catalog: Catalog
    calibration: Calibration
    shape: Shape
    state: StateBytes
    caps: Capabilities
    calibrated: Calibrated
    # A probe profile of another workload lent its GPU's measured figures to ``caps``.
    lent_figures: bool = False

    def predict(self, rows: Rows) -> Predictions:
        p = predict_rows(
            self.workload,
            self.shape,
            self.state,
            self.caps,
            list(self.catalog.accelerators),
            rows,
            self.calibration,
            self.calibrated.scale_at(rows.acc, rows.gpus),
        )
        return self.calibrated.prove_fit(p, rows)


def context(
    w: Workload,
    catalog: Catalog | None = None,
    profile: Profile | None = None,
    calibration: Calibration | None = None,
) -> Context:
    if catalog is None:  # scoring does no I/O: recommender.recommend/predict load the default
        raise InvalidOptionError(
            "catalog", catalog, "a loaded Catalog (recommender.load_catalog())"
        )
    cal = calibration or default_calibration()
    shape = shape_of(w)
    state = state_bytes(w, shape)
    # A GPU profile of this workload calibrates it; one of another workload brings only the
    # machine figures of the part it ran on (profile_use says why).
    own = calibrates(profile, w)
    override = None if own or profile is None else profile_measured(profile)
    family = w.model.resolved_family
    caps = capabilities(catalog.accelerators, w.precision, cal, family, override)
    calibrated = baseline_scale(w, caps, catalog, cal, profile if own else None)
    return Context(w, catalog, cal, shape, state, caps, calibrated, override is not None)


def offer_rows(t: OffersTable) -> Rows:
    return Rows(
        acc=t.acc,
        gpus=t.gpus.astype(np.float64),
        vcpus=t.vcpus,
        local_disk_gb=t.local_disk_gb,
        host_memory_gib=t.memory_gib,
    )


def typical_host(t: OffersTable, acc_index: int, gpus: int) -> tuple[float, float, str]:
    """(vCPUs, local disk GB, description) of the catalog's instances with this GPU set."""
    rows = np.flatnonzero((t.acc == acc_index) & (t.gpus == gpus))
    if len(rows) == 0:
        v = DEFAULT_VCPUS_PER_GPU * gpus
        return v, 0.0, f"a host with {v:g} vCPUs and network storage (no catalog instance)"
    vcpus = float(np.median(t.vcpus[rows]))
    disk = float(np.median(t.local_disk_gb[rows]))
    kind: Literal["local NVMe", "network storage"] = "local NVMe" if disk > 0 else "network storage"
    return vcpus, disk, f"a typical host for it: {vcpus:g} vCPUs, {kind}"
