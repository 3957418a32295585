"""What the answer says about the probe profile it was given: used, or why not.

A profile measured on a CPU (or without a workload, or with no accelerator named) cannot
calibrate GPU predictions; the answer must then say so instead of printing the same figures
as without it, and must not advise running the probe as if none had been given. When the
profile was used, its measured classification (the probe's thresholds:
``probes.classify``, compute-bound at >= 90 % device busy, transfer-bound at <= 80 %) is
the bottleneck the advice follows, not the model's guess.
"""

from __future__ import annotations

from recommender.profile import Profile
from recommender.scoring.baseline import Calibrated

__all__ = ["measured_bottleneck", "profile_notes", "profile_used", "unusable_reason"]

PROFILE_SOURCE_PREFIX = "probe profile"  # how baseline.py names a profile it calibrated on

# probes.classify's verdicts -> the engine's bottleneck names (None: keep the model's)
_BOUND_TO_BOTTLENECK = {"compute-bound": "compute"}
_STAGE_TO_BOTTLENECK = {"data-loading": "input-pipeline", "host-to-device": "host-transfer"}


def profile_used(calibrated: Calibrated) -> bool:
    return (calibrated.source or "").startswith(PROFILE_SOURCE_PREFIX)


def unusable_reason(profile: Profile) -> str:
    """Why ``profile`` cannot calibrate GPU predictions (``""`` if it can)."""
    m = profile.machine
    if profile.workload is None:
        return "it holds no workload measurement (the probe ran without --workload)"
    if m.device != "cuda":
        return (
            f"it was measured on the {m.device} ({m.cpu_model or 'no GPU'}), and a run without "
            "a GPU cannot calibrate GPU predictions; run `recommender probe` on a GPU machine"
        )
    if not m.accelerator:
        return "it names no accelerator the catalog knows (machine.accelerator is empty)"
    if profile.workload.compute_s.median <= 0:
        return "its measured device compute time is zero"
    return ""


def profile_notes(profile: Profile | None, calibrated: Calibrated) -> list[str]:
    """One line when a profile was given but not used; nothing otherwise."""
    if profile is None or profile_used(calibrated):
        return []
    reason = unusable_reason(profile) or "the workload's baseline took precedence"
    instead = (
        f"predictions use {calibrated.source}"
        if calibrated.source
        else "predictions use spec sheets and calibrated efficiencies only"
    )
    return [f"The probe profile given was not used: {reason}; {instead}."]


def measured_bottleneck(profile: Profile | None, calibrated: Calibrated) -> str | None:
    """The bottleneck the profile measured, when it was used and is decisive."""
    if profile is None or profile.classification is None or not profile_used(calibrated):
        return None
    c = profile.classification
    if c.bound in _BOUND_TO_BOTTLENECK:
        return _BOUND_TO_BOTTLENECK[c.bound]
    if c.bound == "transfer-bound":
        return _STAGE_TO_BOTTLENECK.get(c.limiting_stage)
    return None
