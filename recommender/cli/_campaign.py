"""Probe campaigns: the top candidates of a recommendation as launchable probe tasks.

From a :class:`~recommender.scoring.Recommendation`, one candidate per distinct instance
type (the same hardware in another region measures the same), and for each a SkyPilot task
(resources: cloud, region, instance type, accelerators, spot, ``num_nodes`` for multi-node
plans) or a Kubernetes Job pinned to nodes of that instance type. Both run the probe
container with the user's workload and post the profile to the service; the API key comes
from the launcher's secret mechanism (``sky launch --secret``, a Kubernetes Secret), never
from the file. The :class:`Campaign` record is what ``recommender campaign status`` reads.
Pure data: no I/O here.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import uuid
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from recommender.cli._campaign_names import API_KEY_ENV, DEFAULT_IMAGE

if TYPE_CHECKING:  # the campaign command must not load the engine to print its help
    from recommender.catalog import Catalog
    from recommender.scoring import Recommendation
    from recommender.scoring.results import Pick

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_IMAGE",
    "Campaign",
    "Candidate",
    "CandidateStatus",
    "PlanFormat",
    "PlanOptions",
    "candidates",
    "k8s_job",
    "new_campaign",
    "skypilot_task",
    "task_name",
]

PlanFormat = Literal["skypilot", "k8s"]
# The probe reads these instead of DMI, which names the instance type only on AWS.
CLOUD_ENV, INSTANCE_TYPE_ENV = "RECOMMENDER_CLOUD", "RECOMMENDER_INSTANCE_TYPE"
POST_TO_ENV = "RECOMMENDER_POST_TO"
# Kubernetes: the well-known node label every cloud provider sets to the instance type
# (https://kubernetes.io/docs/reference/labels-annotations-taints/#nodekubernetesioinstance-type).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GPU_RESOURCE = "nvidia.com/gpu"  # NVIDIA's device plugin
WORKLOAD_MOUNT = "/code"  # a file workload's ConfigMap, mounted here (the working directory)
SCRATCH_MOUNT = "/data"  # the node disk the probe measures (--scratch-dir)
PROBE_WORKDIR = "/work"  # the probe image's working directory (deploy/probe/Dockerfile)
# A Job may run this long past the probe's own budget (image pull, CUDA start-up, upload).
JOB_SLACK_S = 900
# How long a finished Job (and its logs) is kept: one day.
JOB_TTL_S = 86_400
# DNS-1123 label: what a Kubernetes object name and a SkyPilot cluster name both accept.
NAME_MAX_CHARS = 63


class PlanOptions(BaseModel):
    """What every task of a campaign shares."""

    post_to: str = Field(description="The service address the probes post their profiles to.")
    probe_workload: str = Field(description="`--workload` for the probe, as it will run.")
    workload_file: str | None = Field(
        default=None, description="Local file of a path:function workload (synced or mounted)."
    )
    seconds: float = 120.0
    image: str = DEFAULT_IMAGE
    api_key_secret: str = "recommender-probe-key"
    api_key_secret_key: str = "api-key"
    workload_configmap: str = "recommender-probe-workload"


class Candidate(BaseModel):
    """One instance type to probe, from the recommendation's best pick of it."""

    rank: int
    cloud: str
    region: str | None
    instance_type: str
    accelerator: str
    accelerator_skypilot: str
    gpus: int
    nodes: int = 1
    spot: bool
    name: str
    file: str | None = None


class Campaign(BaseModel):
    """What ``probe-plan --output-dir`` records beside the task files."""

    id: str
    created_at: dt.datetime
    workload: str
    objective: str
    format: PlanFormat
    post_to: str
    probe_workload: str
    candidates: list[Candidate]


def new_campaign(
    rec: Recommendation, fmt: PlanFormat, opts: PlanOptions, found: list[Candidate]
) -> Campaign:
    return Campaign(
        id=uuid.uuid4().hex[:12],
        created_at=dt.datetime.now(dt.UTC),
        workload=rec.workload,
        objective=rec.objective,
        format=fmt,
        post_to=opts.post_to,
        probe_workload=opts.probe_workload,
        candidates=found,
    )


def task_name(rank: int, instance_type: str) -> str:
    """``probe-<rank>-<instance type>`` as a DNS-1123 label."""
    slug = re.sub(r"[^a-z0-9]+", "-", instance_type.lower()).strip("-")
    return f"probe-{rank}-{slug}"[:NAME_MAX_CHARS].rstrip("-")


def _nodes(pick: Pick) -> int:
    """The pick's node count (a ``nodes`` field on the pick or on its plan, where multi-node
    plans have one), else 1."""
    for holder in (pick, getattr(pick, "plan", None)):
        nodes = getattr(holder, "nodes", None)
        if isinstance(nodes, int) and nodes > 1:
            return nodes
    return 1


def candidates(
    rec: Recommendation, catalog: Catalog, top: int
) -> tuple[list[Candidate], list[str]]:
    """The best ``top`` distinct (cloud, instance type) picks with NVIDIA GPUs, in rank
    order, and a note for each instance type left out (the probe measures CUDA devices)."""
    out: list[Candidate] = []
    skipped: list[str] = []
    seen: set[tuple[str, str]] = set()
    for pick in rec.picks:
        key = (pick.cloud, pick.instance_type)
        if pick.pricing == "purchase" or pick.region is None or key in seen:
            continue  # an edge device (nothing to launch), or hardware already planned
        seen.add(key)
        accel = catalog.names.by_id(pick.accelerator)
        if accel is None or accel.vendor != "nvidia":
            skipped.append(
                f"{pick.instance_type} ({pick.accelerator}): the probe measures NVIDIA GPUs only"
            )
            continue
        rank = len(out) + 1
        out.append(
            Candidate(
                rank=rank,
                cloud=pick.cloud,
                region=pick.region,
                instance_type=pick.instance_type,
                accelerator=pick.accelerator,
                accelerator_skypilot=accel.skypilot_name or pick.accelerator,
                gpus=pick.gpus,
                nodes=_nodes(pick),
                spot=pick.pricing == "spot",
                name=task_name(rank, pick.instance_type),
            )
        )
        if len(out) == top:
            break
    return out, skipped


def _probe_args(opts: PlanOptions, *, post_to: str, scratch: str | None) -> list[str]:
    args = ["--workload", opts.probe_workload, "--seconds", f"{opts.seconds:g}"]
    if scratch:
        args += ["--scratch-dir", scratch]
    return [*args, "--format", "json", "--post-to", post_to]


def _docker_run(opts: PlanOptions) -> str:
    """The probe container as the task's command (SkyPilot's VM images bring Docker and the
    NVIDIA runtime). ``-e NAME`` hands a variable over by name: the key is never written."""
    forwarded = " ".join(f"-e {name}" for name in (API_KEY_ENV, CLOUD_ENV, INSTANCE_TYPE_ENV))
    probe = [
        "--workload",
        shlex.quote(opts.probe_workload),
        "--seconds",
        f"{opts.seconds:g}",
        "--output",
        f"{PROBE_WORKDIR}/probe-profile.json",
        "--post-to",
        f'"${POST_TO_ENV}"',
    ]
    # The task's directory (~/sky_workdir, with a file workload) is the probe's working one.
    mount = f'-v "$PWD:{PROBE_WORKDIR}"'
    return f"docker run --rm --gpus all {forwarded} {mount} {opts.image} " + " ".join(probe)


def skypilot_task(c: Candidate, opts: PlanOptions) -> dict[str, Any]:
    """A SkyPilot task YAML document (``sky launch --secret RECOMMENDER_API_KEY task.yaml``)."""
    resources: dict[str, Any] = {
        "cloud": c.cloud,
        "region": c.region,
        "instance_type": c.instance_type,
        "accelerators": {c.accelerator_skypilot: c.gpus},
        "use_spot": c.spot,
    }
    task: dict[str, Any] = {"name": c.name, "resources": resources}
    if c.nodes > 1:
        task["num_nodes"] = c.nodes
    if opts.workload_file:
        # Synced to ~/sky_workdir, where `run` starts, and mounted into the container there.
        task["workdir"] = str(PurePosixPath(opts.workload_file).parent)
    task["envs"] = {
        POST_TO_ENV: opts.post_to,
        CLOUD_ENV: c.cloud,
        INSTANCE_TYPE_ENV: c.instance_type,
    }
    # A secret's value is given at launch (--secret NAME takes it from the environment);
    # SkyPilot keeps it out of logs and the dashboard.
    task["secrets"] = {API_KEY_ENV: None}
    task["run"] = _docker_run(opts)
    return task


def _env_value(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _workload_volume(opts: PlanOptions) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if not opts.workload_file:
        return [], []
    volume = {"name": "workload", "configMap": {"name": opts.workload_configmap}}
    return [volume], [{"name": "workload", "mountPath": WORKLOAD_MOUNT, "readOnly": True}]


def k8s_job(c: Candidate, opts: PlanOptions, campaign_id: str) -> dict[str, Any]:
    """A batch/v1 Job that probes one node (one pod per node for multi-node plans)."""
    labels = {
        "app.kubernetes.io/name": "instance-recommender",
        "app.kubernetes.io/component": "probe",
        "instance-recommender/campaign": campaign_id,
    }
    volumes, mounts = _workload_volume(opts)
    container: dict[str, Any] = {
        "name": "probe",
        "image": opts.image,
        "args": _probe_args(opts, post_to=opts.post_to, scratch=SCRATCH_MOUNT),
        "env": [
            {
                "name": API_KEY_ENV,
                "valueFrom": {
                    "secretKeyRef": {"name": opts.api_key_secret, "key": opts.api_key_secret_key}
                },
            },
            _env_value(CLOUD_ENV, c.cloud),
            _env_value(INSTANCE_TYPE_ENV, c.instance_type),
        ],
        "resources": {"requests": {GPU_RESOURCE: c.gpus}, "limits": {GPU_RESOURCE: c.gpus}},
        "volumeMounts": [{"name": "scratch", "mountPath": SCRATCH_MOUNT}, *mounts],
    }
    if opts.workload_file:
        container["workingDir"] = WORKLOAD_MOUNT
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "nodeSelector": {INSTANCE_TYPE_LABEL: c.instance_type},
        "tolerations": [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [container],
        "volumes": [{"name": "scratch", "emptyDir": {}}, *volumes],
    }
    spec: dict[str, Any] = {
        "backoffLimit": 0,
        "activeDeadlineSeconds": int(opts.seconds) + JOB_SLACK_S,
        "ttlSecondsAfterFinished": JOB_TTL_S,
        "template": {"metadata": {"labels": labels}, "spec": pod},
    }
    if c.nodes > 1:
        spec |= {"parallelism": c.nodes, "completions": c.nodes}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": c.name, "labels": labels},
        "spec": spec,
    }


class CandidateStatus(BaseModel):
    rank: int
    cloud: str
    region: str | None
    instance_type: str
    accelerator: str
    gpus: int
    nodes: int
    reported: bool
    profiles: int
    without_workload: int = 0
    latest_profile_id: str | None = None
    latest_received_at: dt.datetime | None = None
    bound: str | None = None
