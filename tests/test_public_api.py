"""The public surface is pinned: removing or renaming an export must be deliberate."""

from __future__ import annotations

import recommender
import recommender.catalog
import recommender.scoring

EXPECTED_TOP = {
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
}


def test_top_level_exports_are_pinned() -> None:
    assert set(recommender.__all__) == EXPECTED_TOP
    for name in recommender.__all__:
        assert hasattr(recommender, name), name


def test_scoring_exports_resolve() -> None:
    for module in (recommender.scoring, recommender.catalog):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_library_entry_points_are_the_engine() -> None:
    assert recommender.recommend is recommender.scoring.recommend
    assert recommender.predict is recommender.scoring.predict
