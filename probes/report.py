"""Show a probe run: the progress bar while it runs and the Rich summary of the profile."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from recommender.profile import Diagnosis, Figure, Profile, WorkloadProfile

__all__ = ["budget_progress", "diagnoses_view", "render"]

_SEVERITY = {"error": "bold red", "warning": "yellow", "info": "cyan"}


@contextlib.contextmanager
def budget_progress(
    console: Console, seconds: float, started: float
) -> Iterator[Callable[[str], None]]:
    """A bar that fills with the time budget; yields ``on_phase(name)`` to label it."""
    progress = Progress(
        TextColumn("[bold]probe[/] {task.description:<9}"),
        BarColumn(),
        TextColumn("{task.completed:>4.0f}/{task.total:.0f} s"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task("setup", total=seconds)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.2):
            progress.update(task, completed=min(seconds, time.monotonic() - started))

    def on_phase(name: str) -> None:
        progress.update(task, description=name, completed=time.monotonic() - started)

    ticker = threading.Thread(target=tick, daemon=True)
    with progress:
        ticker.start()
        try:
            yield on_phase
        finally:
            stop.set()
            ticker.join(timeout=1)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _fig_row(label: str, fig: Figure | None) -> tuple[str, ...]:
    if fig is None:
        return (label, "-", "", "", "", "")
    pct = f"{fig.fraction_of_peak:.0%}" if fig.fraction_of_peak is not None else "-"
    return (label, _num(fig.value), fig.unit, _num(fig.spec_peak), pct, str(fig.repeats))


def _capabilities(profile: Profile) -> Table:
    caps = profile.capabilities
    t = Table(title="Measured capabilities (median of repeats)", header_style="bold")
    for col, justify in (
        ("measure", "left"),
        ("value", "right"),
        ("unit", "left"),
        ("spec peak", "right"),
        ("of peak", "right"),
        ("n", "right"),
    ):
        t.add_column(col, justify="right" if justify == "right" else "left")
    rows = [_fig_row(f"matmul {p}", f) for p, f in caps.matmul_tflops.items()]
    rows += [_fig_row(f"matmul {p} sustained", f) for p, f in caps.matmul_sustained_tflops.items()]
    rows.append(_fig_row("device memory", caps.memory_bandwidth_gbs))
    for name, cb in (("h2d", caps.h2d_gbs), ("d2h", caps.d2h_gbs)):
        if cb is not None:
            rows += [
                _fig_row(f"{name} pinned", cb.pinned),
                _fig_row(f"{name} pageable", cb.pageable),
            ]
    if caps.peer_gbs is not None:
        rows.append(_fig_row("peer gpu0->gpu1", caps.peer_gbs))
    rows.append(_fig_row("storage read", caps.storage_read_mbs))
    rows += [_fig_row(f"decode {c} /core", f) for c, f in caps.decode_mbs_per_core.items()]
    for row in rows:
        t.add_row(*row)
    if caps.skipped:
        t.caption = "skipped: " + "; ".join(caps.skipped)
    return t


def _workload(w: WorkloadProfile) -> Table:
    t = Table(
        title=f"Workload {w.name}: {w.throughput_samples_per_s:.4g} samples/s "
        f"(batch {w.batch_size}, {w.steps_measured} steps)",
        header_style="bold",
    )
    for col in ("stage", "mean ms", "median ms", "p90 ms", "of step"):
        t.add_column(col, justify="left" if col == "stage" else "right")
    step = w.step_s.mean or 1.0
    for label, s in (
        ("next(batches)", w.data_wait_s),
        ("host->device", w.h2d_s),
        ("compute", w.compute_s),
        ("device idle", w.idle_s),
        ("step", w.step_s),
    ):
        t.add_row(
            label,
            _num(s.mean * 1e3),
            _num(s.median * 1e3),
            _num(s.p90 * 1e3),
            f"{s.mean / step:.0%}",
        )
    facts = [
        f"FLOPs/sample {_num(w.flops_per_sample)}",
        f"achieved {_num(w.achieved_tflops)} TFLOP/s",
        f"to device {_num(w.bytes_to_device_per_sample)} B/sample"
        + ("" if w.batches_pinned else " (pageable)"),
    ]
    if w.peak_memory_bytes is not None:
        facts.append(f"peak memory {w.peak_memory_bytes / 2**30:.2f} GiB ({w.peak_memory_kind})")
    if w.gpu_utilization is not None:
        facts.append(f"NVML GPU util {w.gpu_utilization.mean_percent:.0f}%")
    t.caption = "; ".join(facts)
    return t


def diagnoses_view(diagnoses: list[Diagnosis]) -> RenderableType:
    """Each finding with its severity, code and remedies."""
    lines: list[str] = []
    for d in diagnoses:
        style = _SEVERITY[d.severity]
        lines.append(f"[{style}]{d.severity}[/] [bold]{d.code}[/]: {escape(d.message)}")
        lines += [f"    - {escape(r)}" for r in d.remedies]
    return Panel("\n".join(lines) or "no findings", title="Doctor", expand=False)


def _header(p: Profile) -> str:
    m = p.machine
    where = " / ".join(x for x in (m.cloud, m.instance_type) if x) or "unknown cloud"
    acc = f"{m.gpu_count} x {m.accelerator}" if m.device == "cuda" else "CPU only"
    versions = ", ".join(
        f"{k} {v}"
        for k, v in (
            ("driver", m.driver_version),
            ("CUDA", m.cuda_version),
            ("torch", m.torch_version),
        )
        if v
    )
    mem = f"{m.memory_bytes / 2**30:.0f} GiB" if m.memory_bytes else "? GiB"
    return escape(
        f"{m.hostname} ({where}): {m.cpu_model or 'CPU'}, {m.vcpus} vCPUs, {mem}; "
        f"device {m.device}: {acc}; {versions}; probe ran {_num(p.elapsed_s)} of "
        f"{_num(p.budget_s)} s"
    )


def render(profile: Profile) -> RenderableType:
    """The whole summary: machine, capabilities, workload, verdict, doctor findings."""
    parts: list[RenderableType] = [_header(profile), _capabilities(profile)]
    if profile.workload is not None:
        parts.append(_workload(profile.workload))
    c = profile.classification
    if c is not None:
        body = "\n".join(f"- {escape(r)}" for r in c.reasons)
        parts.append(
            Panel(body, title=f"[bold]{c.bound}[/], limited by {c.limiting_stage}", expand=False)
        )
    if profile.diagnoses:
        parts.append(diagnoses_view(profile.diagnoses))
    return Group(*parts)
