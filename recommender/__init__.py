"""instance-recommender: which cloud GPU instance (or edge device) to run an ML workload on.

    >>> from recommender import RecommenderError, load_catalog, recommend, predict
    >>> catalog = load_catalog()  # optional: recommend() loads the bundled catalog itself
    >>> result = recommend(spec, catalog=catalog, objective="cheapest")  # dict, Workload or path

Every error raised on purpose is a :class:`RecommenderError` naming the field at fault:
:class:`WorkloadError`, :class:`CatalogError`, :class:`ProfileError` (each with its
``problems``: file, line, field), :class:`NotFoundError` (e.g. an unknown accelerator, with
suggestions) and :class:`InvalidOptionError` (an objective or count outside its choices).

The public surface is what ``__all__`` lists; everything in submodules whose name starts
with an underscore, and anything not listed here, may change without notice.

Names are imported on first use (PEP 562), so that ``import recommender`` and the command
line's ``--help`` do not pay for the catalog schema, numpy and the scoring engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recommender._facade import predict, recommend
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
    from recommender.errors import InvalidOptionError, NotFoundError, ProfileError, RecommenderError
    from recommender.profile import Profile
    from recommender.scoring import Calibration, Prediction, Recommendation
    from recommender.workload import Workload, load_workload

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "Accelerator": "recommender.catalog",
    "Catalog": "recommender.catalog",
    "CatalogError": "recommender.catalog",
    "Offer": "recommender.catalog",
    "OffersTable": "recommender.catalog",
    "Problem": "recommender.catalog",
    "UnknownAcceleratorError": "recommender.catalog",
    "load_catalog": "recommender.catalog",
    "validate_catalog": "recommender.catalog",
    "WorkloadError": "recommender.catalog.problems",
    "InvalidOptionError": "recommender.errors",
    "NotFoundError": "recommender.errors",
    "ProfileError": "recommender.errors",
    "RecommenderError": "recommender.errors",
    "Profile": "recommender.profile",
    "Calibration": "recommender.scoring",
    "Prediction": "recommender.scoring",
    "Recommendation": "recommender.scoring",
    "predict": "recommender._facade",
    "recommend": "recommender._facade",
    "Workload": "recommender.workload",
    "load_workload": "recommender.workload",
}

__all__ = [
    "Accelerator",
    "Calibration",
    "Catalog",
    "CatalogError",
    "InvalidOptionError",
    "NotFoundError",
    "Offer",
    "OffersTable",
    "Prediction",
    "Problem",
    "Profile",
    "ProfileError",
    "Recommendation",
    "RecommenderError",
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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'recommender' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
