"""Output conventions shared by every command: ``--format``, JSON on stdout, errors on stderr.

JSON output is the only thing written to stdout in ``json`` mode; progress, warnings and
errors go to stderr so that ``recommender ... --format json | jq`` always works.
"""

from __future__ import annotations

import csv
import enum
import io
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

__all__ = [
    "Format",
    "FormatOption",
    "err",
    "fail",
    "out",
    "print_csv",
    "print_json",
    "table",
]

# Piped output is not squeezed to 80 columns: tables keep their width for logs and files.
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, soft_wrap=True)


class Format(enum.StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOption = Annotated[
    Format, typer.Option("--format", "-f", help="Output format (json goes to stdout only).")
]


def print_json(data: Any) -> None:
    """Write ``data`` as JSON to stdout, uncoloured, one document."""
    typer.echo(json.dumps(data, indent=2, default=str))


def print_csv(rows: Sequence[dict[str, Any]]) -> None:
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    typer.echo(buf.getvalue(), nl=False)


def table(
    title: str, columns: Sequence[str | tuple[str, str]], rows: Iterable[Sequence[Any]]
) -> Table:
    """A Rich table; a column given as ``(name, "right")`` is right-aligned."""
    t = Table(title=title, header_style="bold")
    for col in columns:
        name, justify = (col, "left") if isinstance(col, str) else col
        t.add_column(name, justify="right" if justify == "right" else "left")
    for row in rows:
        t.add_row(*(str(v) for v in row))
    return t


def fail(message: str, *, code: int = 2, hint: str | None = None) -> NoReturn:
    """Print ``error: message`` (and a hint) to stderr and exit with ``code``."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    if hint:
        err.print(f"[dim]hint:[/] {hint}", highlight=False)
    raise typer.Exit(code)
