"""``recommender catalog import-skypilot DIR``: SkyPilot ``vms.csv`` files -> our YAML catalogs.

Reads the CSVs (``~/.sky/catalogs[/<version>]`` or flat ``<cloud>_*.csv`` files), prints what
the import changed, checks the result as a whole catalog and only then replaces
``<out>/<cloud>.yaml``; a result with integrity errors is refused and nothing is written.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recommender.cli._app import catalog_app
from recommender.cli._output import Format, FormatOption, err, fail, out, print_json, table

if TYPE_CHECKING:  # the catalog stack is imported when the command runs
    from recommender.catalog.names import AcceleratorNames
    from recommender.catalog.problems import Problem
    from recommender.catalog.skypilot import ImportResult, Published

__all__ = ["import_skypilot_command"]


class Cloud(enum.StrEnum):
    aws = "aws"
    azure = "azure"
    gcp = "gcp"


def _names(out_dir: Path) -> AcceleratorNames:
    from recommender.catalog.loader import default_catalog_dir
    from recommender.catalog.names import AcceleratorNames
    from recommender.catalog.problems import display_path
    from recommender.catalog.schema import AcceleratorFile
    from recommender.catalog.yamlfile import load_document

    path = out_dir / "accelerators.yaml"
    if not path.is_file():
        path = default_catalog_dir() / "accelerators.yaml"
    doc = load_document(path, AcceleratorFile, display=display_path(path))
    return AcceleratorNames(doc.model.accelerators)


def _print_problems(head: str, problems: Sequence[Problem]) -> None:
    err.print(f"[bold red]error:[/] {head}", highlight=False)
    for p in problems:  # one line each, unwrapped, so that they can be grepped
        err.print(f"  {p}", highlight=False, markup=False, soft_wrap=True)


def _run_import(
    directory: Path, clouds: list[str] | None, names: AcceleratorNames, retrieved: dt.date | None
) -> ImportResult:
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    from recommender.catalog.skypilot import discover, import_skypilot

    found = discover(directory, clouds)
    if not found:  # let the importer say what is missing, without a progress bar
        return import_skypilot(directory, clouds, names=names)
    steps = sum(len(files) + 1 for files in found.values())
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("importing", total=steps)

        def step(message: str) -> None:
            progress.update(task, description=message, advance=1)

        return import_skypilot(directory, clouds, names=names, retrieved=retrieved, progress=step)


def _summary_table(result: ImportResult, published: Published, dry_run: bool) -> None:
    from recommender.catalog.problems import display_path

    status = {w.path.stem: w for w in published.written}
    rows = []
    for cloud in sorted(result.catalogs):
        s = result.stats(cloud)
        w = status[cloud]
        state = "unchanged" if not w.changed else "would change" if dry_run else "written"
        rows.append(
            (
                cloud,
                s["families"],
                s["instances"],
                s["regions"],
                s["offers"],
                s["fixes"],
                f"{display_path(w.path)} ({state})",
            )
        )
    columns: list[str | tuple[str, str]] = [
        "cloud",
        ("families", "right"),
        ("instances", "right"),
        ("regions", "right"),
        ("offers", "right"),
        ("fixes", "right"),
        "file",
    ]
    out.print(table("SkyPilot import", columns, rows))


def _print_fixes(result: ImportResult, details: bool) -> None:
    for cloud in sorted(result.files):
        lines = result.report.summary_lines(cloud)
        if cloud not in result.catalogs:
            lines.append(f"no instance of a known GPU family: no {cloud}.yaml written")
        out.print(f"[bold]{cloud}[/]: what the import changed", highlight=False)
        for line in lines or ["  nothing"]:
            out.print(f"  {line}", highlight=False, markup=False)
        if details:
            for fix in result.report.for_cloud(cloud):
                out.print(f"    {fix}", highlight=False, markup=False)


def _accounting_table(result: ImportResult) -> None:
    """Per source file: rows read, imported (fixed), skipped by reason, silent drops."""
    rows = []
    for a in result.accounting():
        fixes = ", ".join(f"{k} {n}" for k, n in a.fixes.items())
        skipped = ", ".join(f"{k} {n}" for k, n in a.skipped.items())
        rows.append(
            (a.file, a.read, a.imported, a.fixed, a.skipped_total, len(a.silent), fixes, skipped)
        )
    columns: list[str | tuple[str, str]] = [
        "file",
        ("read", "right"),
        ("imported", "right"),
        ("fixed", "right"),
        ("skipped", "right"),
        ("silent", "right"),
        "fixed by quirk",
        "skipped by reason",
    ]
    out.print(table("Every source row accounted for", columns, rows))


def _print_json(result: ImportResult, published: Published, dry_run: bool) -> None:
    from recommender.catalog.problems import display_path

    written = {w.path.stem: w for w in published.written}
    print_json(
        {
            "dry_run": dry_run,
            "clouds": {
                cloud: {
                    **result.stats(cloud),
                    "file": display_path(written[cloud].path),
                    "changed": written[cloud].changed,
                    "fix_counts": result.report.counts(cloud),
                    "source": result.catalogs[cloud].source.model_dump(mode="json"),
                }
                for cloud in sorted(result.catalogs)
            },
            "accounting": [a.as_dict() for a in result.accounting()],
            "fixes": [f.as_dict() for f in sorted(result.report.fixes)],
            "warnings": [p.as_dict() for p in published.warnings],
        }
    )


def _parse_date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        fail(f"--retrieved {value!r} is not a date", hint="use YYYY-MM-DD, e.g. 2026-05-20")


@catalog_app.command("import-skypilot")
def import_skypilot_command(
    directory: Annotated[
        Path,
        typer.Argument(
            help="SkyPilot CSVs: ~/.sky/catalogs[/<version>] (<cloud>/vms.csv) or a directory "
            "of <cloud>_*.csv files (with an optional provenance.yaml).",
            show_default=False,
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Catalog directory that receives <cloud>.yaml.")
    ] = Path("catalogs"),
    cloud: Annotated[
        list[Cloud] | None, typer.Option("--cloud", help="Only this cloud (repeatable).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Import and check everything, write nothing.")
    ] = False,
    retrieved: Annotated[
        str | None,
        typer.Option(help="Date the CSVs were fetched (YYYY-MM-DD), for the provenance."),
    ] = None,
    details: Annotated[
        bool, typer.Option("--details", help="List every fix, not only the counts.")
    ] = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Import SkyPilot vms.csv catalogs into <out>/{aws,azure,gcp}.yaml, reporting every fix."""
    from recommender.catalog.problems import CatalogError, display_path
    from recommender.catalog.skypilot import SkyPilotFormatError, publish

    clouds = [c.value for c in cloud] if cloud else None
    date = _parse_date(retrieved)
    try:
        names = _names(out_dir)
        result = _run_import(directory, clouds, names, date)
    except (SkyPilotFormatError, FileNotFoundError) as exc:
        fail(str(exc), hint="DIR must hold SkyPilot vms.csv files (see --help)")
    except CatalogError as exc:
        _print_problems("cannot read the import's inputs:", exc.problems)
        raise typer.Exit(2) from exc
    texts = {c: result.text(c) for c in result.catalogs}
    try:
        published = publish(texts, out_dir, dry_run=dry_run)
    except CatalogError as exc:
        errors = [p for p in exc.problems if p.severity == "error"]
        _print_problems(
            f"refused: the imported catalog has {len(errors)} error(s); nothing was written",
            errors,
        )
        raise typer.Exit(1) from exc
    if fmt is Format.json:
        _print_json(result, published, dry_run)
        return
    _summary_table(result, published, dry_run)
    _accounting_table(result)
    _print_fixes(result, details)
    out.print(
        f"{len(published.warnings)} warning(s) remain in the data: "
        f"`recommender catalog validate {display_path(out_dir)}` lists them.",
        highlight=False,
    )
