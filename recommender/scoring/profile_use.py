"""What a probe profile given with a request does, and what the answer says about it.

A GPU profile of the workload being predicted calibrates it (``baseline.baseline_scale``:
measured / modelled time on the part it ran on, carried to the others). A GPU profile of
another workload (one of the probe's reference workloads, or a step of another kind or of
other FLOPs per sample than this workload's) says nothing about this workload's gap to the
model, only about the machine: its measured matmul rates and memory bandwidth replace the
shipped figures for the accelerator it ran on (:func:`profile_measured`, the same quantities
``achievable.yaml`` holds per part), and its throughput is not used. A profile measured on a
CPU (or with no accelerator named) says nothing about a GPU and is refused. The answer says
which of these happened instead of printing the same figures as without it, and does not
advise running the probe as if none had been given. When the profile calibrated, its
measured classification (the probe's thresholds: ``probes.classify``, compute-bound at >= 90 %
device busy, transfer-bound at <= 80 %) is the bottleneck the advice follows, not the
model's guess.
"""

from __future__ import annotations

from recommender.profile import Profile
from recommender.scoring.achievable import Measured, measured
from recommender.scoring.baseline import Calibrated
from recommender.workload import Workload

__all__ = [
    "FLOPS_MATCH_FACTOR",
    "REFERENCE_WORKLOAD_PREFIX",
    "calibrates",
    "measured_bottleneck",
    "other_workload",
    "profile_measured",
    "profile_notes",
    "profile_used",
    "unusable_reason",
]

PROFILE_SOURCE_PREFIX = "probe profile"  # how baseline.py names a profile it calibrated on
# The probe's own workloads (``recommender probe --workload reference:NAME``, defined in
# probes/reference.py; reference:transformer-train when no --workload is given,
# probes/runner.py) are small stand-ins, never a user's model.
REFERENCE_WORKLOAD_PREFIX = "reference:"
# FLOPs per sample the probe counted for its workload (torch.utils.flop_counter: matmuls,
# convolutions and attention, forward and backward where the step trains) against this
# workload's own count (``Workload.flops_per_sample``, the same kind of count): further apart
# than this factor, the profile measured another model or batch shape. The two counts differ
# for one model by what each leaves out (a counter skips element-wise work; a stated count may
# include it), far less than a factor of two.
FLOPS_MATCH_FACTOR = 2.0

# probes.classify's verdicts -> the engine's bottleneck names (None: keep the model's)
_BOUND_TO_BOTTLENECK = {"compute-bound": "compute"}
_STAGE_TO_BOTTLENECK = {"data-loading": "input-pipeline", "host-to-device": "host-transfer"}


def profile_used(calibrated: Calibrated) -> bool:
    return (calibrated.source or "").startswith(PROFILE_SOURCE_PREFIX)


def unusable_reason(profile: Profile) -> str:
    """Why ``profile`` says nothing about a GPU (``""`` if it does)."""
    m = profile.machine
    if m.device != "cuda":
        return (
            f"it was measured on the {m.device} ({m.cpu_model or 'no GPU'}), and a run without "
            "a GPU cannot calibrate GPU predictions; run `recommender probe` on a GPU machine"
        )
    if not m.accelerator:
        return "it names no accelerator the catalog knows (machine.accelerator is empty)"
    return ""


def other_workload(profile: Profile, w: Workload) -> str:
    """Why the workload ``profile`` measured is not ``w`` (``""`` where it may be): none was
    measured, one of the probe's reference workloads, a step of another kind, or one whose
    FLOPs per sample are more than ``FLOPS_MATCH_FACTOR`` from ``w``'s."""
    wp = profile.workload
    if wp is None:
        return "it holds no workload measurement (the probe ran without --workload)"
    if wp.compute_s.median <= 0:
        return "its measured device compute time is zero"
    if wp.name.startswith(REFERENCE_WORKLOAD_PREFIX) and wp.name != w.name:
        return f"it measured the probe's reference workload {wp.name}, not {w.name}"
    kind = "inference" if w.kind == "edge" else w.kind
    if wp.kind is not None and wp.kind != kind:
        return f"it measured a {wp.kind} step and {w.name} is {kind}"
    ours = _flops_per_sample(w)
    if wp.flops_per_sample and ours:
        ratio = wp.flops_per_sample / ours
        if not 1.0 / FLOPS_MATCH_FACTOR <= ratio <= FLOPS_MATCH_FACTOR:
            return (
                f"its workload ({wp.name}) does {wp.flops_per_sample / 1e9:.3g} GFLOPs a sample "
                f"against {ours / 1e9:.3g} for {w.name}"
            )
    return ""


def _flops_per_sample(w: Workload) -> float | None:
    """``w``'s FLOPs per sample, where its description gives them."""
    try:
        flops = w.flops_per_sample
    except (AssertionError, ValueError):  # an architecture with no per-sample count
        return None
    return flops if flops > 0 else None


def profile_measured(profile: Profile) -> dict[str, Measured] | None:
    """The machine figures of a GPU ``profile`` for the accelerator it ran on, in place of
    ``achievable.yaml``'s: its burst matmul rate per precision (as mamf-finder's sweeps are,
    which the shipped figures are) and its device-memory copy bandwidth; where it measured
    neither, or names no accelerator, None. A figure it did not measure keeps the shipped one."""
    if unusable_reason(profile):
        return None
    acc = profile.machine.accelerator
    assert acc is not None
    caps = profile.capabilities
    rates = {p: f.value for p, f in caps.matmul_tflops.items() if f.value > 0}
    memory = caps.memory_bandwidth_gbs.value if caps.memory_bandwidth_gbs else None
    if not rates and not memory:
        return None
    shipped = measured().get(acc)
    figures = Measured(
        matmul_tflops={**(shipped.matmul_tflops if shipped else {}), **rates},
        memory_bandwidth_gbs=memory or (shipped.memory_bandwidth_gbs if shipped else None),
        allreduce_busbw_gbs=shipped.allreduce_busbw_gbs if shipped else None,
        source=f"probe profile of {profile.machine.hostname or acc}",
    )
    return {acc: figures}


def calibrates(profile: Profile | None, w: Workload) -> bool:
    """Whether ``profile`` measured ``w`` on a GPU, so its throughput calibrates ``w``."""
    return profile is not None and not unusable_reason(profile) and not other_workload(profile, w)


def profile_notes(
    profile: Profile | None, calibrated: Calibrated, w: Workload, lent_figures: bool
) -> list[str]:
    """One line when a profile was given but did not calibrate ``w``: why, and whether its
    machine figures were used instead (``lent_figures``, as ``engine.context`` decided);
    nothing otherwise."""
    if profile is None or profile_used(calibrated):
        return []
    instead = (
        f"predictions use {calibrated.source}"
        if calibrated.source
        else "predictions use spec sheets and calibrated efficiencies only"
    )
    refused = unusable_reason(profile)
    if refused:
        return [f"The probe profile given was not used: {refused}; {instead}."]
    # a usable profile of this workload calibrates (engine.context), so here it is another's
    other = other_workload(profile, w)
    if not lent_figures:
        return [f"The probe profile given was not used: {other}; {instead}."]
    rest = f"predictions use {calibrated.source}" if calibrated.source else "nothing else is used"
    return [
        f"The probe profile given did not calibrate {w.name}: {other}. Its measured matmul and "
        f"memory rates on {profile.machine.accelerator} replace the shipped figures for that "
        f"part; {rest}."
    ]


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
