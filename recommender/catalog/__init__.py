"""Catalogs of accelerators, cloud GPU instances with prices, and edge devices.

Load with :func:`load_catalog`; filter offers with :attr:`Catalog.offers`; resolve any
spelling of an accelerator with :meth:`Catalog.accelerator`.
"""

from recommender.catalog.catalog import Catalog
from recommender.catalog.loader import default_catalog_dir, load_catalog, validate_catalog
from recommender.catalog.names import AcceleratorNames, UnknownAcceleratorError, normalize_name
from recommender.catalog.offers import PRECISIONS, Offer, OffersTable
from recommender.catalog.problems import CatalogError, Problem
from recommender.catalog.schema import (
    Accelerator,
    CloudCatalog,
    EdgeDevice,
    Family,
    InstanceType,
    Precision,
    RegionPrice,
    Source,
)

__all__ = [
    "PRECISIONS",
    "Accelerator",
    "AcceleratorNames",
    "Catalog",
    "CatalogError",
    "CloudCatalog",
    "EdgeDevice",
    "Family",
    "InstanceType",
    "Offer",
    "OffersTable",
    "Precision",
    "Problem",
    "RegionPrice",
    "Source",
    "UnknownAcceleratorError",
    "default_catalog_dir",
    "load_catalog",
    "normalize_name",
    "validate_catalog",
]
