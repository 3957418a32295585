"""benchmarks/accuracy_fold.py: one held-out source, opened by key and group."""

from __future__ import annotations

import numpy as np
import pytest

accuracy = pytest.importorskip("accuracy")
published = pytest.importorskip("published")
fold = pytest.importorskip("accuracy_fold")
report = pytest.importorskip("accuracy_report")

SOURCE = "nvidia-dle"


@pytest.fixture(scope="module")
def loaded() -> tuple[list[object], object]:
    catalog = accuracy.bench_catalog()
    rows, _ = published.load_rows(catalog)
    return rows, catalog


def test_a_model_off_by_one_factor_on_a_source_is_biased_but_scales_right(
    loaded: tuple[list[object], object],
) -> None:
    """Pairs compare rows of one key, which lie in one source: a uniform factor on that
    source's modelled rates leaves every baseline error at zero and shows in the bias."""
    rows, catalog = loaded
    measured = np.array([r.observation.throughput for r in rows])
    modelled = np.where([r.source == SOURCE for r in rows], 2.0 * measured, measured)
    keys = fold.key_errors(rows, catalog, modelled, SOURCE)
    assert keys and all(k.engine == pytest.approx(0.0, abs=1e-9) for k in keys)
    assert all(k.geomean >= 0.0 for k in keys)
    assert sum(k.pairs for k in keys) == sum(
        1 for _, b in accuracy.pairs(rows) if rows[b].source == SOURCE
    )
    groups = report.group_bias(rows, modelled, fold.groups_in(SOURCE))
    assert groups and all(g.ratio == pytest.approx(2.0) for g in groups)
    assert all(g.error == pytest.approx(100.0) for g in groups)
    assert sum(g.rows for g in groups) == sum(1 for r in rows if r.source == SOURCE and r.absolute)


def test_the_keys_where_the_engine_loses_most_to_the_naive_rule_come_first(
    loaded: tuple[list[object], object],
) -> None:
    rows, catalog = loaded
    rng = np.random.default_rng(0)
    measured = np.array([r.observation.throughput for r in rows])
    modelled = measured * rng.uniform(0.5, 2.0, len(rows))
    keys = fold.key_errors(rows, catalog, modelled, SOURCE)
    excess = [k.pairs * (k.engine - k.geomean) for k in keys]
    assert excess == sorted(excess, reverse=True)


def test_without_refitting_the_fold_is_the_priors(loaded: tuple[list[object], object]) -> None:
    from recommender.scoring.calibrate import modelled_throughput
    from recommender.scoring.calibration import prior_calibration

    rows, catalog = loaded
    few = [r for r in rows if r.source in (SOURCE, "timm")][:40]
    priors = prior_calibration()
    got = fold.held_out_modelled(few, catalog, priors, SOURCE, refit=False)
    want = modelled_throughput([r.observation for r in few], catalog, priors)
    np.testing.assert_allclose(got, want)


@pytest.fixture(scope="module")
def two_sources(
    loaded: tuple[list[object], object],
) -> tuple[list[object], object, np.ndarray]:
    """The held-out source's rows and timm's, and their rates under the priors (a stand-in
    for a fold's fit, which takes minutes)."""
    from recommender.scoring.calibrate import modelled_throughput
    from recommender.scoring.calibration import prior_calibration

    rows, catalog = loaded
    few = [r for r in rows if r.source in (SOURCE, "timm")]
    modelled = modelled_throughput([r.observation for r in few], catalog, prior_calibration())
    return few, catalog, modelled


def test_the_fold_line_carries_gaps_fitted_without_the_fold_and_its_keys_add_up_to_it(
    two_sources: tuple[list[object], object, np.ndarray],
) -> None:
    """The fold's transfer exponents are fitted on the pairs it keeps (the held-out rows'
    modelled rates cannot move them), its baseline errors are ``accuracy.evaluate``'s with
    them, and the per-key table, carried the same way, averages to the fold line."""
    import statistics

    few, catalog, modelled = two_sources
    part, transfer = fold.fold_scores(few, catalog, modelled, SOURCE)
    held = np.array([r.source == SOURCE for r in few])
    skewed = np.where(held, modelled * np.linspace(0.5, 2.0, len(few)), modelled)
    assert fold.fold_scores(few, catalog, skewed, SOURCE)[1] == transfer
    assert transfer != accuracy.HABITAT  # timm's pairs moved it off Habitat's 1
    members = [i for i, r in enumerate(few) if r.source == SOURCE]
    want = accuracy.evaluate(few, catalog, modelled, members, accuracy.pairs(few), transfer)
    assert part["baseline"].all() == want["baseline"].all()
    assert part["absolute"].all() == want["absolute"].all()
    keys = fold.key_errors(few, catalog, modelled, SOURCE, transfer)
    weighted = sum(k.pairs * k.engine for k in keys) / sum(k.pairs for k in keys)
    assert weighted == pytest.approx(statistics.fmean(part["baseline"].all()))
    line = accuracy.fold_line(SOURCE, len(members), part, transfer)
    assert f"engine+baseline {statistics.fmean(part['baseline'].all()):6.1f} %" in line


def test_the_priors_alone_carry_the_whole_gap(
    two_sources: tuple[list[object], object, np.ndarray],
) -> None:
    few, catalog, modelled = two_sources
    _, transfer = fold.fold_scores(few, catalog, modelled, SOURCE, refit=False)
    assert transfer == accuracy.HABITAT


def test_the_constants_a_fold_moved_most_come_first() -> None:
    """A constant within 5 % of the shipped one is left out; one the fold lacks is listed
    first, then the largest move in log ratio, up or down alike."""
    from recommender.scoring.calibration import default_calibration

    shipped = default_calibration()
    compute = {k: v for k, v in shipped.compute.items() if k != "volta:simt"}
    compute["hopper:tensor"] = shipped.compute["hopper:tensor"] * 1.02
    compute["ada:tensor"] = shipped.compute["ada:tensor"] / 1.5
    fold_cal = shipped.with_values(compute=compute, kernel_gpu_s=shipped.kernel_gpu_s * 2.0)
    drift = fold.constant_drift(fold_cal, shipped)
    names = [d.name for d in drift]
    assert names == ["compute.volta:simt", "kernel_gpu_s", "compute.ada:tensor"]
    assert drift[0].fold is None and drift[0].shipped == shipped.compute["volta:simt"]
    assert drift[1].fold == pytest.approx(2.0 * drift[1].shipped)
    assert fold.constant_drift(shipped, shipped) == []
