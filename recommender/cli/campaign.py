"""``recommender campaign status``: which candidates of a probe campaign have reported.

Reads the ``campaign.json`` that ``recommender probe-plan --output-dir`` wrote and asks the
service (``GET /v1/profiles?machine=INSTANCE_TYPE``) for the profiles each candidate posted
since the campaign was planned with the campaign's probe workload. httpx is imported only here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from recommender.cli._app import app
from recommender.cli._campaign_names import API_KEY_ENV
from recommender.cli._output import Format, FormatOption, fail, out, print_json, table

if TYPE_CHECKING:  # the campaign models (pydantic) load when the command runs (fast --help)
    import httpx

    from recommender.cli._campaign import Campaign, Candidate, CandidateStatus

__all__ = ["campaign_app", "candidate_status", "status"]

campaign_app = typer.Typer(
    help="Probe campaigns planned with `recommender probe-plan`.", no_args_is_help=True
)
app.add_typer(campaign_app, name="campaign")

# Profiles fetched per instance type, newest first (the service's page limit): a campaign
# posts one per node, and other campaigns' profiles of the same type come mixed in.
PROFILES_PER_MACHINE = 500
TIMEOUT_S = 10.0


def _read(path: Path) -> Campaign:
    from pydantic import ValidationError

    from recommender.cli._campaign import Campaign

    try:
        return Campaign.model_validate_json(path.read_bytes())
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        fail(
            f"{path} is not a campaign file: {where}: {first['msg']}",
            hint="`recommender probe-plan ... --output-dir DIR` writes DIR/campaign.json",
        )


def _page(client: httpx.Client, campaign: Campaign, c: Candidate) -> list[dict[str, Any]]:
    import httpx

    params: dict[str, str | int] = {"machine": c.instance_type, "limit": PROFILES_PER_MACHINE}
    try:
        response = client.get("/v1/profiles", params=params)
    except httpx.HTTPError as exc:
        fail(f"cannot reach the service at {client.base_url}: {exc}", code=1)
    if response.status_code != 200:
        detail = response.json().get("detail", "") if response.content else ""
        hint = f"pass --api-key or set {API_KEY_ENV}" if response.status_code == 401 else None
        fail(f"GET {response.url}: HTTP {response.status_code} {detail}", code=1, hint=hint)
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def _received(profile: dict[str, Any]) -> dt.datetime:
    at = dt.datetime.fromisoformat(profile["received_at"])
    return at if at.tzinfo else at.replace(tzinfo=dt.UTC)


def candidate_status(client: httpx.Client, campaign: Campaign, c: Candidate) -> CandidateStatus:
    from recommender.cli._campaign import CandidateStatus

    """What the service holds for one candidate: profiles of its instance type (and cloud)
    received since the campaign was planned, running the campaign's probe workload; those
    with no workload at all (it failed, or ran out of time) are counted apart."""
    since = [
        p
        for p in _page(client, campaign, c)
        if _received(p) >= campaign.created_at and p.get("cloud") in (None, c.cloud)
    ]
    wanted = campaign.probe_workload.lower()
    mine = [p for p in since if (p.get("workload") or "").lower() == wanted]
    latest = mine[0] if mine else None  # the service lists newest first
    return CandidateStatus(
        rank=c.rank,
        cloud=c.cloud,
        region=c.region,
        instance_type=c.instance_type,
        accelerator=c.accelerator,
        gpus=c.gpus,
        nodes=c.nodes,
        reported=bool(mine),
        profiles=len(mine),
        without_workload=sum(not p.get("workload") for p in since),
        latest_profile_id=latest["id"] if latest else None,
        latest_received_at=_received(latest) if latest else None,
        bound=latest.get("bound") if latest else None,
    )


def _client(base_url: str, api_key: str | None) -> httpx.Client:
    import httpx

    headers = {"X-API-Key": api_key} if api_key else {}
    return httpx.Client(base_url=base_url, headers=headers, timeout=TIMEOUT_S)


def _state(r: CandidateStatus) -> str:
    if r.reported:
        return "yes"
    return f"{r.without_workload} without workload" if r.without_workload else "waiting"


def _print(campaign: Campaign, rows: list[CandidateStatus]) -> None:
    done = sum(r.reported for r in rows)
    title = (
        f"campaign {campaign.id} ({campaign.workload}, {campaign.probe_workload}): "
        f"{done} of {len(rows)} reported"
    )
    cells = [
        (
            r.rank,
            r.cloud,
            r.region or "-",
            r.instance_type,
            f"{r.gpus} x {r.accelerator}",
            _state(r),
            r.profiles,
            r.bound or "-",
            r.latest_profile_id or "-",
        )
        for r in rows
    ]
    columns: list[str | tuple[str, str]] = [
        ("#", "right"),
        "cloud",
        "region",
        "instance",
        "accelerators",
        "reported",
    ]
    out.print(table(title, [*columns, ("profiles", "right"), "bound", "latest profile"], cells))


@campaign_app.command()
def status(
    campaign_file: Annotated[
        Path, typer.Argument(help="campaign.json from `recommender probe-plan --output-dir`.")
    ],
    service: Annotated[
        str | None,
        typer.Option("--service", help="Service address (default: the campaign's --post-to)."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar=API_KEY_ENV, help="Sent as X-API-Key (if reads need it)."),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Which candidates of a campaign have posted profiles to the service."""
    if fmt is Format.csv:
        fail("--format csv is not available here; use table or json")
    campaign = _read(campaign_file)
    with _client(service or campaign.post_to, api_key) as client:
        rows = [candidate_status(client, campaign, c) for c in campaign.candidates]
    if fmt is Format.json:
        print_json(
            {
                "campaign": campaign.id,
                "workload": campaign.workload,
                "probe_workload": campaign.probe_workload,
                "reported": sum(r.reported for r in rows),
                "candidates": [r.model_dump(mode="json") for r in rows],
            }
        )
    else:
        _print(campaign, rows)
        if not all(r.reported for r in rows):
            out.print(
                escape(
                    "waiting: a probe posts when it finishes (about --seconds after start); "
                    "a profile without workload says why in its diagnoses "
                    "(GET /v1/profiles/{id})"
                ),
                highlight=False,
            )
