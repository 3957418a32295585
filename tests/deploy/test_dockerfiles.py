"""The Dockerfiles: hadolint passes, and what they say agrees with the service and the CLI."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.deploy.conftest import (
    DEPLOY,
    REPO,
    SERVICE_PORT,
    Instruction,
    cli_options,
    dockerfile,
    known_env_name,
    tool,
)

SERVICE = DEPLOY / "Dockerfile"
PROBE = DEPLOY / "probe" / "Dockerfile"


@pytest.mark.parametrize("path", [SERVICE, PROBE], ids=["service", "probe"])
def test_hadolint_passes(path: Path) -> None:
    done = subprocess.run(
        [tool("hadolint"), "--no-color", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_finds_what_it_should(tmp_path: Path) -> None:
    """The lint is live: an unpinned pip install is reported."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:3.11-slim\nRUN pip install --no-cache-dir requests\n")
    done = subprocess.run(
        [tool("hadolint"), "--no-color", str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "DL3013" in done.stdout


def _stages(instructions: list[Instruction]) -> dict[str, list[Instruction]]:
    stages: dict[str, list[Instruction]] = {}
    current: list[Instruction] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            current = []
            name = ins.args.split(" AS ")[-1] if " AS " in ins.args else f"#{len(stages)}"
            stages[name] = current
        current.append(ins)
    return stages


def _json_args(ins: Instruction) -> list[str]:
    args: list[str] = json.loads(ins.args)
    return args


def _env(instructions: list[Instruction]) -> dict[str, str]:
    env: dict[str, str] = {}
    for ins in instructions:
        if ins.keyword == "ENV":
            env.update(re.findall(r"(\w+)=(\S+)", ins.args))
    return env


def test_service_image_is_the_default_target_and_serves_on_the_exposed_port() -> None:
    stages = _stages(dockerfile(SERVICE))
    assert list(stages)[-1] == "service"
    service = stages["service"]
    (expose,) = [i for i in service if i.keyword == "EXPOSE"]
    (cmd,) = [i for i in service if i.keyword == "CMD"]
    args = _json_args(cmd)
    assert args[0] == "serve" and args[args.index("--port") + 1] == expose.args == "8000"
    assert args[args.index("--host") + 1] == "0.0.0.0"
    assert {"--host", "--port"} <= cli_options("serve")
    assert int(expose.args) == SERVICE_PORT


def test_service_healthcheck_asks_a_real_endpoint(service: TestClient) -> None:
    (check,) = [i for i in _stages(dockerfile(SERVICE))["service"] if i.keyword == "HEALTHCHECK"]
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", check.args)
    assert url, check.args
    assert int(url.group(1)) == SERVICE_PORT and url.group(2) == "/healthz"
    assert service.get(url.group(2)).status_code == 200


def test_images_run_as_a_numeric_non_root_user() -> None:
    stages = _stages(dockerfile(SERVICE))
    for name in ("service", "refresh"):
        (user,) = [i for i in stages[name] if i.keyword == "USER"]
        uid, gid = (int(x) for x in user.args.split(":"))
        assert uid > 0 and gid > 0
    runtime = " ".join(i.args for i in stages["runtime"] if i.keyword == "RUN")
    assert f"--uid {uid}" in runtime and f"--gid {gid}" in runtime


def test_entrypoint_is_the_cli_so_migrations_are_a_separate_command() -> None:
    runtime = _stages(dockerfile(SERVICE))["runtime"]
    (entry,) = [i for i in runtime if i.keyword == "ENTRYPOINT"]
    assert _json_args(entry) == ["recommender"]
    assert cli_options("db", "upgrade")  # `docker run IMAGE db upgrade` exists


def test_refresh_image_runs_the_refresh_command() -> None:
    (cmd,) = [i for i in _stages(dockerfile(SERVICE))["refresh"] if i.keyword == "CMD"]
    args = _json_args(cmd)
    assert args[:2] == ["catalog", "refresh"]
    options = cli_options("catalog", "refresh")
    assert {a for a in args if a.startswith("--")} <= options


def test_env_names_are_settings_and_the_baked_catalogs_are_where_they_point() -> None:
    runtime = _stages(dockerfile(SERVICE))["runtime"]
    env = _env(runtime)
    assert env and all(known_env_name(n) for n in env), env
    (copy,) = [i for i in runtime if i.keyword == "COPY" and "catalogs" in i.args]
    assert copy.args.split()[-1].rstrip("/") == env["RECOMMENDER_CATALOG_DIR"]
    assert env["RECOMMENDER_DATABASE_URL"].startswith("sqlite:////var/lib/recommender/")


@pytest.mark.parametrize("path", [SERVICE, PROBE], ids=["service", "probe"])
def test_images_are_labelled_with_both_versions(path: Path) -> None:
    labels = " ".join(i.args for i in dockerfile(path) if i.keyword == "LABEL")
    assert 'org.opencontainers.image.version="${PROJECT_VERSION}"' in labels
    assert 'io.instance-recommender.catalog-version="${CATALOG_VERSION}"' in labels
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in labels
    runs = " ".join(i.args for i in dockerfile(path) if i.keyword == "RUN")
    assert "deploy/image_labels.py check" in runs  # a wrong label fails the build


@pytest.mark.parametrize(
    ("path", "locks"),
    [(SERVICE, {"build", "service", "refresh"}), (PROBE, {"build", "probe"})],
    ids=["service", "probe"],
)
def test_every_pip_install_is_from_a_lock_or_the_wheel(path: Path, locks: set[str]) -> None:
    used = set()
    for ins in dockerfile(path):
        for install in re.findall(r"pip install [^&]*", ins.args):
            lock = re.search(r"-r \S*?(\w+)\.txt", install)
            if lock:
                assert "--require-hashes" in install, install
                used.add(lock.group(1))
            else:
                assert "--no-deps" in install and ".whl" in install, install
    assert used == locks
    for name in locks:
        assert (DEPLOY / "lock" / f"{name}.txt").is_file()


@pytest.mark.parametrize("path", [SERVICE, PROBE], ids=["service", "probe"])
def test_build_context_filter_lets_every_copied_file_through(path: Path) -> None:
    ignore = path.with_name(path.name + ".dockerignore").read_text().splitlines()
    allowed = [p[1:] for p in ignore if p.startswith("!")]
    for ins in dockerfile(path):
        if ins.keyword != "COPY" or "--from=" in ins.args:
            continue
        for source in ins.args.split()[:-1]:
            files = [p for p in REPO.glob(source.rstrip("/")) if p.is_file()] or [
                p for p in REPO.glob(source.rstrip("/") + "/**/*") if p.is_file()
            ]
            assert files, f"COPY {source}: nothing in the repository"
            for f in files:
                rel = f.relative_to(REPO).as_posix()
                if "__pycache__" in rel:
                    continue
                assert any(fnmatch.fnmatch(rel, pat) for pat in allowed), f"{rel} is ignored"
