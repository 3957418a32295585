"""The public surface is pinned: removing or renaming an export must be deliberate."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import recommender
import recommender._facade
import recommender.catalog
import recommender.scoring

EXPECTED_TOP = {
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
}


def test_top_level_exports_are_pinned() -> None:
    assert set(recommender.__all__) == EXPECTED_TOP
    for name in recommender.__all__:
        assert hasattr(recommender, name), name


def test_scoring_exports_resolve() -> None:
    for module in (recommender.scoring, recommender.catalog):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_library_entry_points_are_the_checked_facade() -> None:
    assert recommender.recommend is recommender._facade.recommend
    assert recommender.predict is recommender._facade.predict


SPEC = {
    "name": "bert",
    "kind": "inference",
    "model": {"parameters": 1.1e8, "flops_per_sample": 2.2e10},
}


@pytest.fixture(scope="module")
def catalog() -> recommender.Catalog:
    return recommender.load_catalog()


def test_every_typed_error_is_a_recommender_error() -> None:
    for name in ("CatalogError", "WorkloadError", "ProfileError", "NotFoundError"):
        assert issubclass(getattr(recommender, name), recommender.RecommenderError), name
    assert issubclass(recommender.UnknownAcceleratorError, recommender.NotFoundError)
    assert issubclass(recommender.NotFoundError, LookupError)  # what callers caught before
    assert issubclass(recommender.InvalidOptionError, ValueError)


def test_bogus_objective_lists_the_choices(catalog: recommender.Catalog) -> None:
    with pytest.raises(recommender.InvalidOptionError) as info:
        recommender.recommend(SPEC, catalog=catalog, objective="bogus")  # type: ignore[arg-type]
    assert info.value.field == "objective"
    assert "cheapest, fastest, balanced" in str(info.value)


@pytest.mark.parametrize("top", [0, -1, 51, True, 2.5])
def test_top_outside_its_range_is_refused(catalog: recommender.Catalog, top: object) -> None:
    with pytest.raises(recommender.InvalidOptionError, match="top must be") as info:
        recommender.recommend(SPEC, catalog=catalog, top=top)  # type: ignore[arg-type]
    assert info.value.field == "top"


def test_dict_workload_errors_are_workload_errors_naming_the_field(
    catalog: recommender.Catalog,
) -> None:
    bad = {**SPEC, "batch_size": 0, "kind": "serving"}
    with pytest.raises(recommender.WorkloadError) as info:
        recommender.recommend(bad, catalog=catalog)
    assert not isinstance(info.value, ValidationError)
    fields = {p.field for p in info.value.problems}
    assert {"kind", "batch_size"} <= fields
    assert info.value.field in fields
    assert "training, inference, edge" in str(info.value) or "'training'" in str(info.value)


def test_not_a_mapping_is_a_workload_error(catalog: recommender.Catalog) -> None:
    with pytest.raises(recommender.WorkloadError):
        recommender.recommend(42, catalog=catalog)  # type: ignore[arg-type]


def test_profile_mapping_errors_are_profile_errors(catalog: recommender.Catalog) -> None:
    with pytest.raises(recommender.ProfileError) as info:
        recommender.recommend(SPEC, catalog=catalog, profile={"schema_version": "x"})
    assert info.value.problems


def test_unknown_accelerator_is_not_found_with_suggestions(catalog: recommender.Catalog) -> None:
    with pytest.raises(recommender.NotFoundError, match="did you mean") as info:
        recommender.predict(SPEC, "A100-80", catalog=catalog)
    assert isinstance(info.value, recommender.UnknownAcceleratorError)


@pytest.mark.parametrize("gpus", [0, 65, False])
def test_gpu_count_outside_its_range_is_refused(catalog: recommender.Catalog, gpus: int) -> None:
    with pytest.raises(recommender.InvalidOptionError, match="gpus must be"):
        recommender.predict(SPEC, "A100-80GB", gpus, catalog=catalog)


def test_facade_accepts_a_dict_and_loads_the_default_catalog() -> None:
    result = recommender.recommend(SPEC, top=2)
    assert len(result.picks) == 2
