"""Fixtures for the refresher tests: a small catalog directory, fast backoff, no network.

Every test here runs with sockets limited to the loopback interface: a refresher that tried
a real cloud endpoint (or a metadata endpoint such as 169.254.169.254) fails loudly instead.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh import Backoff, Fetched, RefreshOptions
from recommender.catalog.refresh import registry as registry_module
from recommender.catalog.refresh.registry import RegisteredRefresher
from recommender.catalog.schema import (
    AcceleratorFile,
    CloudCatalog,
    Family,
    InstanceType,
    RegionPrice,
    Source,
)
from recommender.catalog.writer import dump_yaml
from recommender.catalog.yamlfile import load_document

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[3]
TODAY = dt.date(2025, 6, 2)


def fixture(name: str) -> Any:
    """A JSON fixture from ``fixtures/``."""
    return json.loads((FIXTURES / name).read_text())


class NetworkBlockedError(AssertionError):
    pass


def _loopback(address: object) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    return isinstance(host, str) and (host.startswith("127.") or host in ("::1", "localhost"))


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any connection or name lookup that would leave this machine."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family == socket.AF_UNIX or _loopback(address):
            return real_connect(self, address)
        raise NetworkBlockedError(f"test tried to connect to {address!r}")

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is None or _loopback(host):
            return real_getaddrinfo(host, *args, **kwargs)
        raise NetworkBlockedError(f"test tried to resolve {host!r}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def backoff(sleeps: list[float]) -> Backoff:
    """Three attempts; the waits are recorded instead of slept."""
    return Backoff(attempts=3, base_s=1.0, cap_s=8.0, sleep=sleeps.append, jitter=lambda a, b: b)


def instance(
    name: str, accelerator: str, gpus: int, prices: list[tuple[str, float | None, float | None]]
) -> InstanceType:
    return InstanceType(
        name=name,
        accelerator=accelerator,
        gpus=gpus,
        vcpus=4.0 * gpus,
        memory_gib=16.0 * gpus,
        prices=[RegionPrice(region=r, on_demand=od, spot=sp) for r, od, sp in prices],
    )


def cloud_catalog(cloud: str, families: dict[str, list[InstanceType]]) -> CloudCatalog:
    regions = sorted({p.region for insts in families.values() for i in insts for p in i.prices})
    return CloudCatalog(
        cloud=cloud,  # type: ignore[arg-type]
        source=Source(name="test fixture", retrieved=dt.date(2025, 1, 1)),
        regions=regions,
        families=[Family(name=n, instances=i) for n, i in families.items()],
    )


def write_catalog(directory: Path, catalog: CloudCatalog) -> Path:
    path = directory / f"{catalog.cloud}.yaml"
    path.write_text(dump_yaml(catalog), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def names() -> AcceleratorNames:
    """Name resolution over the shipped accelerators.yaml (the cloud files are not needed)."""
    doc = load_document(REPO / "catalogs" / "accelerators.yaml", AcceleratorFile)
    return AcceleratorNames(doc.model.accelerators)


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """A catalog directory holding only a copy of the real accelerators.yaml."""
    directory = tmp_path / "catalogs"
    directory.mkdir()
    shutil.copy(REPO / "catalogs" / "accelerators.yaml", directory / "accelerators.yaml")
    return directory


@dataclass
class PreparedRefresher:
    """A refresher (our protocol) that returns a prepared result instead of asking a cloud."""

    result: Fetched
    cloud: str = "aws"
    source_name: str = "prepared"
    calls: list[RefreshOptions] = field(default_factory=list)

    def ready(self, options: RefreshOptions) -> None:
        pass

    def fetch(self, names: AcceleratorNames, options: RefreshOptions) -> Fetched:
        self.calls.append(options)
        return self.result


@pytest.fixture
def use(monkeypatch: pytest.MonkeyPatch) -> Callable[[Fetched], PreparedRefresher]:
    """Register a :class:`PreparedRefresher` for "aws" returning the given result."""

    def install(result: Fetched) -> PreparedRefresher:
        refresher = PreparedRefresher(result)
        entry = RegisteredRefresher("aws", lambda: refresher, "prepared")
        monkeypatch.setitem(registry_module.REFRESHERS, "aws", entry)
        return refresher

    return install
