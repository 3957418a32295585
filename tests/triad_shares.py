"""The share of its datasheet bandwidth each chip's measured triad reaches, for the tests that
check a calibration share is the median of what ``achievable.yaml`` measured."""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from recommender.scoring.achievable import measured


def median_triad_share(datasheet_gbs: Mapping[str, float]) -> tuple[float, int]:
    """Median of measured triad / datasheet bandwidth over the chips of ``datasheet_gbs``
    (accelerator id -> datasheet GB/s) that have a triad, and how many have one."""
    shares = [
        m.memory_bandwidth_gbs / datasheet_gbs[acc_id]
        for acc_id, m in measured().items()
        if m.memory_bandwidth_gbs is not None and acc_id in datasheet_gbs
    ]
    return (statistics.median(shares) if shares else float("nan")), len(shares)
