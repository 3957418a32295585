"""``predict(workload, accelerator, gpus)``: one workload on one accelerator x count."""

from __future__ import annotations

import numpy as np

from recommender.catalog import Catalog
from recommender.profile import Profile
from recommender.scoring.baseline import carried_note
from recommender.scoring.calibration import Calibration
from recommender.scoring.describe import describe_plan, remedies
from recommender.scoring.engine import context, typical_host
from recommender.scoring.explain import limit_text, recipe_caveats
from recommender.scoring.heldout import error_note, expected_error
from recommender.scoring.memory import GB, usable_bytes
from recommender.scoring.predict import BOTTLENECKS, Rows
from recommender.scoring.profile_use import profile_notes
from recommender.scoring.results import Breakdown, MemoryFit, Prediction
from recommender.scoring.serving import copy_span
from recommender.workload import Workload

__all__ = ["predict"]


def predict(
    workload: Workload,
    accelerator: str,
    gpus: int = 1,
    *,
    nodes: int = 1,
    catalog: Catalog | None = None,
    profile: Profile | None = None,
    calibration: Calibration | None = None,
) -> Prediction:
    """Predict ``workload`` on ``gpus`` x ``accelerator`` (any spelling of its name).

    Raises :class:`~recommender.catalog.UnknownAcceleratorError` for an unknown name and
    ``ValueError`` for a GPU count below one.
    """
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1 (got {gpus})")
    if nodes < 1:
        raise ValueError(f"nodes must be >= 1 (got {nodes})")
    ctx = context(workload, catalog, profile, calibration)
    acc = ctx.catalog.accelerator(accelerator)
    index = ctx.catalog.accelerators.index(acc)
    if nodes > 1:
        from recommender.scoring.predict_nodes import predict_on_nodes

        return predict_on_nodes(ctx, acc, index, gpus, nodes)
    vcpus, disk, host = typical_host(ctx.catalog.offers, index, gpus)
    rows = Rows(
        acc=np.array([index], dtype=np.int32),
        gpus=np.array([float(gpus)]),
        vcpus=np.array([vcpus]),
        local_disk_gb=np.array([disk]),
    )
    p = ctx.predict(rows)
    fits = bool(p.fits[0])
    need = float(p.need_bytes[0])
    room = usable_bytes(acc.memory_gb)
    bigger = [(a.id, a.memory_gb) for a in ctx.catalog.accelerators if a.memory_gb > acc.memory_gb]
    plan = describe_plan(workload, p, 0, acc, ctx.calibration)
    span = copy_span(workload)
    no_whole_copy = not fits and gpus % span != 0
    if no_whole_copy:
        fixes = [f"run on a multiple of {span} GPUs, or pin fewer tensor / pipeline stages"]
    else:
        fixes = [] if fits else remedies(workload, ctx.shape, acc, bigger)
    memory = MemoryFit(
        fits=fits,
        needed_gb=round(need / GB, 2),
        available_gb=round(room / GB, 2),
        shortfall_gb=round(max(need - room, 0.0) / GB, 2),
        components_gb=plan.memory_gb if plan is not None else {},
        remedies=fixes,
    )
    notes = [f"input pipeline assumes {host}"]
    if no_whole_copy:
        notes.insert(
            0,
            f"does not fit: one model copy spans {span} GPUs (inference.tensor_parallel x "
            f"pipeline_parallel), so {gpus} GPUs hold no whole copy; use a multiple of {span}",
        )
    elif not fits:
        notes.insert(
            0,
            f"does not fit: needs {need / GB:.1f} GB per GPU, {room / GB:.1f} GB "
            "usable; the throughput is what it would reach if it did",
        )
    used = ctx.caps.precision_used[index]
    if used == "tf32" and workload.precision == "fp32":
        notes.append(
            f"fp32 convolutions run as TF32 on {acc.id}: cuDNN's default in PyTorch "
            "(torch.backends.cudnn.allow_tf32 = True); predicted at the TF32 rate"
        )
    elif used != workload.precision:
        notes.append(f"{acc.id} has no {workload.precision} units: predicted at {used}")
    if plan is not None and plan.assumed:
        notes.append("plan: " + ", ".join(plan.assumed))
    notes.extend(recipe_caveats(workload))
    notes.extend(ctx.calibrated.notes)
    carried = carried_note(ctx.calibrated, ctx.catalog, index, gpus)
    notes.extend([carried] if carried else [])
    notes.extend(profile_notes(profile, ctx.calibrated, ctx.workload, ctx.lent_figures))
    bottleneck = BOTTLENECKS[int(p.bottleneck[0])]
    notes.append(limit_text(int(p.bottleneck[0]), float(p.utilization[0]), gpus))
    expected = expected_error(workload, ctx.calibrated.measured)
    accuracy = error_note(expected, workload, suggest=profile is None)
    notes.extend([f"accuracy: {accuracy}"] if accuracy else [])
    return Prediction(
        accelerator=acc.id,
        gpus=gpus,
        throughput=float(p.throughput[0]),
        step_time_s=float(p.step_s[0]),
        bottleneck=bottleneck,
        fits_in_memory=fits,
        utilization=round(float(p.utilization[0]), 4),
        tokens_per_s=float(p.tokens_per_s[0]) if p.tokens_per_s is not None else None,
        scaling_efficiency=round(float(p.scaling_efficiency[0]), 4),
        breakdown=Breakdown(
            compute_s=float(p.compute_s[0]),
            memory_s=float(p.memory_s[0]),
            host_transfer_s=float(p.host_transfer_s[0]),
            input_pipeline_s=float(p.input_s[0]),
            interconnect_s=float(p.interconnect_s[0]),
        ),
        memory=memory,
        calibrated_from=ctx.calibrated.source,
        notes=notes,
        plan=plan,
        expected_error=expected,
    )
