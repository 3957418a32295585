"""``recommender catalog refresh``: refresh the cloud catalogs from the clouds' own APIs.

Progress goes to stderr as a Rich bar; the result is a diff summary (a table, or JSON on
stdout with ``--format json``). ``--dry-run`` computes and prints the diff and writes
nothing. The command exits 1 when any requested cloud could not be refreshed (missing SDK or
credentials, every region failed, integrity errors, too large a drop); the file of that
cloud is then left byte-for-byte as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from recommender.cli._app import CatalogDirOption, catalog_app
from recommender.cli._output import Format, FormatOption, err, out, print_json, table

if TYPE_CHECKING:  # the refresh stack (and its SDKs) is imported when the command runs
    from recommender.catalog.refresh import RefreshOptions, RefreshReport, RefreshSettings

__all__ = ["refresh"]

SHOWN = 15  # rows of each list in the table output


def _clouds(values: list[str]) -> list[str]:
    from recommender.catalog.refresh import REFRESHERS

    wanted: list[str] = []
    for value in values:
        for name in value.split(","):
            name = name.strip().lower()
            if name == "all":
                wanted.extend(REFRESHERS)
            elif name in REFRESHERS:
                wanted.append(name)
            else:
                raise typer.BadParameter(
                    f"{name!r} is not a cloud; use {', '.join(REFRESHERS)} or all",
                    param_hint="--cloud",
                )
    return list(dict.fromkeys(wanted))


def _share(value: float, option: str) -> float:
    if not 0.0 <= value <= 1.0:
        raise typer.BadParameter(f"{value} is not a share between 0 and 1", param_hint=option)
    return value


def _run_all(
    clouds: list[str], directory: Path, options: RefreshOptions, settings: RefreshSettings
) -> list[RefreshReport]:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from recommender.catalog.refresh import RefreshOptions, refresh_cloud

    reports: list[RefreshReport] = []
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        for cloud in clouds:
            task = bar.add_task(f"refreshing {cloud}", total=None)

            def progress(label: str, done: int, total: int, task: object = task) -> None:
                bar.update(task, description=label, completed=done, total=total or None)  # type: ignore[arg-type]

            opts = RefreshOptions(
                regions=options.regions,
                instance_metadata=options.instance_metadata,
                progress=progress,
            )
            reports.append(refresh_cloud(cloud, directory, opts, settings))
            bar.remove_task(task)
    return reports


@catalog_app.command()
def refresh(
    cloud: Annotated[
        list[str],
        typer.Option("--cloud", help="aws, gcp, azure or all (repeatable, or comma-separated)."),
    ],
    regions: Annotated[
        list[str] | None,
        typer.Option(
            "--regions",
            help="Only these regions (comma-separated or repeated); others keep "
            "their previous rows.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the diff only; write nothing.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Write even if the result drops more than --max-drop.")
    ] = False,
    max_drop: Annotated[
        float,
        typer.Option(
            "--max-drop", help="Refuse a result removing more than this share of previous rows."
        ),
    ] = 0.2,
    price_threshold: Annotated[
        float,
        typer.Option("--price-threshold", help="Report price changes beyond this share."),
    ] = 0.05,
    instance_metadata: Annotated[
        bool | None,
        typer.Option(
            "--instance-metadata/--no-instance-metadata",
            help="Let credential chains ask the cloud's instance metadata endpoint "
            "(default: yes, except when CI is set).",
        ),
    ] = None,
    catalog_dir: CatalogDirOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Refresh cloud catalogs from the AWS, GCP and Azure APIs (checked, atomic, with a diff)."""
    from recommender.catalog.loader import default_catalog_dir
    from recommender.catalog.refresh import RefreshOptions, RefreshSettings

    if fmt is Format.csv:
        raise typer.BadParameter("refresh prints a table or json", param_hint="--format")
    clouds = _clouds(cloud)
    directory = catalog_dir or default_catalog_dir()
    metadata = instance_metadata if instance_metadata is not None else not os.environ.get("CI")
    region_list = tuple(r.strip() for v in regions or [] for r in v.split(",") if r.strip())
    options = RefreshOptions(regions=region_list, instance_metadata=metadata)
    settings = RefreshSettings(
        dry_run=dry_run,
        force=force,
        max_drop=_share(max_drop, "--max-drop"),
        price_threshold=_share(price_threshold, "--price-threshold"),
    )
    reports = _run_all(clouds, directory, options, settings)
    if fmt is Format.json:
        print_json({"dry_run": dry_run, "clouds": [r.as_dict() for r in reports]})
    else:
        for report in reports:
            _print_report(report)
    if any(r.error for r in reports):
        raise typer.Exit(1)


def _print_report(r: RefreshReport) -> None:
    if r.diff is not None:
        out.print(f"[bold]{r.cloud}[/]: {escape(r.diff.summary())}", highlight=False)
        _print_changes(r)
    for region, why in r.failed_regions.items():
        err.print(f"[yellow]warning:[/] {r.cloud} {region} failed: {escape(why)}", highlight=False)
    if r.kept_regions:
        kept = ", ".join(list(r.kept_regions)[:SHOWN])
        more = len(r.kept_regions) - SHOWN
        kept += f" and {more} more (--format json lists them, with reasons)" if more > 0 else ""
        err.print(
            f"{r.cloud}: previous rows kept for {len(r.kept_regions)} region(s): {escape(kept)}",
            highlight=False,
        )
    if r.unknown_accelerators:
        names = escape(", ".join(r.unknown_accelerators))
        err.print(
            f"[yellow]warning:[/] {r.cloud}: accelerators not in accelerators.yaml, not "
            f"imported: {names}",
            highlight=False,
        )
    for note in r.notes[:SHOWN]:
        err.print(f"[dim]note:[/] {escape(note)}", highlight=False)
    if r.error:
        err.print(f"[bold red]error:[/] {r.cloud}: {escape(r.error)}", highlight=False)
    elif r.written:
        out.print(f"{r.cloud}: wrote {escape(str(r.file))}", highlight=False)
    elif r.dry_run:
        out.print(f"{r.cloud}: dry run, {escape(str(r.file))} not written", highlight=False)


def _print_changes(r: RefreshReport) -> None:
    diff = r.diff
    if diff is None or diff.empty:
        return
    rows = (
        [("added", a.label(), "", "") for a in diff.added[:SHOWN]]
        + [("removed", a.label(), "", "") for a in diff.removed[:SHOWN]]
        + [
            ("price", c.row.label(), f"{c.old:.4f} -> {c.new:.4f}", f"{c.share:+.1%}")
            for c in diff.changed[:SHOWN]
        ]
    )
    title = f"{r.cloud} changes (first {SHOWN} of each kind; --format json lists all)"
    out.print(table(title, ["change", "row", "USD/h", ("", "right")], rows))
