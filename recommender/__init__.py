"""instance-recommender: which cloud GPU instance (or edge device) to run an ML workload on.

The public surface is what ``__all__`` lists; everything in submodules whose name starts
with an underscore, and anything not listed here, may change without notice.
"""

from recommender.catalog import (
    Accelerator,
    Catalog,
    CatalogError,
    Offer,
    OffersTable,
    Problem,
    UnknownAcceleratorError,
    load_catalog,
    validate_catalog,
)

__version__ = "0.1.0"

__all__ = [
    "Accelerator",
    "Catalog",
    "CatalogError",
    "Offer",
    "OffersTable",
    "Problem",
    "UnknownAcceleratorError",
    "__version__",
    "load_catalog",
    "validate_catalog",
]
