"""The Rich summary shows every section, and text from outside is not read as markup."""

from __future__ import annotations

import io
import time

from rich.console import Console

from probes.report import budget_progress, render
from recommender.profile import Classification, Diagnosis
from tests.test_profile import make_profile


def _text(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_summary_has_machine_capabilities_workload_verdict_and_doctor() -> None:
    profile = make_profile().model_copy(
        update={
            "classification": Classification(
                bound="transfer-bound",
                limiting_stage="data-loading",
                gpu_busy_fraction=0.4,
                reasons=["next(batches) waits 20 ms"],
            ),
            "diagnoses": [
                Diagnosis(
                    code="torch-missing",
                    severity="error",
                    message="no torch",
                    remedies=["pip install 'instance-recommender[probe]'"],
                )
            ],
        }
    )
    text = _text(render(profile))
    assert "vm-1" in text and "1 x H200-SXM-141GB" in text
    assert "matmul bf16" in text and "989" in text and "71%" in text
    assert "h2d pinned" in text
    assert "Workload reference:transformer-train: 80 samples/s" in text
    assert "transfer-bound, limited by data-loading" in text
    assert "next(batches) waits 20 ms" in text
    assert "pip install 'instance-recommender[probe]'" in text  # brackets survive


def test_the_progress_bar_labels_phases_and_fills_with_time() -> None:
    console = Console(file=io.StringIO(), width=100, force_terminal=True)
    with budget_progress(console, 10.0, time.monotonic() - 4.0) as on_phase:
        on_phase("matmul")
        time.sleep(0.35)  # past a refresh of the bar
    frames = console.file.getvalue()  # type: ignore[attr-defined]
    assert "matmul" in frames and "4/10 s" in frames
