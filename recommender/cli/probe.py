"""``recommender probe`` and ``recommender doctor``: measure this machine and a workload.

torch is imported only when these commands run, so the rest of the CLI works without the
``probe`` extra; without torch they fail naming the ``pip install`` to run. Exit codes:
0 done; 1 the profile carries an error diagnosis (CUDA OOM, workload failed, CUDA
unusable) or the POST failed (the profile is still written); 2 bad options.
"""

from __future__ import annotations

import enum
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from recommender.cli._app import app
from recommender.cli._output import Format, FormatOption, err, fail, out, print_json

if TYPE_CHECKING:
    from recommender.catalog import Accelerator
    from recommender.profile import Diagnosis, Profile

__all__ = ["doctor", "probe"]

INSTALL_HINT = "pip install 'instance-recommender[probe]'"


class DeviceChoice(enum.StrEnum):
    auto = "auto"
    cuda = "cuda"
    cpu = "cpu"


DeviceOption = Annotated[
    DeviceChoice,
    typer.Option("--device", help="auto: the GPU when CUDA works, else the CPU."),
]


def _process_start() -> float | None:
    """When this process started, on the ``time.monotonic`` clock (Linux; else now), or
    ``None`` when the command runs inside another program's process (a test, a notebook).

    The budget counts from here, so interpreter start-up and imports are inside it: the
    probe ends within ``--seconds`` as measured by ``time recommender probe ...``. In a
    process that is not ours the budget starts once torch is imported (``probe``): a first
    import of torch takes 2-4 s on a small VM, the whole of a short budget, and that host
    paid for it whether or not it runs the probe again.
    """
    now = time.monotonic()
    program = Path(sys.argv[0])
    ours = program.name == "recommender" or program.parts[-2:] == ("recommender", "__main__.py")
    if not ours:  # ``python -m pytest`` runs pytest/__main__.py: a process that is not ours
        return None
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age < 60 else now


def _spec_sheets() -> list[Accelerator]:
    """The catalog's accelerator spec sheets for the probe (``accelerators.yaml`` only: the
    cloud files are not needed); without them the probe reports figures without peaks."""
    from recommender.catalog import CatalogError, default_catalog_dir
    from recommender.catalog.schema import AcceleratorFile
    from recommender.catalog.yamlfile import load_document

    try:
        path = default_catalog_dir() / "accelerators.yaml"
        return list(load_document(path, AcceleratorFile).model.accelerators)
    except (CatalogError, OSError) as exc:
        err.print(f"[yellow]warning:[/] the accelerator catalog cannot be loaded ({exc})")
        return []


def _require_torch() -> None:
    if importlib.util.find_spec("torch") is None:
        fail("the probe needs PyTorch, which is not installed", code=2, hint=escape(INSTALL_HINT))


def _check_format(fmt: Format) -> None:
    if fmt is Format.csv:
        fail("--format csv is not available here; use table or json", code=2)


def _show_diagnoses(diagnoses: list[Diagnosis]) -> None:
    from probes.report import diagnoses_view

    err.print(diagnoses_view(diagnoses))


def _post(profile: Profile, url: str, api_key: str | None, seconds_left: float) -> bool:
    from probes.upload import PostError, post_profile

    try:
        result = post_profile(profile, url, api_key, timeout_s=max(5.0, seconds_left))
    except PostError as exc:
        err.print(f"[bold red]error:[/] the profile was not sent: {escape(str(exc))}")
        return False
    err.print(f"sent the profile to {result.url} (HTTP {result.status})", highlight=False)
    return True


@app.command()
def probe(
    device: DeviceOption = DeviceChoice.auto,
    workload: Annotated[
        str,
        typer.Option(
            "--workload",
            help="reference:transformer-train|cnn-train|recsys-train|llm-decode, "
            "or module:function (a function(device) returning (batches, step)).",
        ),
    ] = "reference:transformer-train",
    seconds: Annotated[
        float, typer.Option("--seconds", min=2.0, help="Time budget; the probe ends within it.")
    ] = 60.0,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the profile JSON here.")
    ] = None,
    post_to: Annotated[
        str | None,
        typer.Option("--post-to", help="Service URL to POST the profile to (/v1/profiles)."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar="RECOMMENDER_API_KEY", help="Sent as X-API-Key."),
    ] = None,
    scratch_dir: Annotated[
        Path | None,
        typer.Option("--scratch-dir", help="Directory on the disk to measure (default: TMPDIR)."),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Measure this machine and a workload; print (and save, and send) the profile."""
    started = _process_start()
    _check_format(fmt)
    if scratch_dir is not None and not scratch_dir.is_dir():
        fail(f"--scratch-dir {scratch_dir}: no such directory", code=2)
    _require_torch()
    from probes.report import budget_progress, render
    from probes.runner import DeviceUnavailableError, ProbeOptions, run_probe
    from probes.timing import Budget
    from probes.workloads import WorkloadLoadError
    from recommender.catalog import AcceleratorNames

    started = time.monotonic() if started is None else started
    # The reserve covers the report, the output file and the exit of an interpreter that
    # loaded torch (a second or more on a small VM).
    budget = Budget(seconds, reserve_s=min(2.0 + 0.03 * seconds, 0.25 * seconds), started=started)
    accelerators = _spec_sheets()
    opts = ProbeOptions(
        device.value,
        workload,
        seconds,
        scratch_dir,
        accelerators=accelerators,
        names=AcceleratorNames(accelerators) if accelerators else None,
    )
    try:
        with budget_progress(err, seconds, started) as on_phase:
            opts.on_phase = on_phase
            profile = run_probe(opts, budget=budget)
    except DeviceUnavailableError as exc:
        _show_diagnoses(exc.diagnoses)
        raise typer.Exit(1) from exc
    except WorkloadLoadError as exc:
        fail(escape(str(exc)), code=2)
    if output is not None:
        from recommender.catalog.writer import write_atomic

        write_atomic(output, profile.to_json() + "\n")
    sent = _post(profile, post_to, api_key, budget.end().remaining()) if post_to else True
    if fmt is Format.json:
        print_json(profile.model_dump(mode="json"))
    else:
        out.print(render(profile))
        if output is not None:
            out.print(f"profile written to {output}", highlight=False)
    if profile.has_errors() or not sent:
        raise typer.Exit(1)


@app.command()
def doctor(device: DeviceOption = DeviceChoice.auto, fmt: FormatOption = Format.table) -> None:
    """Check the GPU set-up (driver, torch build, CUDA runtime, NVML) and say what to fix."""
    _check_format(fmt)
    if importlib.util.find_spec("torch") is None:
        from recommender.profile import Diagnosis

        found = [
            Diagnosis(
                code="torch-missing",
                severity="error",
                message="PyTorch is not installed: the probe cannot run",
                remedies=[INSTALL_HINT],
            )
        ]
    else:
        from probes.doctor import environment_checks

        found = environment_checks(device.value)
    if fmt is Format.json:
        print_json([d.model_dump(mode="json") for d in found])
    else:
        from probes.report import diagnoses_view

        out.print(diagnoses_view(found))
    if any(d.severity == "error" for d in found):
        raise typer.Exit(1)
