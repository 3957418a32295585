"""``recommender recommend`` and ``recommender predict``: the scoring engine on the command line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn, TypeVar

import typer

from recommender.cli._app import CatalogDirOption, app, load_catalog_or_exit
from recommender.cli._output import (
    Column,
    Format,
    FormatOption,
    WideOption,
    err,
    fail,
    out,
    print_json,
    print_rows,
    table,
)

if TYPE_CHECKING:  # the engine loads when a command runs, not for --help
    from recommender.catalog.problems import Problem, RecommenderError
    from recommender.catalog.yamlfile import LineMap
    from recommender.profile import Profile
    from recommender.scoring import Pick, Prediction, Recommendation
    from recommender.workload import Workload

__all__ = ["EXIT_NO_PICK", "Objective", "predict_command", "recommend_command"]

# `recommend` found no offer meeting every constraint and target (the answer says which
# left offers out); 2 is bad input, 1 a broken catalog (README, "Recommend an instance").
EXIT_NO_PICK = 3

# recommender.scoring.results.Objective, spelled here so that --help needs no engine import
# (tests/cli checks that the two agree).
Objective = Literal["cheapest", "fastest", "balanced"]

WorkloadArg = Annotated[Path, typer.Argument(help="Workload file (YAML or JSON).")]
ProfileOption = Annotated[
    Path | None,
    typer.Option(
        "--profile",
        help="A probe profile JSON (`recommender probe`): of this workload it calibrates; of "
        "another, its measured matmul and memory rates replace the shipped ones for its GPU.",
    ),
]


def _invalid(path: Path, problems: Sequence[Problem], exc: Exception) -> NoReturn:
    err.print(f"[bold red]error:[/] invalid workload {path}:", highlight=False)
    for problem in problems:
        err.print(f"  {problem}", highlight=False, markup=False)
    raise typer.Exit(2) from exc


def _workload(path: Path) -> tuple[Workload, LineMap]:
    from recommender.catalog.problems import WorkloadError
    from recommender.workload_file import read_workload_document

    try:
        return read_workload_document(path)
    except WorkloadError as exc:
        _invalid(path, exc.problems, exc)


def _refused(path: Path, lines: LineMap, exc: RecommenderError) -> NoReturn:
    """The engine refused the workload: its problems placed in the file, else the message."""
    from recommender.catalog.problems import WorkloadError
    from recommender.workload_file import locate

    if isinstance(exc, WorkloadError):
        _invalid(path, locate(exc.problems, lines), exc)
    fail(str(exc))


def _profile(path: Path | None) -> Profile | None:
    if path is None:
        return None
    from pydantic import ValidationError

    from recommender.profile import Profile

    try:
        return Profile.model_validate_json(path.read_bytes())
    except OSError as exc:
        fail(f"cannot read profile {path}: {exc.strerror}")
    except ValidationError as exc:
        fail(
            f"{path} is not a probe profile: {exc.errors()[0]['msg']} at "
            f"{'.'.join(str(p) for p in exc.errors()[0]['loc'])}"
        )


R = TypeVar("R", "Recommendation", "Prediction")


def _show(result: R, fmt: Format, as_table: Callable[[R], None]) -> None:
    if fmt is Format.json:
        print_json(result.model_dump(mode="json"))
    else:
        as_table(result)


@app.command("recommend")
def recommend_command(
    workload: WorkloadArg,
    objective: Annotated[
        Objective, typer.Option(help="cheapest, fastest or balanced.")
    ] = "balanced",
    top: Annotated[int, typer.Option(min=1, max=50, help="How many picks.")] = 5,
    profile: ProfileOption = None,
    fmt: FormatOption = Format.table,
    wide: WideOption = False,
    catalog_dir: CatalogDirOption = None,
) -> None:
    """Rank every offer for WORKLOAD: predicted time, cost, and why.

    Exit status: 0 with picks; 3 when no offer meets every constraint and target (the
    answer names each one that left offers out, and how many); 2 for bad input; 1 for a
    broken catalog.
    """
    from recommender.catalog.problems import RecommenderError
    from recommender.scoring import recommend

    w, lines = _workload(workload)
    catalog = load_catalog_or_exit(catalog_dir)
    try:
        result = recommend(
            w, catalog=catalog, objective=objective, top=top, profile=_profile(profile)
        )
    except RecommenderError as exc:
        _refused(workload, lines, exc)
    if fmt is Format.json:
        print_json(result.model_dump(mode="json"))
    else:
        _print_recommendation(result, fmt, wide)
    if not result.picks:
        raise typer.Exit(EXIT_NO_PICK)


RECOMMEND_COLUMNS = (
    Column("#", right=True),
    Column("cloud", drop=2),
    Column("region", ident=True),
    Column("instance", ident=True),
    Column("accelerators", ident=True),
    Column("pricing", drop=3),
    Column("USD/h", right=True, drop=1),
    Column("throughput", right=True, drop=5, legend="in the lines below"),
    Column("time", right=True),  # renamed "hours" or "p95 ms" below
    Column("cost", right=True),
    Column("bound", drop=4),
)


NARROW_WIDTH = 100  # below it, instance and region share a column
CENTS_BELOW_USD = 100.0  # cents are noise on larger predicted totals


def _usd(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:,.2f}" if value < CENTS_BELOW_USD else f"${value:,.0f}"


def _placement(p: Pick) -> str:
    """The instance type, with the node count of a multi-node pick (``4 x p5.48xlarge``)."""
    return f"{p.nodes} x {p.instance_type}" if p.nodes > 1 else p.instance_type


def _pick_row(p: Pick, training: bool) -> tuple[object, ...]:
    time = (
        f"{p.predicted.total_hours:.2f}" if training else f"{p.predicted.p95_latency_ms or 0:.0f}"
    )
    cost = p.cost.total_usd if p.cost.total_usd is not None else p.cost.per_million_usd
    return (
        p.rank,
        p.cloud,
        p.region or "-",
        _placement(p),
        f"{p.gpus}x {p.accelerator}",
        p.pricing,
        f"{p.price_per_hour:.3f}",
        f"{p.predicted.throughput:.4g}",
        time,
        _usd(cost),
        p.predicted.bottleneck,
    )


def _print_recommendation(
    r: Recommendation, fmt: Format = Format.table, wide: bool = False
) -> None:
    training = r.workload_class in ("training", "large-scale-training")
    rows = [_pick_row(p, training) for p in r.picks]
    columns = list(RECOMMEND_COLUMNS)
    columns[8] = Column("hours" if training else "p95 ms", right=True)
    if fmt is Format.table and not wide and out.width < NARROW_WIDTH:
        # one column for instance and region: they wrap onto two lines, neither is cut
        columns[2:4] = [Column("instance region", ident=True)]
        rows = [(*row[:2], f"{row[3]} {row[2]}", *row[4:]) for row in rows]
    title = (
        f"{r.workload} ({r.workload_class}, {r.objective}): {r.offers_feasible} of "
        f"{r.offers_considered} offers feasible"
    )
    if not r.picks:
        out.print(f"{title}: no pick.", highlight=False)
    else:
        print_rows(title, columns, rows, fmt, wide=wide)
    if fmt is not Format.table:
        return
    for p in r.picks[:3]:
        same = [a.instance_type for a in p.alternatives if a.relation == "same-choice"]
        why = [*p.why, *([f"the same choice as {', '.join(map(str, same))}"] if same else [])]
        out.print(f"[bold]#{p.rank} {_placement(p)}[/]: " + "; ".join(why), highlight=False)
    if r.excluded:
        out.print(
            "Ruled out: " + ", ".join(f"{n} {k}" for k, n in r.excluded.items()), highlight=False
        )
    for line in r.advice:
        out.print(f"[yellow]advice:[/] {line}", highlight=False)
    if r.catalog is not None and r.catalog.retrieved is not None:
        out.print(
            f"[dim]prices retrieved {r.catalog.retrieved.isoformat()} "
            f"({r.catalog.price_age_days} days old); {r.catalog.flagged_prices} price rows "
            "flagged by `recommender catalog validate`[/]",
            highlight=False,
        )


@app.command("predict")
def predict_command(
    workload: WorkloadArg,
    accelerator: Annotated[str, typer.Option("--accelerator", "-a", help="Any spelling.")],
    gpus: Annotated[int, typer.Option(min=1, max=64, help="GPUs in the instance.")] = 1,
    nodes: Annotated[
        int, typer.Option(min=1, max=4096, help="Instances (a multi-node plan when > 1).")
    ] = 1,
    profile: ProfileOption = None,
    fmt: FormatOption = Format.table,
    catalog_dir: CatalogDirOption = None,
) -> None:
    """Predict WORKLOAD on GPUS x ACCELERATOR: throughput, step time, bottleneck, memory fit."""
    from recommender.catalog.problems import RecommenderError
    from recommender.scoring import predict

    w, lines = _workload(workload)
    catalog = load_catalog_or_exit(catalog_dir)
    try:
        result = predict(
            w, accelerator, gpus, nodes=nodes, catalog=catalog, profile=_profile(profile)
        )
    except RecommenderError as exc:
        _refused(workload, lines, exc)
    _show(result, fmt, _print_prediction)


def _print_prediction(p: Prediction) -> None:
    b = p.breakdown
    rows = [
        ("throughput", f"{p.throughput:.4g} /s"),
        ("step time", f"{p.step_time_s * 1e3:.3g} ms"),
        ("bottleneck", p.bottleneck),
        ("utilisation", f"{p.utilization:.0%}"),
        (
            "fits in memory",
            f"{'yes' if p.fits_in_memory else 'NO'} ({p.memory.needed_gb:g} of "
            f"{p.memory.available_gb:g} GB per GPU)",
        ),
        ("compute / memory", f"{b.compute_s * 1e3:.3g} / {b.memory_s * 1e3:.3g} ms"),
        ("input / host copy", f"{b.input_pipeline_s * 1e3:.3g} / {b.host_transfer_s * 1e3:.3g} ms"),
        ("interconnect", f"{b.interconnect_s * 1e3:.3g} ms"),
    ]
    if p.tokens_per_s is not None:
        rows.insert(1, ("tokens/s", f"{p.tokens_per_s:.4g}"))
    if p.gpus > 1 or p.nodes > 1:
        rows.append(("scaling efficiency", f"{p.scaling_efficiency:.0%}"))
    if p.expected_error is not None:
        e = p.expected_error
        rows.append(("held-out error", f"{e.median_pct:.0f} % median, {e.mean_pct:.0f} % mean"))
    title = f"{p.gpus} x {p.accelerator}"
    if p.nodes > 1:
        title = f"{p.nodes} nodes x {title}"
    out.print(table(title, ["", ""], rows))
    for remedy in p.memory.remedies:
        out.print(f"[yellow]to fit:[/] {remedy}", highlight=False)
    for note in p.notes:
        out.print(f"[dim]note:[/] {note}", highlight=False)
    if p.calibrated_from:
        out.print(f"[dim]calibrated from {p.calibrated_from}[/]", highlight=False)
