"""instance-recommender: which cloud GPU instance (or edge device) to run an ML workload on.

    >>> from recommender import Workload, load_catalog, recommend, predict
    >>> catalog = load_catalog()
    >>> result = recommend(Workload.model_validate(spec), catalog=catalog, objective="cheapest")

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
from recommender.catalog.problems import WorkloadError
from recommender.profile import Profile
from recommender.scoring import Calibration, Prediction, Recommendation, predict, recommend
from recommender.workload import Workload, load_workload

__version__ = "0.1.0"

__all__ = [
    "Accelerator",
    "Calibration",
    "Catalog",
    "CatalogError",
    "Offer",
    "OffersTable",
    "Prediction",
    "Problem",
    "Profile",
    "Recommendation",
    "UnknownAcceleratorError",
    "Workload",
    "WorkloadError",
    "__version__",
    "load_catalog",
    "load_workload",
    "predict",
    "recommend",
    "validate_catalog",
]
