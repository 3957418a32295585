"""The Typer application objects every command module registers on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recommender.cli._output import err

if TYPE_CHECKING:
    from recommender.catalog import Catalog

__all__ = ["CatalogDirOption", "app", "catalog_app", "load_catalog_or_exit"]

app = typer.Typer(
    name="recommender",
    help="Which cloud GPU instance (or edge device) should this ML workload run on?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
catalog_app = typer.Typer(
    help="Inspect, validate, import and refresh the instance catalogs.", no_args_is_help=True
)
app.add_typer(catalog_app, name="catalog")


CatalogDirOption = Annotated[
    Path | None,
    typer.Option(
        "--catalog-dir",
        envvar="RECOMMENDER_CATALOG_DIR",
        help="Directory of catalog YAML files (default: the bundled catalogs).",
    ),
]


def load_catalog_or_exit(directory: Path | None) -> Catalog:
    """Load the catalog, or print every problem with its place and exit 1."""
    from recommender.catalog import CatalogError, default_catalog_dir, load_catalog

    try:
        return load_catalog(directory)
    except CatalogError as exc:
        err.print(
            f"[bold red]error:[/] the catalog at {directory or default_catalog_dir()} is broken:",
            highlight=False,
        )
        for problem in exc.problems:
            err.print(f"  {problem}", highlight=False, markup=False)
        raise typer.Exit(1) from exc
