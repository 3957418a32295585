"""The engine's sort-free replacements for np.unique / np.isin agree with numpy's."""

from __future__ import annotations

import numpy as np

from recommender.catalog.offers import _member
from recommender.scoring.predict import _factorize


def test_factorize_equals_numpy_unique_with_inverse() -> None:
    rng = np.random.default_rng(7)
    for size in (0, 1, 10, 5_000):
        keys = rng.integers(0, 300 * 1024, size=size).astype(np.int64)
        unique, inverse = _factorize(keys)
        want_unique, want_inverse = np.unique(keys, return_inverse=True)
        assert np.array_equal(unique, want_unique)
        assert np.array_equal(inverse, want_inverse.reshape(-1))


def test_member_equals_numpy_isin() -> None:
    rng = np.random.default_rng(11)
    column = rng.integers(0, 40, size=2_000).astype(np.int32)
    for wanted in ([], [0], [3, 39], list(range(0, 40, 3))):
        codes = np.array(wanted, dtype=np.int32)
        assert np.array_equal(_member(column, codes, 40), np.isin(column, codes))
