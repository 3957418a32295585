"""Output conventions shared by every command: ``--format``, JSON on stdout, errors on stderr.

JSON output is the only thing written to stdout in ``json`` mode; progress, warnings and
errors go to stderr so that ``recommender ... --format json | jq`` always works.
"""

from __future__ import annotations

import csv
import enum
import io
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

__all__ = [
    "PIPED_WIDTH",
    "Column",
    "Format",
    "FormatOption",
    "WideOption",
    "err",
    "fail",
    "fit_columns",
    "out",
    "print_csv",
    "print_json",
    "print_markdown",
    "print_rows",
    "table",
]

# Piped output (a file, a log, `| less`) gets $COLUMNS or this width: a line a reviewer can
# read in a diff or a 100-column editor; --wide lifts it.
PIPED_WIDTH = 100


def _piped_width() -> int | None:
    if sys.stdout.isatty():
        return None  # Rich follows the terminal
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


out = Console(width=_piped_width())
err = Console(stderr=True, soft_wrap=True)


class Format(enum.StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


FormatOption = Annotated[
    Format, typer.Option("--format", "-f", help="Output format (json goes to stdout only).")
]
WideOption = Annotated[
    bool,
    typer.Option(
        "--wide", help="Every column at full width, whatever the terminal's (for wide screens)."
    ),
]

# Rich's default table: one space of padding each side of a cell and a rule between cells.
CELL_OVERHEAD = 3
MIN_FOLD_WIDTH = 4  # no column narrower than this, however small the terminal


@dataclass(frozen=True)
class Column:
    """A table column. ``ident`` columns (names a user copies) are folded, never cut;
    ``drop`` > 0 marks a column that may be left out when the table is too wide (the highest
    first), with ``legend`` saying where its figure is found instead."""

    name: str
    right: bool = False
    ident: bool = False
    drop: int = 0
    legend: str = ""


def _natural(col: Column, cells: Sequence[str]) -> int:
    return max([len(col.name), *(len(c) for c in cells)]) + CELL_OVERHEAD


def fit_columns(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[int]:
    """Indices of the columns to show within ``width``: droppable ones go, highest first."""
    shown = list(range(len(columns)))
    natural = [_natural(c, [r[i] for r in rows]) for i, c in enumerate(columns)]
    order = sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop)
    for i in order:
        if sum(natural[j] for j in shown) + 1 <= width:
            break
        shown.remove(i)
    return shown


def _shrink(widths: list[int], floors: Sequence[int], which: Sequence[int], excess: int) -> int:
    """Narrow the ``which`` columns, widest above its floor first; the excess left."""
    while excess > 0:
        room = [(widths[i] - floors[i], i) for i in which if widths[i] > floors[i]]
        if not room:
            break
        widths[max(room)[1]] -= 1
        excess -= 1
    return excess


def _allocate(columns: Sequence[Column], cells: Sequence[Sequence[str]]) -> list[int]:
    """Content widths that fit the console: identifiers first wrap between their words
    ("1 x" / "H100-SXM5-80GB"), then figures do ("18 ms" / "p95"), and only then does the
    longest word fold onto the next line."""
    texts = [(c.name, *col) for c, col in zip(columns, cells, strict=True)]
    words = [max(len(w) for v in vs for w in v.split() or [""]) for vs in texts]
    widths = [max(len(v) for v in vs) for vs in texts]
    excess = sum(widths) + CELL_OVERHEAD * len(columns) + 1 - out.width
    idents = [i for i, c in enumerate(columns) if c.ident]
    figures = [i for i, c in enumerate(columns) if not c.ident]
    excess = _shrink(widths, words, idents, excess)
    excess = _shrink(widths, words, figures, excess)
    _shrink(widths, [MIN_FOLD_WIDTH] * len(columns), range(len(columns)), excess)
    return widths


def print_rows(
    title: str,
    columns: Sequence[Column],
    rows: Iterable[Sequence[object]],
    fmt: Format = Format.table,
    *,
    wide: bool = False,
) -> None:
    """Rows as a table that fits the terminal (or ``--wide``), CSV or Markdown."""
    cells = [[str(v) for v in row] for row in rows]
    if fmt is Format.csv:
        print_csv([dict(zip([c.name for c in columns], row, strict=True)) for row in cells])
        return
    if fmt is Format.markdown:
        print_markdown(title, [c.name for c in columns], cells)
        return
    natural = sum(_natural(c, [r[i] for r in cells]) for i, c in enumerate(columns)) + 1
    shown = list(range(len(columns))) if wide else fit_columns(columns, cells, out.width)
    widths = _allocate([columns[i] for i in shown], [[r[i] for r in cells] for i in shown])
    t = Table(title=title, header_style="bold")
    for i, w in zip(shown, widths, strict=True):
        col = columns[i]
        # "fold": a cell too long for its column continues on the next line, never "..."
        t.add_column(
            col.name,
            justify="right" if col.right else "left",
            overflow="fold",
            width=None if wide else w,
        )
    for row in cells:
        t.add_row(*(row[i] for i in shown))
    if wide:  # Console.print(width=) caps at the console's width: widen the console itself
        width = out.width
        out.width = max(natural, width)
        try:
            out.print(t)
        finally:
            out.width = width
    else:
        out.print(t)
    left_out = [columns[i] for i in range(len(columns)) if i not in shown]
    if left_out:
        what = ", ".join(c.name + (f" ({c.legend})" if c.legend else "") for c in left_out)
        out.print(f"[dim]Not shown at {out.width} columns: {what}; --wide shows all.[/]")


def _md(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def print_markdown(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A GitHub-flavoured Markdown table (with the title as a heading line)."""
    lines = [f"**{_md(title)}**", "", "| " + " | ".join(_md(h) for h in headers) + " |"]
    lines.append("|" + "|".join("---" for _ in headers) + "|")
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    typer.echo("\n".join(lines))


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
