"""``recommender probe-plan``: probe tasks for the top candidates of a recommendation.

Writes SkyPilot task YAML (``--format skypilot``) or Kubernetes Jobs (``--format k8s``)
that run the probe container on each candidate with the user's workload and post the
profiles to the service; ``--output-dir`` also records the campaign for
``recommender campaign status``.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
import yaml
from rich.markup import escape

from recommender.cli._app import CatalogDirOption, app, load_catalog_or_exit
from recommender.cli._campaign_names import API_KEY_ENV, DEFAULT_IMAGE
from recommender.cli._output import err, fail, out, table

if TYPE_CHECKING:  # the engine and the campaign models load when the command runs (fast --help)
    from recommender.cli._campaign import Campaign, PlanFormat, PlanOptions
    from recommender.workload import Workload

# recommender.scoring.results.Objective (tests/cli pins them equal).
Objective = Literal["cheapest", "fastest", "balanced"]

__all__ = ["CAMPAIGN_FILE", "PlanFormatChoice", "probe_plan"]

CAMPAIGN_FILE = "campaign.json"
# recommend() is asked for this many picks per candidate wanted: several picks are often the
# same instance type in other regions or priced otherwise, and only one of them is probed.
PICKS_PER_CANDIDATE = 5
MAX_PICKS = 50  # recommend()'s own limit on `top`


class PlanFormatChoice(enum.StrEnum):
    skypilot = "skypilot"
    k8s = "k8s"


def _load(path: Path) -> Workload:
    from recommender.catalog.problems import WorkloadError
    from recommender.workload import load_workload

    try:
        return load_workload(path)
    except WorkloadError as exc:
        err.print(f"[bold red]error:[/] invalid workload {escape(str(path))}:", highlight=False)
        for problem in exc.problems:
            err.print(f"  {problem}", highlight=False, markup=False)
        raise typer.Exit(2) from exc


def _options(probe_workload: str, post_to: str, **rest: Any) -> PlanOptions:
    from recommender.cli._campaign import PlanOptions

    """Check the probe's workload and the service address; a file workload runs by name."""
    if not post_to.startswith(("http://", "https://")):
        fail(f"--post-to {post_to!r}: expected the service's http:// or https:// address")
    module, sep, function = probe_workload.rpartition(":")
    if not sep or not module or not function:
        fail(
            f"--probe-workload {probe_workload!r}: expected reference:NAME, module:function "
            "or path/to/file.py:function"
        )
    if module.endswith(".py"):
        file = Path(module)
        if not file.is_file():
            fail(f"--probe-workload {probe_workload}: no such file {module}")
        return PlanOptions(
            post_to=post_to,
            probe_workload=f"{file.name}:{function}",
            workload_file=file.resolve().as_posix(),
            **rest,
        )
    return PlanOptions(post_to=post_to, probe_workload=probe_workload, **rest)


def _documents(campaign: Campaign, opts: PlanOptions) -> list[dict[str, Any]]:
    from recommender.cli._campaign import k8s_job, skypilot_task

    if campaign.format == "skypilot":
        return [skypilot_task(c, opts) for c in campaign.candidates]
    return [k8s_job(c, opts, campaign.id) for c in campaign.candidates]


def _dump(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=4096)


def _write(directory: Path, campaign: Campaign, docs: list[dict[str, Any]]) -> None:
    from recommender.catalog.writer import write_atomic

    directory.mkdir(parents=True, exist_ok=True)
    for c, doc in zip(campaign.candidates, docs, strict=True):
        c.file = f"{c.name}.yaml"
        write_atomic(directory / c.file, _dump(doc))
    write_atomic(directory / CAMPAIGN_FILE, campaign.model_dump_json(indent=2) + "\n")


def _how_to_launch(campaign: Campaign, opts: PlanOptions, directory: Path | None) -> list[str]:
    where = str(directory) if directory else "-"
    if campaign.format == "skypilot":
        steps = [
            f"export {API_KEY_ENV}=...   # a key from `recommender apikey create`",
            *(
                f"sky launch -y --down -c {c.name} --secret {API_KEY_ENV} {where}/{c.file}"
                for c in campaign.candidates
                if directory
            ),
        ]
    else:
        steps = [
            f"kubectl create secret generic {opts.api_key_secret} "
            f"--from-literal={opts.api_key_secret_key}=...",
            f"kubectl apply -f {where}",
        ]
        if opts.workload_file:
            steps.insert(
                1,
                f"kubectl create configmap {opts.workload_configmap} "
                f"--from-file={opts.workload_file}",
            )
    if directory:
        steps.append(f"recommender campaign status {directory / CAMPAIGN_FILE}")
    return steps


def _summary(campaign: Campaign) -> None:
    rows = [
        (
            c.rank,
            c.cloud,
            c.region or "-",
            c.instance_type,
            f"{c.gpus} x {c.accelerator}",
            c.nodes,
            "spot" if c.spot else "on-demand",
            c.file or "-",
        )
        for c in campaign.candidates
    ]
    columns: list[str | tuple[str, str]] = [
        ("#", "right"),
        "cloud",
        "region",
        "instance",
        "accelerators",
        ("nodes", "right"),
    ]
    title = f"probe campaign {campaign.id}: {campaign.workload} ({campaign.format})"
    out.print(table(title, [*columns, "pricing", "file"], rows))


@app.command("probe-plan")
def probe_plan(
    workload: Annotated[Path, typer.Argument(help="Workload file (YAML or JSON).")],
    post_to: Annotated[
        str, typer.Option("--post-to", help="Service address the probes post their profiles to.")
    ],
    top: Annotated[int, typer.Option(min=1, max=20, help="How many instance types.")] = 3,
    fmt: Annotated[
        PlanFormatChoice,
        typer.Option("--format", "-f", help="SkyPilot task YAML or Kubernetes Jobs."),
    ] = PlanFormatChoice.skypilot,
    objective: Annotated[
        Objective, typer.Option(help="cheapest, fastest or balanced.")
    ] = "balanced",
    probe_workload: Annotated[
        str,
        typer.Option(
            "--probe-workload",
            help="What the probe runs: reference:NAME, module:function or file.py:function "
            "(the file is synced by SkyPilot, or mounted from a ConfigMap on Kubernetes).",
        ),
    ] = "reference:transformer-train",
    seconds: Annotated[
        float, typer.Option("--seconds", min=10.0, help="The probe's time budget.")
    ] = 120.0,
    image: Annotated[str, typer.Option("--image", help="The probe image.")] = DEFAULT_IMAGE,
    api_key_secret: Annotated[
        str, typer.Option("--api-key-secret", help="Kubernetes Secret holding the API key.")
    ] = "recommender-probe-key",
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir", "-o", help=f"Write one file per candidate and {CAMPAIGN_FILE} here."
        ),
    ] = None,
    catalog_dir: CatalogDirOption = None,
) -> None:
    """Probe tasks for the top candidates of WORKLOAD (SkyPilot or Kubernetes)."""
    opts = _options(
        probe_workload, post_to, seconds=seconds, image=image, api_key_secret=api_key_secret
    )
    from recommender.catalog import UnknownAcceleratorError
    from recommender.cli._campaign import candidates, new_campaign
    from recommender.scoring import recommend

    w = _load(workload)
    catalog = load_catalog_or_exit(catalog_dir)
    try:
        rec = recommend(
            w, catalog=catalog, objective=objective, top=min(MAX_PICKS, top * PICKS_PER_CANDIDATE)
        )
    except (UnknownAcceleratorError, ValueError) as exc:
        fail(str(exc))
    found, skipped = candidates(rec, catalog, top)
    for note in skipped:
        err.print(f"[yellow]skipped:[/] {escape(note)}", highlight=False)
    if not found:
        fail(
            f"no cloud instance can run {w.name}: nothing to probe",
            code=1,
            hint="`recommender recommend` says why offers were ruled out",
        )
    kind: PlanFormat = "skypilot" if fmt is PlanFormatChoice.skypilot else "k8s"
    campaign = new_campaign(rec, kind, opts, found)
    docs = _documents(campaign, opts)
    if output_dir is None:
        typer.echo("---\n".join(_dump(d) for d in docs), nl=False)
        err.print(f"pass --output-dir to record campaign {campaign.id}", highlight=False)
    else:
        _write(output_dir, campaign, docs)
        _summary(campaign)
    for step in _how_to_launch(campaign, opts, output_dir):
        err.print(f"[dim]next:[/] {escape(step)}", highlight=False)
