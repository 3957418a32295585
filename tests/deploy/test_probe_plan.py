"""``recommender probe-plan``: SkyPilot tasks and Kubernetes Jobs for the top candidates.

SkyPilot's own task parser (``sky.Task.from_yaml``) runs when RECOMMENDER_SKYPILOT_PYTHON
names a Python with ``skypilot`` installed (it cannot share the dev environment: skypilot
pins click < 8.2 and uvicorn < 0.36); every run validates against the task and resources
schemas that skypilot publishes (tests/deploy/data/skypilot-schemas.json, with provenance).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from recommender.catalog import Catalog
from recommender.cli import app
from recommender.cli._campaign import Candidate, PlanOptions, candidates, k8s_job, skypilot_task
from recommender.scoring import recommend
from recommender.scoring.results import Pick
from recommender.workload import load_workload
from tests.deploy.conftest import KUBERNETES_VERSION, PROBE_IMAGE, REPO, cli_options

EXAMPLES = REPO / "examples"
PROBE_DOCKERFILE = REPO / "deploy" / "probe" / "Dockerfile"
WORKLOAD = EXAMPLES / "llm-finetune.yaml"
SERVICE = "https://recommender.example.com"
SECRET = "sk-test-never-in-a-file"
SCHEMAS = json.loads((Path(__file__).parent / "data" / "skypilot-schemas.json").read_text())
runner = CliRunner()


class SkyValidator:
    """What ``sky.Task.from_yaml`` checks: the task, then its resources, each against the
    schema skypilot publishes, with SkyPilot's validator (Draft 7 plus its enum keywords)."""

    def __init__(self) -> None:
        cls = _sky_validator_class()
        self.task = cls(SCHEMAS["task"])
        self.resources = cls(SCHEMAS["resources"])

    def validate(self, task: dict[str, Any]) -> None:
        self.task.validate(task)
        self.resources.validate(task["resources"])

    def is_valid(self, task: dict[str, Any]) -> bool:
        return self.task.is_valid(task) and self.resources.is_valid(task["resources"])


def _sky_validator_class() -> Any:

    def case_insensitive_enum(_v: Any, enums: list[str], instance: Any, _s: Any) -> Any:
        if str(instance).lower() not in [e.lower() for e in enums]:
            yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")

    def case_sensitive_enum(_v: Any, enums: list[str], instance: Any, _s: Any) -> Any:
        if instance not in enums:
            yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")

    return jsonschema.validators.extend(
        jsonschema.Draft7Validator,
        validators={
            "case_insensitive_enum": case_insensitive_enum,
            "case_sensitive_enum": case_sensitive_enum,
        },
    )


SKY = SkyValidator()


def _plan(tmp_path: Path, *args: str, workload: Path = WORKLOAD) -> tuple[Path, dict[str, Any]]:
    out = tmp_path / "plan"
    result = runner.invoke(
        app,
        ["probe-plan", str(workload), "--post-to", SERVICE, "-o", str(out), *args],
        env={"RECOMMENDER_API_KEY": SECRET},
    )
    assert result.exit_code == 0, result.output
    campaign: dict[str, Any] = json.loads((out / "campaign.json").read_text())
    assert campaign["candidates"], "nothing planned"
    return out, campaign


def _docs(out: Path, campaign: dict[str, Any]) -> list[dict[str, Any]]:
    docs = []
    for c in campaign["candidates"]:
        text = (out / c["file"]).read_text()
        assert SECRET not in text
        docs.append(yaml.safe_load(text))
    return docs


def _probe_command(run: str, image: str) -> list[str]:
    """The probe's arguments in a task's ``docker run ... IMAGE ARGS`` command."""
    words = shlex.split(run)
    assert words[:5] == ["docker", "run", "--rm", "--gpus", "all"]
    forwarded = [words[i + 1] for i, w in enumerate(words) if w == "-e"]
    assert forwarded == ["RECOMMENDER_API_KEY", "RECOMMENDER_CLOUD", "RECOMMENDER_INSTANCE_TYPE"]
    mount = words[words.index("-v") + 1]
    assert mount == "$PWD:/work" and "WORKDIR /work" in PROBE_DOCKERFILE.read_text()
    probe = words[words.index(image) + 1 :]
    assert {w for w in probe if w.startswith("--")} <= cli_options("probe")
    return probe


def test_skypilot_tasks_for_the_top_distinct_instance_types(
    tmp_path: Path, catalog: Catalog
) -> None:
    out, campaign = _plan(tmp_path, "--top", "3")
    rec = recommend(load_workload(WORKLOAD), catalog=catalog, objective="balanced", top=15)
    expected, _ = candidates(rec, catalog, 3)
    assert [c["instance_type"] for c in campaign["candidates"]] == [
        c.instance_type for c in expected
    ]
    assert len(campaign["candidates"]) == 3
    assert len({(c["cloud"], c["instance_type"]) for c in campaign["candidates"]}) == 3
    for c, task in zip(campaign["candidates"], _docs(out, campaign), strict=True):
        SKY.validate(task)
        res = task["resources"]
        assert (res["cloud"], res["region"], res["instance_type"]) == (
            c["cloud"],
            c["region"],
            c["instance_type"],
        )
        accel = catalog.accelerator(c["accelerator"])
        assert res["accelerators"] == {accel.skypilot_name or accel.id: c["gpus"]}
        assert res["use_spot"] is c["spot"]
        assert "num_nodes" not in task  # single-node plans
        assert task["envs"]["RECOMMENDER_INSTANCE_TYPE"] == c["instance_type"]
        assert task["secrets"] == {"RECOMMENDER_API_KEY": None}
        words = _probe_command(task["run"], f"{PROBE_IMAGE}:0.1.0")
        assert words[words.index("--post-to") + 1] == "$RECOMMENDER_POST_TO"
        assert task["envs"]["RECOMMENDER_POST_TO"] == SERVICE


def test_the_schema_check_is_live() -> None:
    task = {"name": "x", "resources": {"cloud": "aws", "use_spot": "yes"}}
    assert not SKY.is_valid(task)
    assert not SKY.is_valid({"name": "x", "resources": {"cloud": "nocloud"}})
    assert SKY.is_valid({"name": "x", "resources": {"cloud": "AWS"}})


def _candidate(**changes: Any) -> Candidate:
    base: dict[str, Any] = {
        "rank": 1,
        "cloud": "gcp",
        "region": "us-central1",
        "instance_type": "a3-highgpu-8g",
        "accelerator": "H100-SXM5-80GB",
        "accelerator_skypilot": "H100",
        "gpus": 8,
        "spot": False,
        "name": "probe-1-a3-highgpu-8g",
    }
    return Candidate(**{**base, **changes})


def test_multi_node_and_spot_candidates() -> None:
    opts = PlanOptions(post_to=SERVICE, probe_workload="reference:transformer-train")
    c = _candidate(nodes=4, spot=True)
    task = skypilot_task(c, opts)
    SKY.validate(task)
    assert task["num_nodes"] == 4 and task["resources"]["use_spot"] is True
    job = k8s_job(c, opts, "c0ffee")
    kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True)
    assert job["spec"]["parallelism"] == job["spec"]["completions"] == 4


def test_a_picks_nodes_field_becomes_num_nodes(catalog: Catalog) -> None:
    """Where the plan has a ``nodes`` field (multi-node plans), it is what SkyPilot gets."""

    class NodesPick(Pick):
        nodes: int

    rec = recommend(load_workload(WORKLOAD), catalog=catalog, objective="balanced", top=3)
    assert rec.picks
    picks = [NodesPick(**{**p.model_dump(), "nodes": 2}) for p in rec.picks]
    found, _ = candidates(rec.model_copy(update={"picks": picks}), catalog, 1)
    assert found and found[0].nodes == 2


def test_non_nvidia_instances_are_skipped_and_said_so(catalog: Catalog) -> None:
    rec = recommend(load_workload(WORKLOAD), catalog=catalog, objective="balanced", top=3)
    assert len(rec.picks) >= 2
    neuron = rec.picks[0].model_copy(
        update={"instance_type": "trn1.32xlarge", "accelerator": "Trainium1", "cloud": "aws"}
    )
    found, skipped = candidates(rec.model_copy(update={"picks": [neuron, *rec.picks]}), catalog, 2)
    assert [c.instance_type for c in found] == [p.instance_type for p in rec.picks[:2]]
    assert skipped == ["trn1.32xlarge (Trainium1): the probe measures NVIDIA GPUs only"]


def test_k8s_jobs_run_the_probe_on_nodes_of_the_candidate_type(tmp_path: Path) -> None:
    train = tmp_path / "train.py"
    train.write_text("def make_workload(device):\n    raise NotImplementedError\n")
    args = ["--format", "k8s", "--top", "2", "--probe-workload", f"{train}:make_workload"]
    out, campaign = _plan(tmp_path, *args)
    assert campaign["probe_workload"] == "train.py:make_workload"
    for c, job in zip(campaign["candidates"], _docs(out, campaign), strict=True):
        kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True)
        pod = job["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": c["instance_type"]}
        (probe,) = pod["containers"]
        assert probe["resources"]["requests"]["nvidia.com/gpu"] == c["gpus"]
        assert probe["resources"]["limits"]["nvidia.com/gpu"] == c["gpus"]
        assert probe["image"].split(":")[0] == PROBE_IMAGE
        args_ = probe["args"]
        assert {a for a in args_ if a.startswith("--")} <= cli_options("probe")
        assert args_[args_.index("--post-to") + 1] == SERVICE
        assert args_[args_.index("--workload") + 1] == "train.py:make_workload"
        env = {e["name"]: e for e in probe["env"]}
        assert env["RECOMMENDER_API_KEY"]["valueFrom"]["secretKeyRef"] == {
            "name": "recommender-probe-key",
            "key": "api-key",
        }
        assert env["RECOMMENDER_INSTANCE_TYPE"]["value"] == c["instance_type"]
        mount = next(m for m in probe["volumeMounts"] if m["name"] == "workload")
        assert probe["workingDir"] == mount["mountPath"]
        assert job["metadata"]["labels"]["instance-recommender/campaign"] == campaign["id"]


def test_stdout_is_one_yaml_document_per_candidate() -> None:
    result = runner.invoke(
        app, ["probe-plan", str(WORKLOAD), "--post-to", SERVICE, "--top", "2", "--format", "k8s"]
    )
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["Job", "Job"]
    assert "--output-dir" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--post-to", "recommender.example.com"], "expected the service's http"),
        (["--post-to", SERVICE, "--probe-workload", "train"], "expected reference:NAME"),
        (["--post-to", SERVICE, "--probe-workload", "nope.py:f"], "no such file nope.py"),
    ],
)
def test_bad_options_are_refused(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["probe-plan", str(WORKLOAD), *args])
    assert result.exit_code == 2
    assert message in result.stderr


def test_edge_workload_has_nothing_to_probe() -> None:
    result = runner.invoke(
        app, ["probe-plan", str(EXAMPLES / "edge-detector.yaml"), "--post-to", SERVICE]
    )
    assert result.exit_code == 1
    assert "nothing to probe" in result.stderr


def test_skypilot_parses_the_tasks(tmp_path: Path) -> None:
    python = os.environ.get("RECOMMENDER_SKYPILOT_PYTHON")
    if not python:
        pytest.skip("RECOMMENDER_SKYPILOT_PYTHON (a Python with skypilot) is not set")
    out, campaign = _plan(tmp_path, "--top", "3")
    check = (
        "import sys, sky\n"
        "for f in sys.argv[1:]:\n"
        "    t = sky.Task.from_yaml(f)\n"
        "    (r,) = t.resources\n"
        "    print(t.name, t.num_nodes, r.cloud, r.region, r.instance_type, r.use_spot)\n"
    )
    files = [str(out / c["file"]) for c in campaign["candidates"]]
    done = subprocess.run(
        [python, "-c", check, *files], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    for c, line in zip(campaign["candidates"], lines, strict=False):
        name, nodes, cloud, region, itype, spot = line.split()
        assert (name, nodes, region, itype) == (c["name"], "1", c["region"], c["instance_type"])
        assert cloud.lower() == c["cloud"] and spot == str(c["spot"])


def test_a_file_workload_is_synced_as_the_workdir_and_run_by_name(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("def make_workload(device):\n    raise NotImplementedError\n")
    args = ["--top", "1", "--probe-workload", f"{code / 'train.py'}:make_workload"]
    out, campaign = _plan(tmp_path, *args)
    (task,) = _docs(out, campaign)
    SKY.validate(task)
    assert Path(task["workdir"]) == code.resolve()
    probe = _probe_command(task["run"], f"{PROBE_IMAGE}:0.1.0")
    assert probe[probe.index("--workload") + 1] == "train.py:make_workload"
    assert probe[probe.index("--output") + 1].startswith("/work/")
