"""The one place cloud refreshers are registered: cloud name -> refresher.

Each entry's docstring (the refresher class's first line) is what the README's
"Refreshing catalogs from the cloud APIs" section lists; a test checks that every name here
is documented there and has its own ``tests/catalog/refresh/test_<name>.py``. SDKs are
imported only when a refresher runs, so importing this module is cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from recommender.catalog.refresh.aws import AwsRefresher
from recommender.catalog.refresh.azure import AzureRefresher
from recommender.catalog.refresh.base import Refresher, RefreshError
from recommender.catalog.refresh.gcp import GcpRefresher

__all__ = ["REFRESHERS", "RegisteredRefresher", "get_refresher"]


@dataclass(frozen=True, slots=True)
class RegisteredRefresher:
    """A refresher's name, how to build it, and the line that documents it."""

    name: str
    factory: Callable[[], Refresher]
    doc: str


def _entry(
    name: str, cls: type[AwsRefresher | GcpRefresher | AzureRefresher]
) -> RegisteredRefresher:
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    return RegisteredRefresher(name, cls, doc)


REFRESHERS: dict[str, RegisteredRefresher] = {
    "aws": _entry("aws", AwsRefresher),
    "gcp": _entry("gcp", GcpRefresher),
    "azure": _entry("azure", AzureRefresher),
}


def get_refresher(name: str) -> Refresher:
    """A fresh refresher for cloud ``name``; raises :class:`RefreshError` for unknown names."""
    entry = REFRESHERS.get(name)
    if entry is None:
        raise RefreshError(f"no refresher for {name!r}; known: {', '.join(REFRESHERS)}")
    return entry.factory()
