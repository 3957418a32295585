"""benchmarks/accuracy_transfer_variants.py: other ways of carrying a baseline's gap, held
out by source, beside the shipped one."""

from __future__ import annotations

import numpy as np
import pytest

accuracy = pytest.importorskip("accuracy")
published = pytest.importorskip("published")
variants = pytest.importorskip("accuracy_transfer_variants")
transfer = pytest.importorskip("accuracy_transfer")


@pytest.fixture(scope="module")
def setup() -> tuple[list[object], object, object, dict[str, np.ndarray]]:
    """Every row, its pairs, and per source a stand-in for that fold's modelled rates: the
    measurements times noise of the fold's own (the fits are minutes; the scoring is not)."""
    catalog = accuracy.bench_catalog()
    rows, _ = published.load_rows(catalog)
    table = variants.pair_table(rows, catalog, accuracy.pairs(rows))
    measured = np.array([r.observation.throughput for r in rows])
    rng = np.random.default_rng(3)
    folds = {
        s: measured * np.exp(rng.normal(0.0, 0.3, len(rows)))
        for s in sorted({r.source for r in rows})
    }
    return rows, catalog, table, folds


def test_the_shipped_variant_scores_as_accuracy_py_does(
    setup: tuple[list[object], object, object, dict[str, np.ndarray]],
) -> None:
    """Held out, each fold fits its exponents on the pairs it keeps and scores its own:
    the errors are accuracy.py's for the same modelled rates, pair for pair."""
    rows, catalog, table, folds = setup
    shipped = variants.VARIANTS[0]
    errors = variants.held_out_errors(rows, table, folds, shipped)
    pair_list = accuracy.pairs(rows)
    for source in ("nvidia-dle", "llamacpp-gpu-benchmarks"):
        modelled = folds[source]
        members = [i for i, r in enumerate(rows) if r.source == source]
        fitted = transfer.fitted_transfer(rows, catalog, modelled, pair_list, set(members))
        scores = accuracy.evaluate(rows, catalog, modelled, members, pair_list, fitted)
        mine = errors[table.source == source]
        assert sorted(scores["baseline"].all()) == pytest.approx(sorted(mine[~np.isnan(mine)]))


def test_the_oracle_bounds_every_variant_of_the_shipped_form(
    setup: tuple[list[object], object, object, dict[str, np.ndarray]],
) -> None:
    """Fitted on the pairs it scores, the shipped form can do no worse on them than fitted
    on the other sources': the oracle line is a floor for that form, fold by fold."""
    rows, _, table, folds = setup
    shipped = variants.held_out_errors(rows, table, folds, variants.VARIANTS[0])
    oracle = variants.held_out_errors(rows, table, folds, variants.VARIANTS[-1])
    assert variants.VARIANTS[-1].oracle
    for source in folds:
        held = (table.source == source) & ~np.isnan(shipped)
        if held.any():
            assert oracle[held].mean() <= shipped[held].mean() + 1e-9


def test_weighing_each_source_alike_gives_every_kept_source_one_vote(
    setup: tuple[list[object], object, object, dict[str, np.ndarray]],
) -> None:
    _, _, table, _ = setup
    kept = table.source != "llamacpp-gpu-benchmarks"
    weight = variants._per_source(table, kept)
    for source in set(table.source[kept].tolist()):
        assert weight[kept & (table.source == source)].sum() == pytest.approx(1.0)
    means = variants.class_means(table, np.where(kept, 10.0, 30.0))
    assert means["all"] == pytest.approx(10.0 + 20.0 * (~kept).mean())
