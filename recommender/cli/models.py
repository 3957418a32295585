"""``recommender models``: the bundled model registry (or one local ``config.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from recommender.cli._app import app
from recommender.cli._output import Format, FormatOption, err, out, print_csv, print_json, table

if TYPE_CHECKING:  # the registry loads the catalog stack: only when the command runs
    from recommender.catalog.problems import ProblemsError
    from recommender.models.registry import ModelEntry, ModelRegistry

__all__ = ["models"]

# recommender.models.registry.MODELS_FILE_ENV (tests/cli/test_models_cli.py pins them equal).
MODELS_FILE_ENV = "RECOMMENDER_MODELS_FILE"

ModelsFileOption = Annotated[
    Path | None,
    typer.Option(
        "--models-file",
        envvar=MODELS_FILE_ENV,
        help="Model registry YAML (default: the bundled catalogs/models.yaml).",
    ),
]
HFConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--hf-config",
        help="Show the shape a local Hugging Face config.json describes instead (no network).",
    ),
]


def _shape(arch: Any) -> dict[str, object]:
    """The few shape fields a reader scans for, whatever the architecture type."""
    return {
        "type": arch.type,
        "parameters": arch.parameters,
        "active_parameters": arch.active_parameters,
        "layers": getattr(arch, "layers", None),
        "hidden_size": getattr(arch, "hidden_size", None),
        "max_sequence_length": getattr(arch, "max_sequence_length", None),
    }


def _row(entry: ModelEntry) -> dict[str, object]:
    shape = _shape(entry.architecture)
    deviation = 100.0 * (entry.parameters / entry.published_parameters - 1.0)
    return {
        "name": entry.name,
        "title": entry.title,
        "family": entry.family,
        **shape,
        "active_parameters": shape["active_parameters"] if entry.is_moe else None,
        "published_parameters": entry.published_parameters,
        "published_active_parameters": entry.published_active_parameters,
        "deviation_pct": round(deviation, 2),
        "aliases": list(entry.aliases),
        "source": entry.source.model_dump(exclude_none=True),
    }


def _billions(value: object) -> str:
    if not isinstance(value, float | int):
        return "-"
    return f"{value / 1e9:.3g}B" if value >= 1e9 else f"{value / 1e6:.3g}M"


def _fail(exc: ProblemsError, what: str) -> NoReturn:
    err.print(f"[bold red]error:[/] {what} is broken:", highlight=False)
    for problem in exc.problems:
        err.print(f"  {problem}", highlight=False, markup=False)
    raise typer.Exit(1) from exc


def _registry_or_exit(path: Path | None) -> ModelRegistry:
    from recommender.catalog.problems import ProblemsError
    from recommender.models.registry import default_models_path, load_registry

    try:
        return load_registry(path)
    except ProblemsError as exc:
        _fail(exc, f"the model registry {path or default_models_path()}")


def _print_table(rows: list[dict[str, object]], title: str) -> None:
    columns: list[str | tuple[str, str]] = ["name", "family", "type", ("params", "right")]
    columns += [("published", "right")]
    columns += [("dev %", "right"), ("active", "right"), ("layers", "right"), ("context", "right")]
    t = table(
        title,
        columns,
        [
            (
                r["name"],
                r["family"],
                r["type"],
                _billions(r["parameters"]),
                _billions(r["published_parameters"]),
                f"{r['deviation_pct']:+.2f}",
                _billions(r["active_parameters"]),
                r["layers"] or "-",
                r["max_sequence_length"] or "-",
            )
            for r in rows
        ],
    )
    t.columns[0].no_wrap = True  # a model name is what users copy: never split it
    out.print(t)


@app.command()
def models(
    fmt: FormatOption = Format.table,
    models_file: ModelsFileOption = None,
    hf_config: HFConfigOption = None,
) -> None:
    """List the models `model: {name: ...}` accepts, with parameters computed from each shape
    beside the published count and its source."""
    from recommender.catalog.problems import ProblemsError

    if hf_config is not None:
        from recommender.models.hf_config import load_hf_config

        try:
            shape = _shape(load_hf_config(hf_config))
        except ProblemsError as exc:
            _fail(exc, f"the config {hf_config}")
        if fmt is Format.table:
            out.print(table(str(hf_config), ["field", ("value", "right")], shape.items()))
        elif fmt is Format.json:
            print_json(shape)
        else:
            print_csv([shape])
        return
    rows = [_row(e) for e in _registry_or_exit(models_file)]
    if fmt is Format.json:
        print_json(rows)
    elif fmt is Format.csv:
        print_csv([{k: v for k, v in r.items() if k not in ("aliases", "source")} for r in rows])
    else:
        _print_table(
            rows, f"{len(rows)} models (params computed from the shape; dev = vs published)"
        )
