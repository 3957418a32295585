"""How far off a prediction typically is: the engine's error on published measurements it
was not fitted to, per workload class, attached to every prediction and recommendation.

``heldout.json`` is written by ``benchmarks/accuracy.py --write`` from the same
leave-one-source-out run that prints the README's accuracy table (each source's rows scored
by constants fitted on the other sources only), so the figure a user sees is the one the
benchmark measured, not a claim. A prediction scaled from a baseline of the user's own
workload (``baseline`` or a probe profile of it) is judged by the error of that scaling
between two accelerators ("with a baseline"); one from the model alone by the error of the
absolute rate ("without").

The classes are the benchmark's: ``training``, ``inference`` (anything but a decoder-only
LLM's generation loop: CNNs, encoders, diffusion, Whisper), ``llm-serving`` and
``llm-decode`` (one stream at batch 1, as llama.cpp's ``llama-bench`` runs it). Edge devices
have no published rows to be judged on, so they get none.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from recommender.scoring.results import AccuracyClass, ExpectedError
from recommender.workload import Workload

__all__ = [
    "HeldOutClass",
    "HeldOutErrors",
    "HeldOutFile",
    "accuracy_class",
    "error_note",
    "expected_error",
    "held_out",
]

HELD_OUT_FILE = "heldout.json"


class HeldOutErrors(BaseModel):
    """One class's held-out absolute errors, in percent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int = Field(ge=0, description="Pairs (with a baseline) or rows (without) scored.")
    mean_pct: float | None = Field(default=None, ge=0)
    median_pct: float | None = Field(default=None, ge=0)


class HeldOutClass(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    with_baseline: HeldOutErrors
    without_baseline: HeldOutErrors


class HeldOutFile(BaseModel):
    """``heldout.json``: what ``benchmarks/accuracy.py --write`` measured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = Field(min_length=1)
    rows: int = Field(gt=0)
    sources: int = Field(gt=0)
    classes: dict[AccuracyClass, HeldOutClass]


@cache
def held_out() -> HeldOutFile:
    """The packaged ``heldout.json``."""
    text = resources.files("recommender.scoring").joinpath(HELD_OUT_FILE).read_text("utf-8")
    return HeldOutFile.model_validate_json(text)


def accuracy_class(w: Workload) -> AccuracyClass | None:
    """The benchmark class ``w`` is judged in (None for edge devices)."""
    if w.kind == "edge":
        return None
    if w.kind == "training":
        return "training"
    stack = w.model.transformer
    if not w.is_llm_serving or stack is None or stack.type != "decoder":
        return "inference"
    single_stream = "batch_size" in w.model_fields_set and w.batch_size == 1
    return "llm-decode" if single_stream else "llm-serving"


def expected_error(w: Workload, calibrated: bool) -> ExpectedError | None:
    """The held-out error of ``w``'s class, with a baseline when ``calibrated`` (the
    prediction is scaled from a measurement of ``w`` itself), else without."""
    cls = accuracy_class(w)
    data = held_out()
    found = data.classes.get(cls) if cls is not None else None
    if cls is None or found is None:
        return None
    errors = found.with_baseline if calibrated else found.without_baseline
    if errors.mean_pct is None or errors.median_pct is None:
        return None
    return ExpectedError(
        accuracy_class=cls,
        with_baseline=calibrated,
        median_pct=errors.median_pct,
        mean_pct=errors.mean_pct,
        scored=errors.count,
        method=data.method,
    )


def error_note(e: ExpectedError | None, w: Workload, *, suggest: bool = False) -> str | None:
    """``e``, the held-out error of ``w``'s prediction (:func:`expected_error`), in words;
    with ``suggest`` (a prediction from the model alone), also how much a measurement of ``w``
    would tighten it."""
    if e is None:
        return None
    calibrated = e.with_baseline
    basis = "scaled from a measurement of this workload" if calibrated else "from the model alone"
    text = (
        f"{e.accuracy_class} predictions {basis} were off by {e.median_pct:.0f} % (median; "
        f"mean {e.mean_pct:.0f} %) on published measurements held out of the fit"
    )
    scaled = expected_error(w, True) if suggest and not calibrated else None
    if scaled is not None and scaled.median_pct < e.median_pct:
        text += (
            "; a baseline measurement of this workload (`baseline:` or `recommender probe`) "
            f"makes them sharper: {scaled.median_pct:.0f} %"
        )
    return text
