"""Scoring: predict time and cost of a workload on every offer, rank, explain and advise.

Pure computation over a loaded catalog (no I/O, no web, no database). Entry points:
:func:`recommend` and :func:`predict`; outputs are the pydantic models of
:mod:`recommender.scoring.results`.
"""

from recommender.scoring.calibration import Calibration, default_calibration
from recommender.scoring.predict_api import predict
from recommender.scoring.recommend_api import recommend
from recommender.scoring.results import (
    Alternative,
    Cost,
    MemoryFit,
    Objective,
    Pick,
    Predicted,
    Prediction,
    Recommendation,
)

__all__ = [
    "Alternative",
    "Calibration",
    "Cost",
    "MemoryFit",
    "Objective",
    "Pick",
    "Predicted",
    "Prediction",
    "Recommendation",
    "default_calibration",
    "predict",
    "recommend",
]
