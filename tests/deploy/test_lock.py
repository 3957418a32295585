"""deploy/lock/*.txt: every package pinned with hashes, and in step with pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.conftest import DEPLOY, REPO

LOCKS = DEPLOY / "lock"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# The images' Python (python:3.11-slim; the probe's base image has 3.11 too), on Linux.
IMAGE_ENV = {"python_version": "3.11", "python_full_version": "3.11.0", "sys_platform": "linux"}


def pins(lock: Path) -> dict[str, tuple[str, list[str]]]:
    """``{name: (version, hashes)}`` for the requirements a 3.11 Linux install takes."""
    text = lock.read_text().replace("\\\n", " ")
    out: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        if not line or line.startswith((" ", "#")):
            continue
        spec, *_ = line.split(" --hash")
        req = Requirement(spec.strip())
        if req.marker is not None and not req.marker.evaluate(IMAGE_ENV):
            continue
        (pin,) = req.specifier
        assert pin.operator == "==", line
        out[canonicalize_name(req.name)] = (pin.version, re.findall(r"--hash=sha256:(\w+)", line))
    return out


def _wanted(*extras: str) -> list[Requirement]:
    reqs = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    for extra in extras:
        reqs += [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"][extra]]
    return [r for r in reqs if r.marker is None or r.marker.evaluate(IMAGE_ENV)]


@pytest.mark.parametrize("name", ["build", "service", "refresh", "probe"])
def test_every_pin_has_a_sha256(name: str) -> None:
    locked = pins(LOCKS / f"{name}.txt")
    assert locked
    for package, (_, hashes) in locked.items():
        assert hashes and all(len(h) == 64 for h in hashes), package


@pytest.mark.parametrize(
    ("name", "extras"),
    [("service", ("postgres",)), ("refresh", ("postgres", "refresh")), ("probe", ())],
)
def test_lock_satisfies_pyproject(name: str, extras: tuple[str, ...]) -> None:
    locked = pins(LOCKS / f"{name}.txt")
    for req in _wanted(*extras):
        key = canonicalize_name(req.name)
        assert key in locked, f"{req} is not in {name}.txt: run `make lock`"
        assert req.specifier.contains(locked[key][0], prereleases=True), (
            f"{name}.txt pins {req.name}=={locked[key][0]}, pyproject wants {req}: run `make lock`"
        )


def test_probe_lock_has_the_probe_extra_but_leaves_torch_to_the_base_image() -> None:
    locked = pins(LOCKS / "probe.txt")
    probe_extra = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["probe"]]
    for req in probe_extra:
        if req.name == "torch":
            assert "torch" not in locked
        else:
            assert req.specifier.contains(locked[canonicalize_name(req.name)][0])
    cuda_wheels = [p for p in locked if p.startswith("nvidia-") and p != "nvidia-ml-py"]
    assert not cuda_wheels, "CUDA wheels in the probe lock: torch's come with the base image"


def test_build_backend_lock_satisfies_build_system() -> None:
    locked = pins(LOCKS / "build.txt")
    for spec in PYPROJECT["build-system"]["requires"]:
        req = Requirement(spec)
        assert req.specifier.contains(locked[canonicalize_name(req.name)][0])


def test_locks_say_how_to_refresh_them() -> None:
    for lock in LOCKS.glob("*.txt"):
        assert "make lock" in lock.read_text().split("\n", 3)[1], lock
    makefile = (REPO / "Makefile").read_text()
    for lock in LOCKS.glob("*.txt"):
        assert f"-o deploy/lock/{lock.name}" in makefile
