"""``recommender probe`` and ``recommender doctor`` end to end on the CPU."""

from __future__ import annotations

import functools
import importlib.util
import json
import shutil
from pathlib import Path

import httpx
import pytest
import torch
from typer.testing import CliRunner

from probes import doctor, upload
from recommender.cli import app
from recommender.profile import Profile, load_profile

SAMPLES = "tests.probes.sample_workloads"


def test_probe_writes_a_valid_profile(tmp_path: Path) -> None:
    # How long it takes is the budget's business (tests/probes/test_timing.py, on a fake
    # clock); here only what it writes.
    out = tmp_path / "p.json"
    args = ["probe", "--device", "cpu", "--seconds", "4", "--output", str(out), "--format", "json"]
    result = CliRunner().invoke(app, [*args, "--workload", f"{SAMPLES}:heavy_compute"])
    assert result.exit_code == 0, result.output
    printed = Profile.model_validate_json(result.stdout)
    assert load_profile(out) == printed
    assert printed.machine.device == "cpu" and printed.elapsed_s is not None
    assert printed.elapsed_s > 0 and printed.budget_s == 4.0
    assert printed.workload is not None and printed.workload.steps_measured >= 1
    assert printed.classification is not None
    assert printed.classification.bound == "compute-bound"
    # the benchmarks ran after the workload, or (a busy machine, a real 4 s budget) say why not
    caps = printed.capabilities
    assert caps.matmul_tflops or "matmul: over the time budget" in caps.skipped


def test_probe_table_shows_the_summary(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["probe", "--device", "cpu", "--seconds", "2", "--workload", f"{SAMPLES}:slow_loader"]
    )
    assert result.exit_code == 0, result.output
    assert "Measured capabilities" in result.stdout
    assert "transfer-bound, limited by data-loading" in result.stdout


def test_probe_posts_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, json={"id": "p-9"})

    client = functools.partial(httpx.Client, transport=httpx.MockTransport(handler))
    monkeypatch.setattr(upload.httpx, "Client", client)
    monkeypatch.setenv("RECOMMENDER_API_KEY", "k-env")
    args = ["probe", "--device", "cpu", "--seconds", "2", "--format", "json"]
    result = CliRunner().invoke(
        app, [*args, "--workload", f"{SAMPLES}:linear", "--post-to", "http://svc:8000"]
    )
    assert result.exit_code == 0, result.output
    (request,) = seen
    assert request.headers["X-API-Key"] == "k-env"
    assert Profile.model_validate_json(request.content).machine.device == "cpu"
    assert "sent the profile to http://svc:8000/v1/profiles (HTTP 201)" in result.stderr


def test_a_failed_post_exits_1_but_keeps_the_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = functools.partial(
        httpx.Client, transport=httpx.MockTransport(lambda r: httpx.Response(401, json={}))
    )
    monkeypatch.setattr(upload.httpx, "Client", client)
    out = tmp_path / "p.json"
    result = CliRunner().invoke(
        app,
        [
            "probe",
            "--device",
            "cpu",
            "--seconds",
            "2",
            "--workload",
            f"{SAMPLES}:linear",
            "--output",
            str(out),
            "--post-to",
            "http://svc",
            "--api-key",
            "bad",
        ],
    )
    assert result.exit_code == 1
    assert "refused the API key" in result.stderr
    assert load_profile(out).workload is not None


def test_a_bad_workload_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["probe", "--device", "cpu", "--workload", "reference:nope"])
    assert result.exit_code == 2
    assert "unknown reference workload" in result.stderr


def test_without_torch_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    result = CliRunner().invoke(app, ["probe", "--device", "cpu"])
    assert result.exit_code == 2
    assert "pip install 'instance-recommender[probe]'" in result.stderr
    result = CliRunner().invoke(app, ["doctor", "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)[0]["code"] == "torch-missing"


def test_doctor_reports_a_missing_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(doctor, "_device_nodes", lambda: False)
    result = CliRunner().invoke(app, ["doctor", "--device", "cuda", "--format", "json"])
    assert result.exit_code == 1
    assert [d["code"] for d in json.loads(result.stdout)] == ["no-nvidia-driver"]
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0 and "no-gpu" in result.stdout
    probe = CliRunner().invoke(app, ["probe", "--device", "cuda", "--seconds", "2"])
    assert probe.exit_code == 1 and "no-nvidia-driver" in probe.stderr


@pytest.mark.parametrize(
    ("argv0", "ours"),
    [
        ("/usr/local/bin/recommender", True),
        ("/repo/recommender/__main__.py", True),  # python -m recommender
        ("/venv/lib/python3.11/site-packages/pytest/__main__.py", False),  # python -m pytest
        ("/venv/bin/pytest", False),
        ("-c", False),
    ],
)
def test_the_budget_counts_from_process_start_only_in_our_own_process(
    monkeypatch: pytest.MonkeyPatch, argv0: str, ours: bool
) -> None:
    """``time recommender probe --seconds N`` ends within N, imports included; run inside
    another program (a test, a notebook) the budget starts after torch is imported, which
    that program paid for, or a short budget would be gone before the first phase."""
    from recommender.cli import probe as probe_cli

    monkeypatch.setattr("sys.argv", [argv0])
    started = probe_cli._process_start()
    assert (started is not None) is ours
