"""Refreshing the cloud catalogs from the clouds' own APIs (AWS, GCP, Azure), safely.

``refresh_cloud(cloud, catalog_dir, options, settings)`` asks one cloud's APIs for its GPU
instance types, regions and prices, merges them into the current catalog region by region
(a region that failed keeps its previous rows), prints nothing, and replaces the file only
when the result passes the catalog's integrity checks and does not drop more than a set
share of the previous rows. The refreshers are registered in :mod:`.registry`; cloud SDKs
are imported only when one runs (``pip install 'instance-recommender[refresh]'``).
"""

from recommender.catalog.refresh.base import (
    REFRESH_EXTRA,
    CredentialsRejectedError,
    Fetched,
    MissingCredentialsError,
    MissingSDKError,
    Refresher,
    RefreshError,
    RefreshOptions,
    Skipped,
)
from recommender.catalog.refresh.diff import CatalogDiff, diff_catalogs
from recommender.catalog.refresh.registry import REFRESHERS, get_refresher
from recommender.catalog.refresh.retry import Backoff
from recommender.catalog.refresh.run import RefreshReport, RefreshSettings, refresh_cloud

__all__ = [
    "REFRESHERS",
    "REFRESH_EXTRA",
    "Backoff",
    "CatalogDiff",
    "CredentialsRejectedError",
    "Fetched",
    "MissingCredentialsError",
    "MissingSDKError",
    "RefreshError",
    "RefreshOptions",
    "RefreshReport",
    "RefreshSettings",
    "Refresher",
    "Skipped",
    "diff_catalogs",
    "get_refresher",
    "refresh_cloud",
]
