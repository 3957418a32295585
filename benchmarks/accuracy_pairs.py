"""Scoring one baseline -> target pair of published rows (the "with baseline" column of
``accuracy.py``) and the naive references it is compared with.

A pair is two rows of one workload (the same key) on other hardware: row ``a``'s measurement
is the baseline, row ``b`` the one predicted. The engine scales ``b``'s modelled rate by the
share of ``a``'s gap to the model that ``b``'s part takes (``transfer``); the naive rules
scale ``a``'s measurement by a ratio of datasheet figures.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from published import Row

from recommender.catalog import Catalog
from recommender.scoring.hardware import datasheet_peak_tflops

__all__ = ["Pair", "err", "naive", "pairs", "peak_ratio", "with_baseline"]

Pair = tuple[int, int]


def pairs(rows: list[Row]) -> list[Pair]:
    """(baseline, target) index pairs of rows with the same key on other hardware."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_key[r.key].append(i)
    out: list[Pair] = []
    for members in by_key.values():
        for a in members:
            for b in members:
                oa, ob = rows[a].observation, rows[b].observation
                if a != b and (oa.accelerator, oa.gpus) != (ob.accelerator, ob.gpus):
                    out.append((a, b))
    return out


def err(predicted: float, measured: float) -> float:
    return abs(predicted / measured - 1.0) * 100.0


def with_baseline(
    rows: list[Row], modelled: np.ndarray, a: int, b: int, alpha: float = 1.0
) -> float:
    """Error of predicting row ``b`` from row ``a``'s measurement: modelled_b x (measured_a /
    modelled_a) ** alpha, what ``predict`` does with a ``baseline:`` (``alpha``: the transfer
    exponent of b's relation to a; 1 is Habitat-style scaling, measured_a x modelled_b /
    modelled_a)."""
    gap = rows[a].observation.throughput / float(modelled[a])
    return err(float(modelled[b]) * gap**alpha, rows[b].observation.throughput)


def peak_ratio(rows: Sequence[Row], catalog: Catalog, a: int, b: int) -> float:
    """Datasheet peak FLOP/s of row ``b``'s part over row ``a``'s, at ``a``'s precision."""
    oa, ob = rows[a].observation, rows[b].observation
    acc_a, acc_b = catalog.accelerator(oa.accelerator), catalog.accelerator(ob.accelerator)
    precision = oa.workload.precision
    return datasheet_peak_tflops(acc_b, precision) / datasheet_peak_tflops(acc_a, precision)


def naive(rows: list[Row], catalog: Catalog, a: int, b: int, how: str) -> float:
    oa, ob = rows[a].observation, rows[b].observation
    acc_a, acc_b = catalog.accelerator(oa.accelerator), catalog.accelerator(ob.accelerator)
    flops = peak_ratio(rows, catalog, a, b)
    bandwidth = acc_b.memory_bandwidth_gbs / acc_a.memory_bandwidth_gbs
    ratio = {"peak": flops, "bandwidth": bandwidth, "geomean": math.sqrt(flops * bandwidth)}[how]
    return err(oa.throughput * ratio * ob.gpus / oa.gpus, ob.throughput)
