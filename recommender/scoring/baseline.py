"""Calibrating predictions with a measurement (the workload's ``baseline`` or a probe profile).

The model predicts device time on every accelerator; a measurement on one of them tells how
far the model is off for this particular workload. The ratio measured / modelled on the
measured accelerator then scales the device time on the others: the measured time is split by
the model into compute and memory parts, and each part moves with its own hardware ratio on
the other accelerators (the idea behind Habitat's wave scaling, Yu et al., USENIX ATC 2021).
Only part of the gap belongs to the workload, the rest to the part it ran on, so the gap is
carried to another part to a fitted power (``transfer``): nearly whole to the same accelerator
with another GPU count, less to another part of its architecture, least to another one.

A baseline may have run otherwise than the target (another batch, precision, sequence
length, request shape): the model of *the baseline's* settings is what it is compared with.
A baseline that ran the workload exactly as described proves that it fits the accelerator it
ran on (and the same accelerator with more GPUs), whatever the memory model says.

A probe profile is better than a bare throughput: it separates device compute from data
waiting, so a transfer-bound measurement does not masquerade as a slow GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from recommender.catalog import Catalog
from recommender.profile import Profile
from recommender.scoring.calibration import Calibration
from recommender.scoring.hardware import Capabilities
from recommender.scoring.memory import state_bytes
from recommender.scoring.predict import Predictions, Rows, predict_rows
from recommender.scoring.shape import shape_of
from recommender.scoring.transfer import DECAY_KEY, relation, transfer_exponents
from recommender.workload import Baseline, Workload

__all__ = [
    "SCALE_LIMITS",
    "Calibrated",
    "baseline_scale",
    "baseline_workload",
    "calibration_line",
    "carried_note",
]

# A measurement more than 5x off the model is more likely a wrong workload description
# (FLOPs, batch) than a slow machine; the scale is clipped and the answer says so.
SCALE_LIMITS = (0.2, 5.0)


@dataclass(frozen=True)
class Calibrated:
    scale: float  # measured / modelled device time on the measured accelerator
    source: str | None
    notes: tuple[str, ...] = ()
    # Power of ``scale`` each catalog accelerator (by index) takes (``transfer``); None: all 1.
    exponents: npt.NDArray[np.float64] | None = None
    measured_config: tuple[int, int] | None = None  # (accelerator index, GPUs) measured
    basis: str = ""  # the measurement, in words ("baseline 150 samples/s on 1 x A100-80GB")
    proven: bool = False  # the baseline ran the workload as described

    def scale_at(
        self, acc: npt.ArrayLike, gpus: npt.ArrayLike | None = None
    ) -> npt.NDArray[np.float64]:
        """The factor on device time of accelerator index (or indices) ``acc`` with ``gpus``
        GPUs (None: a count other than the measurement's); the measured configuration itself
        takes the whole scale."""
        index = np.asarray(acc, dtype=np.int64)
        if self.exponents is None or self.scale == 1.0:
            return np.full(index.shape, self.scale)
        power = self.exponents[index]
        if self.measured_config is not None and gpus is not None:
            at, count = self.measured_config
            power = np.where((index == at) & (np.asarray(gpus) == count), 1.0, power)
        return np.asarray(np.power(self.scale, power), dtype=np.float64)

    @property
    def measured(self) -> bool:
        """Scaled from a measurement of the workload (a ``baseline`` or a probe profile of
        it), not from the model alone."""
        return self.source is not None

    @property
    def proven_acc(self) -> int | None:
        """The accelerator index the workload ran on as described, if it did."""
        return self.measured_config[0] if self.proven and self.measured_config else None

    def prove_fit(self, p: Predictions, rows: Rows) -> Predictions:
        """Mark rows of the measured accelerator (with as many GPUs or more) as fitting."""
        if not self.proven or self.measured_config is None:
            return p
        acc, gpus = self.measured_config
        proven = (rows.acc == acc) & (rows.gpus >= gpus)
        return replace(p, fits=p.fits | proven)


def baseline_workload(w: Workload, b: Baseline) -> Workload:
    """``w`` as the baseline ran it: its batch, precision, sequence and request shape."""
    update: dict[str, Any] = {}
    if b.batch_size is not None:
        update["batch_size"] = b.batch_size
    if b.precision is not None:
        update["precision"] = b.precision
    data = w.model_dump(exclude_unset=True)
    if b.sequence_length is not None:
        data.setdefault("model", {})["sequence_length"] = b.sequence_length
        arch = data["model"].get("architecture")
        if isinstance(arch, dict) and "sequence_length" in arch:
            arch["sequence_length"] = b.sequence_length
    if w.inference is not None and (b.prompt_tokens or b.output_tokens):
        inference = data.setdefault("inference", {})
        inference["prompt_tokens"] = b.prompt_tokens or w.inference.prompt_tokens
        inference["output_tokens"] = b.output_tokens or w.inference.output_tokens
    data.update(update)
    data.pop("baseline", None)
    return Workload.model_validate(data)


def _same_run(w: Workload, b: Baseline) -> bool:
    """The baseline ran the workload as described (nothing it states differs)."""
    seq = w.model.tokens_per_sample
    spec = w.inference
    return (
        (b.batch_size is None or b.batch_size == w.batch_size)
        and (b.precision is None or b.precision == w.precision)
        and (b.sequence_length is None or b.sequence_length == seq)
        and (
            b.prompt_tokens is None or (spec is not None and b.prompt_tokens == spec.prompt_tokens)
        )
        and (
            b.output_tokens is None or (spec is not None and b.output_tokens == spec.output_tokens)
        )
    )


def _modelled_device_s_per_sample(
    w: Workload, caps: Capabilities, catalog: Catalog, acc_index: int, gpus: int, cal: Calibration
) -> float:
    rows = Rows(
        acc=np.array([acc_index], dtype=np.int32),
        gpus=np.array([float(gpus)]),
        vcpus=np.array([np.inf]),
        local_disk_gb=np.array([1e6]),
    )
    shape = shape_of(w)
    p = predict_rows(w, shape, state_bytes(w, shape), caps, list(catalog.accelerators), rows, cal)
    throughput = float(p.device_throughput[0])
    return 1.0 / throughput if throughput > 0 else float("inf")


def _measured(w: Workload, profile: Profile | None) -> tuple[str, int, float, str] | None:
    """(accelerator name, gpus, measured seconds per sample (whole job), description)."""
    if profile is not None and profile.workload is not None and profile.machine.accelerator:
        wp = profile.workload
        if profile.machine.device == "cuda" and wp.compute_s.median > 0:
            gpus = max(1, wp.devices_used)
            per_sample = wp.compute_s.median / wp.batch_size / gpus
            what = (
                f"probe profile on {gpus} x {profile.machine.accelerator} "
                f"({wp.throughput_samples_per_s:.3g} samples/s, device compute "
                f"{wp.compute_s.median * 1e3:.3g} ms/step)"
            )
            return profile.machine.accelerator, gpus, per_sample, what
    if w.baseline is not None:
        b = w.baseline
        what = f"baseline {b.throughput:g} samples/s on {b.gpus} x {b.accelerator}"
        return b.accelerator, b.gpus, 1.0 / b.throughput, what
    return None


def baseline_scale(
    w: Workload,
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
    b = w.baseline
    from_baseline = b is not None and what.startswith("baseline")
    reference = baseline_workload(w, b) if from_baseline and b is not None else w
    modelled = _modelled_device_s_per_sample(reference, caps, catalog, index, gpus, cal)
    raw = seconds / modelled
    scale = float(np.clip(raw, *SCALE_LIMITS))
    notes: tuple[str, ...] = ()
    if scale != raw:
        notes = (
            f"the measurement is {raw:.2g}x the model's estimate on {acc.id}; check "
            "flops_per_sample, batch_size and precision (scale clipped to "
            f"{scale:g}x)",
        )
    proven = from_baseline and b is not None and _same_run(w, b)
    exponents = transfer_exponents(
        catalog.accelerators, index, cal.baseline_transfer, reference.precision
    )
    source = f"{what}: scale {scale:.3g}x the model on {acc.id}{_carried(cal, scale)}"
    return Calibrated(scale, source, notes, exponents, (index, gpus), what, proven)


def _taken_here(c: Calibrated, catalog: Catalog, index: int, gpus: int | None) -> tuple[float, str]:
    """The scale ``gpus`` x accelerator ``index`` takes (None: a count or cluster other than
    the measured one) and why it is not the whole of it ("" where it is)."""
    here = float(c.scale_at(index, gpus))
    if c.measured_config is None or here == c.scale:
        return here, ""
    measured, target = catalog.accelerators[c.measured_config[0]], catalog.accelerators[index]
    kin = {
        "accelerator": "the same part on another GPU count",
        "architecture": f"another {measured.architecture} part",
        "other": "another architecture",
    }[relation(measured, target)]
    ratio = target.memory_bandwidth_gbs / measured.memory_bandwidth_gbs
    bandwidth = f", {ratio:.2g}x its memory bandwidth" if abs(ratio - 1.0) > 0.005 else ""
    return here, kin + bandwidth


def carried_note(c: Calibrated, catalog: Catalog, index: int, gpus: int) -> str | None:
    """What share of the measurement's scale a prediction on ``gpus`` x accelerator ``index``
    takes, where it takes less than all of it (``transfer``)."""
    here, why = _taken_here(c, catalog, index, gpus)
    if not why or c.measured_config is None:
        return None
    measured = catalog.accelerators[c.measured_config[0]]
    return (
        f"the measurement's scale ({c.scale:.3g}x on {measured.id}) carried here as "
        f"{here:.3g}x: {why}, so only part of its gap to the model applies"
    )


def calibration_line(c: Calibrated, catalog: Catalog, index: int, gpus: int | None) -> str:
    """The measurement and the scale one offer (``gpus`` x accelerator ``index``) takes from
    it, for a pick's reasons: shorter than ``Calibrated.source``, which speaks of every part."""
    if c.measured_config is None:
        return c.source or ""
    measured = catalog.accelerators[c.measured_config[0]]
    here, why = _taken_here(c, catalog, index, gpus)
    taken = f", {here:.3g}x here ({why})" if why else ""
    return f"{c.basis}: scale {c.scale:.3g}x the model on {measured.id}{taken}"


def _carried(cal: Calibration, scale: float) -> str:
    """How much of the scale other parts take, where the calibration carries less than all."""
    alpha = cal.baseline_transfer
    decay = alpha.get(DECAY_KEY, 0.0)
    if scale == 1.0 or (
        decay == 0.0 and all(alpha.get(k, 1.0) == 1.0 for k in ("architecture", "other"))
    ):
        return ""
    same, other = scale ** alpha.get("architecture", 1.0), scale ** alpha.get("other", 1.0)
    fading = (
        " of equal memory bandwidth, nearer 1x the further a part's bandwidth is from its"
        if decay > 0.0
        else ""
    )
    return (
        f", {same:.3g}x on other parts of its architecture and {other:.3g}x on other "
        f"architectures{fading} (part of a measurement's gap belongs to the part it ran on)"
    )
