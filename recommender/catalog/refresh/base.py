"""What every cloud refresher shares: its protocol, its options, its errors, what it returns.

A refresher asks one cloud's APIs which GPU instance types exist where and what they cost,
and returns a :class:`Fetched`: machines (shapes mapped to our families and canonical
accelerator ids), quotes per region, the regions it refreshed, the regions that failed (and
why), and everything it saw but could not put in the catalog (:class:`Skipped`: an unknown
GPU, a fractional GPU, a shape without a price). Nothing here talks to a cloud.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Literal, Protocol

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh.retry import Backoff
from recommender.catalog.schema import CloudName, Source

__all__ = [
    "REFRESH_EXTRA",
    "CredentialsRejectedError",
    "Fetched",
    "Machine",
    "MachineKey",
    "MissingCredentialsError",
    "MissingSDKError",
    "Progress",
    "Quote",
    "RefreshError",
    "RefreshOptions",
    "Refresher",
    "Skipped",
    "chunks",
    "import_sdk",
    "no_progress",
]

REFRESH_EXTRA = "pip install 'instance-recommender[refresh]'"

Arch = Literal["x86_64", "arm64"]
# (instance type, accelerator id, GPUs): the identity of an instance row, as integrity sees it.
MachineKey = tuple[str, str, int]
# progress(label, done, total): the CLI draws it as a bar on stderr.
Progress = Callable[[str, int, int], None]


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    """``items`` in consecutive lists of at most ``size`` (API filters cap their values)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def no_progress(label: str, done: int, total: int) -> None:
    """The default :data:`Progress`: says nothing."""


class RefreshError(Exception):
    """A refresh could not be done; the message says what to do about it."""


class MissingSDKError(RefreshError):
    """The cloud's SDK is not installed: names the package and the pip extra."""

    def __init__(self, cloud: str, package: str) -> None:
        self.cloud = cloud
        self.package = package
        super().__init__(
            f"refreshing {cloud} needs the {package} package, which is not installed; "
            f"install the refresh extra: {REFRESH_EXTRA}"
        )


class MissingCredentialsError(RefreshError):
    """No credentials were found; the message names exactly what to set for this cloud."""

    def __init__(self, cloud: str, what_to_set: str, detail: str | None = None) -> None:
        self.cloud = cloud
        self.what_to_set = what_to_set
        tail = f" ({detail})" if detail else ""
        super().__init__(f"no {cloud} credentials found{tail}: {what_to_set}")


class CredentialsRejectedError(RefreshError):
    """The cloud refused the credentials (expired, wrong account, missing permission)."""


def import_sdk(cloud: str, module: str, package: str) -> ModuleType:
    """Import an SDK module lazily, or raise :class:`MissingSDKError` naming ``package``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingSDKError(cloud, package) from exc


@dataclass(frozen=True, slots=True)
class RefreshOptions:
    """How one refresh runs: which regions, whether metadata endpoints may be used, limits."""

    regions: tuple[str, ...] = ()  # empty: every region the account can see
    instance_metadata: bool = True  # may credential chains ask 169.254.169.254 & co.?
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 30.0
    backoff: Backoff = field(default_factory=Backoff)
    progress: Progress = no_progress

    def wants(self, region: str) -> bool:
        return not self.regions or region in self.regions


@dataclass(frozen=True, slots=True)
class Machine:
    """One instance shape as the catalog stores it (prices apart)."""

    name: str
    family: str
    family_title: str
    price_model: str | None
    accelerator: str
    gpus: int
    vcpus: float
    memory_gib: float
    local_disk_gb: float = 0.0
    gpu_memory_gib: float | None = None
    arch: Arch = "x86_64"

    @property
    def key(self) -> MachineKey:
        return (self.name, self.accelerator, self.gpus)


@dataclass(frozen=True, slots=True)
class Quote:
    """What a machine costs in one region, USD per hour for the whole instance."""

    region: str
    on_demand: float | None = None
    spot: float | None = None
    zones: tuple[str, ...] = ()


SkipReason = Literal[
    "unknown-accelerator", "ambiguous-accelerator", "fractional-gpu", "no-gpu-count", "no-price"
]


@dataclass(frozen=True, slots=True)
class Skipped:
    """Something the cloud offers that the refreshed catalog does not carry, and why."""

    instance_type: str
    reason: SkipReason
    detail: str
    accelerator: str | None = None  # the cloud's own name for the device, when it gave one
    regions: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "instance_type": self.instance_type,
            "reason": self.reason,
            "detail": self.detail,
            "accelerator": self.accelerator,
            "regions": list(self.regions),
        }


@dataclass
class Fetched:
    """Everything one refresher learnt from its cloud."""

    cloud: CloudName
    source: Source
    machines: dict[MachineKey, Machine] = field(default_factory=dict)
    quotes: dict[MachineKey, dict[str, Quote]] = field(default_factory=dict)
    regions: set[str] = field(default_factory=set)  # refreshed: the API answered for these
    failed: dict[str, str] = field(default_factory=dict)  # region -> why it failed
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, machine: Machine, quote: Quote) -> None:
        """Record ``machine`` offered at ``quote`` (the first shape seen for a key wins)."""
        self.machines.setdefault(machine.key, machine)
        self.quotes.setdefault(machine.key, {})[quote.region] = quote

    def skip(self, item: Skipped) -> None:
        """Report ``item``, folding repeats of the same instance type and reason together."""
        for i, old in enumerate(self.skipped):
            if (old.instance_type, old.reason) == (item.instance_type, item.reason):
                regions = tuple(sorted(set(old.regions) | set(item.regions)))
                self.skipped[i] = Skipped(
                    old.instance_type, old.reason, old.detail, old.accelerator, regions
                )
                return
        self.skipped.append(item)

    def fail(self, region: str, reason: str) -> None:
        self.failed[region] = reason
        self.regions.discard(region)

    @property
    def unknown_accelerators(self) -> list[str]:
        """The cloud's names of devices that accelerators.yaml does not know (sorted)."""
        return sorted(
            {
                s.accelerator or s.instance_type
                for s in self.skipped
                if s.reason in ("unknown-accelerator", "ambiguous-accelerator")
            }
        )


class Refresher(Protocol):
    """One cloud's refresher (see :mod:`recommender.catalog.refresh.registry`)."""

    cloud: CloudName
    source_name: str

    def ready(self, options: RefreshOptions) -> None:
        """Find the SDK and credentials now; raise :class:`RefreshError` (fast) if missing."""
        ...

    def fetch(self, names: AcceleratorNames, options: RefreshOptions) -> Fetched:
        """Ask the cloud; raise :class:`RefreshError` (fast) when it cannot be asked at all."""
        ...
