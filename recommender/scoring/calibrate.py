"""Fitting the calibration constants to measured throughputs.

Each observation is a workload measured on ``gpus`` x an accelerator. The fit adjusts, in
log space, the achievable compute efficiency of each architecture and precision class that the
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
from recommender.scoring.calibration import (
    MEASURED_MEMORY_KEY,
    Calibration,
    precision_class,
)
from recommender.scoring.hardware import MEASURED_KEY, Capabilities, capabilities
from recommender.scoring.issue_rate import kernels_of
from recommender.scoring.memory import StateBytes, state_bytes
from recommender.scoring.multinode import ClusterHardware, plan_clusters
from recommender.scoring.predict import Rows, predict_rows
from recommender.scoring.shape import Shape, activation_element_bytes, shape_of
from recommender.workload import Workload

__all__ = ["Observation", "fit", "modelled_throughput"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Observation:
    """One published measurement. ``gpus`` counts every GPU of the job; a training job over
    ``nodes`` > 1 is predicted by the multi-node planner (``plan_clusters``: the layout it
    states, collectives over ``node_network_bytes_per_s`` between nodes, the achieved rate of
    each node's network), not as one instance with every GPU on one NVLink domain."""

    workload: Workload
    accelerator: str  # canonical id
    gpus: int
    throughput: float  # measured, samples/s for the whole job
    group: str | None = None  # observations of one run (model, task, batch) on other GPUs
    nodes: int = 1
    node_network_bytes_per_s: float = 0.0

    @property
    def multinode_training(self) -> bool:
        return self.nodes > 1 and self.workload.training_job


@dataclass(frozen=True)
class _Param:
    name: str
    get: Callable[[Calibration], float]
    set: Callable[[Calibration, float], Calibration]
    sigma: float  # prior width in natural-log units
    upper: float = math.inf  # the largest physical value (an efficiency's is 1)


def _dict_param(field: str, key: str, sigma: float, upper: float = math.inf) -> _Param:
    def get(c: Calibration) -> float:
        return float(getattr(c, field)[key])

    def set_(c: Calibration, v: float) -> Calibration:
        return c.with_values(**{field: {**getattr(c, field), key: v}})

    return _Param(f"{field}[{key}]", get, set_, sigma, upper)


def _scalar_param(field: str, sigma: float, upper: float = math.inf) -> _Param:
    def set_(c: Calibration, v: float) -> Calibration:
        return c.with_values(**{field: v})

    return _Param(field, lambda c: float(getattr(c, field)), set_, sigma, upper)


# Prior widths (natural-log units): how far the data may move each constant.
EFFICIENCY_SIGMA = 0.4
DEMAND_SIGMA = 0.7
OVERHEAD_SIGMA = 1.0
# Largest device time per kernel beyond its roofline a fit may set: the gap between back-to-
# back stream launches is a few microseconds (~2 us inside a CUDA graph: kernel_costs.py's
# CUDA_GRAPH_KERNEL_S) and a small kernel's tail (its last, partly filled wave) at most about
# as long again, so 20 us per kernel is already generous. Unbounded, the fit drove it to
# ~70 us, standing in for what the engine does not model (an encoder-decoder's autoregressive
# loop, detection post-processing) and slowing every eager training step it predicts.
KERNEL_GPU_S_MAX = 20e-6
EFFICIENCY_MAX = 1.0
# Largest host time per sequence per decode iteration a fit may set: vLLM's Python loops
# before multi-step scheduling, 20 ms between steps at a batch of 200 (vllm-project/vllm#6801),
# the slowest figure for a serving engine found (serving_step._sequence_host_s).
SERVING_SEQUENCE_S_MAX = 100e-6
# Prior width of a runtime's decode limit (``issue_rate``; priors.json sources the prior).
RUNTIME_LIMIT_SIGMA = 1.0
# Least-squares iterations per fit (each also costs one prediction of every observation per
# constant for its finite-difference Jacobian).
MAX_EVALUATIONS = 6


def _parameters(
    obs: Sequence[Observation], catalog: Catalog, base: Calibration
) -> tuple[list[_Param], Calibration]:
    """The constants a fit may move: the shares of the *measured* matmul rate and memory
    bandwidth a model reaches (shared by every accelerator with published measurements), one
    achievable efficiency per architecture and precision class for the others, and the shared
    demand and overhead constants.

    Efficiencies are per architecture, not per chip and form factor: one share of the
    datasheet for every Ada part, say, with what differs between parts of one architecture
    carried by measurable quantities (the datasheet peaks, a power-capped board's sustained
    clock: ``hardware.sustained_clock_share``). Per chip-form, a factor was free for each
    GPU a source happened to measure and absorbed that source's quirks: leave-one-source-out
    with a baseline 22.0 -> 20.9 % overall and inference 26.4 -> 24.1 % when it went (with
    the hand-set ``AD104:tensor`` prior, the only chip-level one), MLPerf Inference held out
    21.4 -> 19.8 %. One per die (any form factor) scored 21.0 %, and pooling the two (a
    per-chip factor under a 0.2 log-sigma prior around its architecture's) 21.4 %: neither
    is better than one per architecture, which has the fewest free factors.

    A serving engine's host time per decode iteration (``serving_step_s``) is not fitted: it
    stays at the value ``priors.json`` sources. Left free it absorbed what other serving rows
    got wrong (the compiled step drifted from 1 ms to 4-6 ms between folds), and with it
    gpt-fast's held-out batch-1 decode error went from 5 % to 21 %. Its part that grows with
    the batch, host time per sequence (``serving_sequence_s``), is fitted: batch-1 rows do not
    move it, and MLPerf's large batches do (leave-one-source-out with a baseline 16.3 ->
    15.4 %, without 29.6 -> 28.5 %, when it was added)."""
    params: list[_Param] = []
    cal = base
    seen: set[str] = set()
    for o in obs:
        acc = catalog.accelerator(o.accelerator)
        key = f"{acc.architecture}:{precision_class(o.workload.precision)}"
        if key not in seen:
            seen.add(key)
            # Start from the value the chain gives today, so the prior is the current belief.
            value = cal.compute.get(key, cal.compute_efficiency(acc, o.workload.precision))
            cal = replace(cal, compute={**cal.compute, key: value})
            params.append(_dict_param("compute", key, EFFICIENCY_SIGMA, EFFICIENCY_MAX))
    params += [
        _dict_param("compute", MEASURED_KEY, EFFICIENCY_SIGMA, EFFICIENCY_MAX),
        _dict_param("memory", MEASURED_MEMORY_KEY, EFFICIENCY_SIGMA, EFFICIENCY_MAX),
        _dict_param("transformer_passes", "eager", DEMAND_SIGMA),
        _dict_param("transformer_passes", "compiled", DEMAND_SIGMA),
        _dict_param("attention_passes", "eager", DEMAND_SIGMA),
        _dict_param("cnn_passes", "eager", DEMAND_SIGMA),
        _dict_param("cnn_passes", "compiled", DEMAND_SIGMA),
        _scalar_param("kernel_gpu_s", OVERHEAD_SIGMA, KERNEL_GPU_S_MAX),
        _scalar_param("serving_sequence_s", OVERHEAD_SIGMA, SERVING_SEQUENCE_S_MAX),
        _dict_param("kernel_cpu_s", "eager", OVERHEAD_SIGMA),
        _scalar_param("attention_gemm_efficiency", DEMAND_SIGMA, EFFICIENCY_MAX),
        _scalar_param("comm_overlap", DEMAND_SIGMA, EFFICIENCY_MAX),
        _scalar_param("interconnect_efficiency", EFFICIENCY_SIGMA, EFFICIENCY_MAX),
    ]
    runtimes = {kernels_of(o.workload.inference.runtime) for o in obs if o.workload.inference}
    for runtime in sorted(r for r in runtimes if r in cal.decode_bytes_per_sm_cycle):
        params.append(_dict_param("decode_bytes_per_sm_cycle", runtime, RUNTIME_LIMIT_SIGMA))
    return params, cal


@dataclass
class _Prepared:
    """What does not depend on the calibration, kept across the fit's evaluations."""

    shape: Shape
    state: StateBytes
    members: list[int]
    rows: Rows


# The last observation set prepared, with the objects themselves (kept alive by the entry,
# so their ids cannot be reused while it is cached).
_PREPARED: dict[tuple[int, int], tuple[object, object, list[_Prepared]]] = {}


def _prepare(obs: Sequence[Observation], catalog: Catalog) -> list[_Prepared]:
    key = (id(obs), id(catalog))
    hit = _PREPARED.get(key)
    if hit is not None and hit[0] is obs and hit[1] is catalog:
        return hit[2]
    index = {a.id: i for i, a in enumerate(catalog.accelerators)}
    by_workload: dict[int, list[int]] = {}
    for i, o in enumerate(obs):
        by_workload.setdefault(id(o.workload), []).append(i)
    out = []
    for members in by_workload.values():
        w = obs[members[0]].workload
        n = len(members)
        rows = Rows(
            acc=np.array([index[obs[i].accelerator] for i in members], dtype=np.int32),
            gpus=np.array([float(obs[i].gpus) for i in members]),
            vcpus=np.full(n, np.inf),
            local_disk_gb=np.full(n, 1e6),
        )
        shape = shape_of(w)
        out.append(_Prepared(shape, state_bytes(w, shape), members, rows))
    _PREPARED.clear()  # one observation set at a time
    _PREPARED[key] = (obs, catalog, out)
    return out


def modelled_throughput(
    obs: Sequence[Observation], catalog: Catalog, cal: Calibration
) -> FloatArray:
    """Device-bound modelled throughput of each observation under ``cal`` (the per-workload
    shapes are kept between calls with the same observations; capabilities are computed
    once per precision)."""
    out = np.empty(len(obs))
    accs = list(catalog.accelerators)
    caps: dict[tuple[str, str], Capabilities] = {}
    for prep in _prepare(obs, catalog):
        w = obs[prep.members[0]].workload
        key = (w.precision, w.model.resolved_family)
        if key not in caps:
            caps[key] = capabilities(accs, w.precision, cal, key[1])
        p = predict_rows(w, prep.shape, prep.state, caps[key], accs, prep.rows, cal)
        out[prep.members] = p.device_throughput
        for i, acc in zip(prep.members, prep.rows.acc, strict=True):
            if obs[i].multinode_training:
                out[i] = _on_nodes(obs[i], int(acc), prep, caps[key], cal)
    return out


def _on_nodes(
    o: Observation, acc: int, prep: _Prepared, caps: Capabilities, cal: Calibration
) -> float:
    """Samples/s of a multi-node training observation (on catalog accelerator ``acc``) under
    the multi-node planner."""
    hw = ClusterHardware(
        acc=np.array([acc], dtype=np.int32),
        gpus=np.array([o.gpus / o.nodes]),
        network_bytes_per_s=np.array([o.node_network_bytes_per_s]),
    )
    el = activation_element_bytes(o.workload.precision, o.workload.model.execution)
    nodes = np.array([float(o.nodes)])
    plans = plan_clusters(o.workload, prep.shape, prep.state, caps, hw, nodes, cal, el)
    return float(plans.samples_per_s[0, 0]) if plans.fits[0, 0] else 0.0


def _group_index(obs: Sequence[Observation]) -> tuple[npt.NDArray[np.int64], int]:
    """Index of each observation's group (-1: none) and the number of groups."""
    names = sorted({o.group for o in obs if o.group is not None})
    return np.array([names.index(o.group) if o.group is not None else -1 for o in obs]), len(names)


# Datasheet memory bandwidth is never reached in full: STREAM-like triads reach ~90 % of it
# on HBM parts (H100 2.97 of 3.35 TB/s, A100 1.70 of 2.04 TB/s: achievable.yaml sources).
MAX_DATASHEET_MEMORY_EFFICIENCY = 0.92


def common_level(obs: Sequence[Observation], catalog: Catalog, cal: Calibration) -> Calibration:
    """Scale every achievable FLOP/s and bandwidth (a runtime's decode limit among them) by
    one factor so that the median observation is modelled exactly (efficiencies stay at or
    below 1, and datasheet memory efficiencies at or below what triads reach)."""
    measured = np.array([o.throughput for o in obs])
    k = float(np.median(measured / modelled_throughput(obs, catalog, cal)))

    def memory_cap(key: str) -> float:
        return 1.0 if key == MEASURED_MEMORY_KEY else MAX_DATASHEET_MEMORY_EFFICIENCY

    limits = cal.decode_bytes_per_sm_cycle
    return cal.with_values(
        compute={key: min(1.0, v * k) for key, v in cal.compute.items()},
        memory={key: min(memory_cap(key), v * k) for key, v in cal.memory.items()},
        decode_bytes_per_sm_cycle={key: v * k for key, v in limits.items()},
    )


def _group_offsets(residual: FloatArray, group: npt.NDArray[np.int64], n: int) -> FloatArray:
    """Per group, the common log-factor that best explains its residuals (their mean)."""
    if n == 0:
        return np.zeros(0)
    grouped = group >= 0
    sums = np.bincount(group[grouped], weights=residual[grouped], minlength=n)
    counts = np.bincount(group[grouped], minlength=n)
    return np.asarray(sums / np.maximum(counts, 1))


def fit(
    obs: Sequence[Observation], catalog: Catalog, base: Calibration, prior_weight: float = 0.05
) -> Calibration:
    """The calibration that best explains ``obs`` (log-error least squares with priors).

    Observations that share a ``group`` (one workload measured on several GPUs or GPU counts)
    get a free common factor each, solved in closed form for every trial of the constants
    (variable projection), so the constants are fitted to how the hardware compares within
    a run, not to how well the workload was described. :func:`common_level` then sets the
    absolute level from the median observation. Efficiencies stay at or below 1.
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
    grouped = group >= 0

    def apply(theta: FloatArray) -> Calibration:
        cal = start
        for p, v in zip(params, theta, strict=True):
            cal = p.set(cal, float(math.exp(v)))
        return cal

    def residuals(theta: FloatArray) -> FloatArray:
        modelled = modelled_throughput(obs, catalog, apply(theta))
        model = np.log(np.maximum(modelled, 1e-30))
        raw = model - measured
        if n_groups:
            offsets = _group_offsets(raw, group, n_groups)
            raw = raw - np.where(grouped, offsets[np.maximum(group, 0)], 0.0)
        prior = math.sqrt(prior_weight) * (theta - theta0) / sigma
        return np.concatenate([raw, prior])

    upper = np.log([p.upper for p in params])
    result = least_squares(
        residuals,
        theta0,
        bounds=(np.full(len(theta0), -np.inf), upper),
        x_scale=1.0,
        diff_step=1e-3,
        max_nfev=MAX_EVALUATIONS,
    )
    return common_level(obs, catalog, apply(result.x))
