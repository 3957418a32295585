"""Fitting the calibration constants to measured throughputs.

Each observation is a workload measured on ``gpus`` x an accelerator. The fit adjusts, in
log space, the achievable compute efficiency of each chip-form and precision class that the
observations cover, the memory-bandwidth efficiency, the demand model's pass counts and the
per-kernel overheads, so that modelled throughput matches the measurements. A Gaussian prior
pulls every constant toward its hand-set value, so constants the data barely constrain stay
sensible and a chip seen in one model only is not overfitted to it.

Needs scipy (``pip install 'instance-recommender[calibrate]'``); used by
``benchmarks/accuracy.py``, never at request time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from recommender.catalog import Catalog
from recommender.scoring.calibration import Calibration, efficiency_keys, precision_class
from recommender.scoring.engine import context
from recommender.scoring.predict import Rows
from recommender.workload import Workload

__all__ = ["Observation", "fit", "modelled_throughput"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Observation:
    workload: Workload
    accelerator: str  # canonical id
    gpus: int
    throughput: float  # measured, samples/s for the whole job
    group: str | None = None  # observations of one run (model, task, batch) on other GPUs


@dataclass(frozen=True)
class _Param:
    name: str
    get: Callable[[Calibration], float]
    set: Callable[[Calibration, float], Calibration]
    sigma: float  # prior width in natural-log units


def _dict_param(field: str, key: str, sigma: float) -> _Param:
    def get(c: Calibration) -> float:
        return float(getattr(c, field)[key])

    def set_(c: Calibration, v: float) -> Calibration:
        return c.with_values(**{field: {**getattr(c, field), key: v}})

    return _Param(f"{field}[{key}]", get, set_, sigma)


def _scalar_param(field: str, sigma: float) -> _Param:
    return _Param(
        field, lambda c: float(getattr(c, field)), lambda c, v: c.with_values(**{field: v}), sigma
    )


def _parameters(
    obs: Sequence[Observation], catalog: Catalog, base: Calibration
) -> tuple[list[_Param], Calibration]:
    params: list[_Param] = []
    cal = base
    seen: set[str] = set()
    for o in obs:
        acc = catalog.accelerator(o.accelerator)
        group = efficiency_keys(acc)[1] if acc.chip else acc.id
        key = f"{group}:{precision_class(o.workload.precision)}"
        if key not in seen:
            seen.add(key)
            # Start from the value the chain gives today, so the prior is the current belief.
            cal = replace(
                cal, compute={**cal.compute, key: cal.compute_efficiency(acc, o.workload.precision)}
            )
            params.append(_dict_param("compute", key, 0.4))
    params += [
        _dict_param("memory", "*", 0.3),
        _dict_param("transformer_passes", "eager", 0.7),
        _dict_param("transformer_passes", "compiled", 0.7),
        _dict_param("attention_passes", "eager", 0.7),
        _dict_param("cnn_passes", "eager", 0.7),
        _scalar_param("kernel_gpu_s", 1.0),
        _dict_param("kernel_cpu_s", "eager", 1.0),
        _scalar_param("attention_gemm_efficiency", 0.5),
    ]
    return params, cal


def modelled_throughput(
    obs: Sequence[Observation], catalog: Catalog, cal: Calibration
) -> FloatArray:
    """Device-bound modelled throughput of each observation under ``cal``."""
    out = np.empty(len(obs))
    index = {a.id: i for i, a in enumerate(catalog.accelerators)}
    by_workload: dict[int, list[int]] = {}
    for i, o in enumerate(obs):
        by_workload.setdefault(id(o.workload), []).append(i)
    for members in by_workload.values():
        ctx = context(obs[members[0]].workload, catalog, calibration=cal)
        n = len(members)
        rows = Rows(
            acc=np.array([index[obs[i].accelerator] for i in members], dtype=np.int32),
            gpus=np.array([float(obs[i].gpus) for i in members]),
            vcpus=np.full(n, np.inf),
            local_disk_gb=np.full(n, 1e6),
        )
        out[members] = ctx.predict(rows).throughput
    return out


def _group_index(obs: Sequence[Observation]) -> tuple[npt.NDArray[np.int64], int]:
    """Index of each observation's group (-1: none) and the number of groups."""
    names = sorted({o.group for o in obs if o.group is not None})
    return np.array([names.index(o.group) if o.group is not None else -1 for o in obs]), len(names)


def common_level(obs: Sequence[Observation], catalog: Catalog, cal: Calibration) -> Calibration:
    """Scale every achievable FLOP/s and bandwidth by one factor so that the median
    observation is modelled exactly (efficiencies stay at or below 1)."""
    measured = np.array([o.throughput for o in obs])
    k = float(np.median(measured / modelled_throughput(obs, catalog, cal)))
    return cal.with_values(
        compute={key: min(1.0, v * k) for key, v in cal.compute.items()},
        memory={key: min(1.0, v * k) for key, v in cal.memory.items()},
    )


def fit(
    obs: Sequence[Observation], catalog: Catalog, base: Calibration, prior_weight: float = 0.05
) -> Calibration:
    """The calibration that best explains ``obs`` (log-error least squares with priors).

    Observations that share a ``group`` (one model, task and batch measured on several GPUs)
    get a free common factor each, so the constants are fitted to how the GPUs compare
    within a run, not to how well the workload was described (a FLOP count off by 1.6x
    moves the group's factor, not every efficiency). :func:`common_level` then sets the
    absolute level from the median observation.
    """
    try:
        from scipy.optimize import least_squares
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "fitting needs scipy: pip install 'instance-recommender[calibrate]'"
        ) from exc
    params, start = _parameters(obs, catalog, base)
    theta0 = np.log([p.get(start) for p in params])
    sigma = np.array([p.sigma for p in params])
    measured = np.log([o.throughput for o in obs])
    group, n_groups = _group_index(obs)
    n = len(params)

    def apply(theta: FloatArray) -> Calibration:
        cal = start
        for p, v in zip(params, theta, strict=True):
            cal = p.set(cal, float(math.exp(v)))
        return cal

    def residuals(x: FloatArray) -> FloatArray:
        theta, offsets = x[:n], np.append(x[n:], 0.0)  # index -1: no group, no offset
        model = np.log(modelled_throughput(obs, catalog, apply(theta)))
        prior = math.sqrt(prior_weight) * (theta - theta0) / sigma
        return np.concatenate([model - measured + offsets[group], prior])

    bounded = ("compute", "memory", "attention_gemm")
    upper = np.where([p.name.startswith(bounded) for p in params], 0.0, np.inf)
    upper = np.concatenate([upper, np.full(n_groups, np.inf)])
    x0 = np.concatenate([theta0, np.zeros(n_groups)])
    result = least_squares(
        residuals, x0, bounds=(np.full(len(x0), -np.inf), upper), x_scale=1.0, diff_step=1e-3
    )
    return common_level(obs, catalog, apply(result.x[:n]))
