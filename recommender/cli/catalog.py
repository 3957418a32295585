"""``recommender catalog list|validate``: browse offers and check the catalog files."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recommender.cli._app import CatalogDirOption, catalog_app, load_catalog_or_exit
from recommender.cli._output import (
    Column,
    Format,
    FormatOption,
    WideOption,
    err,
    print_csv,
    print_json,
    print_rows,
)

if TYPE_CHECKING:
    from recommender.catalog import Offer
    from recommender.catalog.offers import OffersTable

__all__ = ["EXIT_NO_MATCH", "list_offers", "validate"]

EXIT_NO_MATCH = 3  # as `recommend` without a pick: the filters are valid but match nothing


def _positive(what: str) -> Callable[[float | None], float | None]:
    def check(value: float | None) -> float | None:
        if value is not None and not (0 < value < math.inf):
            raise typer.BadParameter(f"{value:g} is not {what} (it must be above 0)")
        return value

    return check


def _known_or_exit(table: OffersTable, clouds: list[str] | None, regions: list[str] | None) -> None:
    from recommender.scoring.constraint_check import unknown_names

    known = ", ".join(table.cloud_names)
    problems = unknown_names("cloud", "--cloud", clouds or [], table.cloud_names, known)
    problems += unknown_names(
        "region", "--region", regions or [], table.region_names, "`catalog list` lists them"
    )
    for problem in problems:
        err.print(f"[bold red]error:[/] {problem.message}", highlight=False)
    if problems:
        raise typer.Exit(2)


@catalog_app.command("list")
def list_offers(
    cloud: Annotated[
        list[str] | None, typer.Option("--cloud", help="aws, gcp or azure (repeatable).")
    ] = None,
    region: Annotated[
        list[str] | None, typer.Option("--region", help="Region id (repeatable).")
    ] = None,
    gpu: Annotated[
        list[str] | None, typer.Option("--gpu", help="Accelerator, any spelling (repeatable).")
    ] = None,
    min_gpu_memory: Annotated[
        float | None,
        typer.Option("--min-gpu-memory", help="GB per GPU.", callback=_positive("GB per GPU")),
    ] = None,
    max_price: Annotated[
        float | None,
        typer.Option("--max-price", help="USD per hour.", callback=_positive("a price per hour")),
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option("--gpus", min=1, help="Exactly this many GPUs per instance."),
    ] = None,
    purchase: Annotated[
        list[str] | None,
        typer.Option(
            "--purchase", help="on-demand, spot or reservation (repeatable; default all)."
        ),
    ] = None,
    spot: Annotated[
        bool | None,
        typer.Option(
            "--spot/--on-demand", help="Only spot, or only on-demand rows (default both)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="Rows in the table (json/csv give all).")] = 50,
    fmt: FormatOption = Format.table,
    wide: WideOption = False,
    catalog_dir: CatalogDirOption = None,
) -> None:
    """List offers (instance x region x pricing), cheapest first.

    An unknown cloud, region or accelerator is an error (exit 2, with the closest names);
    filters that together match no offer exit 3 after saying so.
    """
    from recommender.catalog.query import select_offers

    catalog = load_catalog_or_exit(catalog_dir)
    _known_or_exit(catalog.offers, cloud, region)
    try:
        index = select_offers(
            catalog,
            clouds=cloud,
            regions=region,
            gpus=gpu,
            min_gpu_memory_gb=min_gpu_memory,
            max_price=max_price,
            spot=spot,
            gpu_count=gpus,
            purchase=purchase,
        )
    except LookupError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    offers = catalog.offers.offers(index)
    if not offers:
        err.print("no offer matches every filter given: drop or widen one", highlight=False)
        if fmt is Format.table:
            raise typer.Exit(EXIT_NO_MATCH)
    if fmt is Format.json:
        print_json([o.as_dict() for o in offers])
    elif fmt is Format.csv:
        print_csv([o.as_dict() for o in offers])
    else:
        _print_table(offers, limit, fmt, wide)
    if not offers:
        raise typer.Exit(EXIT_NO_MATCH)


OFFER_COLUMNS = (
    Column("cloud", drop=2),
    Column("region", ident=True),
    Column("instance", ident=True),
    Column("accelerators", ident=True),
    Column("GB/GPU", right=True, drop=1),
    Column("vCPUs", right=True, drop=4),
    Column("RAM GiB", right=True, drop=5),
    Column("pricing"),
    Column("USD/h", right=True),
)


def _print_table(offers: list[Offer], limit: int, fmt: Format, wide: bool) -> None:
    rows = [
        (
            o.cloud,
            o.region,
            o.instance_type,
            f"{o.gpus}x {o.accelerator}",
            f"{o.gpu_memory_gb:g}",
            f"{o.vcpus:g}",
            f"{o.memory_gib:g}",
            o.pricing if o.purchase != "reservation" else "reservation only",
            f"{o.price_per_hour:.4f}",
        )
        for o in offers[:limit]
    ]
    title = f"{len(offers)} offers" + (f" (cheapest {limit} shown)" if len(offers) > limit else "")
    print_rows(title, OFFER_COLUMNS, rows, fmt, wide=wide)


@catalog_app.command()
def validate(
    directory: Annotated[
        Path | None, typer.Argument(help="Catalog directory (default: bundled).")
    ] = None,
    warnings: Annotated[
        bool, typer.Option("--warnings/--no-warnings", help="Also print warnings.")
    ] = True,
    fmt: FormatOption = Format.table,
) -> None:
    """Check every catalog file; exit 1, one line per problem, when any is broken."""
    from recommender.catalog import default_catalog_dir, validate_catalog

    where = directory or default_catalog_dir()
    problems = validate_catalog(where)
    errors = [p for p in problems if p.severity == "error"]
    shown = problems if warnings else errors
    if fmt is Format.json:
        print_json(
            {
                "directory": str(where),
                "errors": len(errors),
                "warnings": len(problems) - len(errors),
                "problems": [p.as_dict() for p in shown],
            }
        )
    else:
        for p in shown:
            typer.echo(str(p))
        summary = f"{len(errors)} error(s), {len(problems) - len(errors)} warning(s) in {where}"
        err.print(("[red]" if errors else "[green]") + summary, highlight=False)
    if errors:
        raise typer.Exit(1)
