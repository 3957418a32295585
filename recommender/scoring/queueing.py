"""Waiting for a serving slot when requests arrive at random.

A copy of a served model decodes ``c`` sequences at once (its continuous-batching slots). A
request that arrives while every slot is busy waits, and the wait counts in its time to the
first token. With Poisson arrivals and exponentially distributed slot times (an M/M/c queue),
the chance to wait is Erlang's C formula; for many servers the Halfin-Whitt approximation
gives it in closed form (Halfin & Whitt 1981, "Heavy-traffic limits for queues with many
exponential servers", Operations Research 29(3), 567-588):

    P(wait) ~= 1 / (1 + beta Phi(beta) / phi(beta)),   beta = (1 - rho) sqrt(c),

with rho the slots' occupancy, Phi and phi the standard normal CDF and density. Given a wait,
it is exponential with rate ``c (1 - rho) / S`` (``S``: how long a request holds its slot), so
the share of requests that wait longer than ``t`` is ``P(wait) exp(-c (1 - rho) t / S)``.

A latency limit held for a percentile of requests (MLPerf's Server scenario: the 99th, with
LoadGen's Poisson arrivals) therefore caps the occupancy, and with it the rate, below what the
same copy sustains when the queue never empties (Offline): the fewer the slots and the longer
a request holds one against the wait allowed, the lower the cap.

The same random arrivals spread the time per output token: a continuously batched request's
decode steps also carry the prefills of the requests admitted while it decodes, ``B`` of them
on average over its ``output_tokens`` steps with ``B`` slots, a count that varies from
request to request as a Poisson count does. A TPOT limit held for a percentile is a limit on
that count's percentile, ``mean + z sqrt(mean) + (z^2 - 1) / 6``: the Cornish-Fisher
expansion (Cornish & Fisher 1937) to its skewness term, for a Poisson count of standard
deviation ``sqrt(mean)`` and skewness ``1 / sqrt(mean)``; within one of the exact quantile
from a mean of 1 up (the tests sum the Poisson terms to check it).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import numpy.typing as npt

__all__ = ["poisson_quantile", "sustainable_occupancy", "wait_exceeds"]

FloatArray = npt.NDArray[np.float64]

# Abramowitz & Stegun 7.1.26: erf(x) = 1 - (a1 t + ... + a5 t^5) exp(-x^2), t = 1 / (1 + p x),
# x >= 0, |error| <= 1.5e-7 (Handbook of Mathematical Functions, 1964, p. 299).
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Bisection steps for the occupancy: 2^-20 (1e-6) of the unit interval, far finer than the
# rates it scales are known to. Each step evaluates the tail over the planner's whole grid
# (tensor-parallel degrees x concurrencies x configurations): at 40 steps the bisection was
# half of recommend()'s time for a serving workload with a percentile target.
OCCUPANCY_BISECTIONS = 20


def _normal_cdf(x: FloatArray) -> FloatArray:
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + _ERF_P * z)
    poly = t * (_ERF_A[0] + t * (_ERF_A[1] + t * (_ERF_A[2] + t * (_ERF_A[3] + t * _ERF_A[4]))))
    erf = 1.0 - poly * np.exp(-z * z)
    return np.asarray(0.5 * (1.0 + np.sign(x) * erf))


def _wait_probability(c: FloatArray, rho: FloatArray) -> FloatArray:
    """Halfin-Whitt's P(wait) for ``c`` slots at occupancy ``rho``."""
    beta = (1.0 - rho) * np.sqrt(c)
    density = np.exp(-0.5 * beta * beta) / np.sqrt(2.0 * np.pi)
    with np.errstate(divide="ignore", over="ignore"):  # a vanishing density: no wait at all
        return np.asarray(1.0 / (1.0 + beta * _normal_cdf(beta) / density))


def wait_exceeds(
    c: FloatArray, rho: FloatArray, wait_s: FloatArray, hold_s: FloatArray
) -> FloatArray:
    """Share of randomly arriving requests that wait longer than ``wait_s`` for one of ``c``
    slots at occupancy ``rho``, each request holding its slot ``hold_s`` on average."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        decay = np.exp(-c * (1.0 - rho) * np.maximum(wait_s, 0.0) / hold_s)
    return np.asarray(_wait_probability(c, rho) * decay)


def sustainable_occupancy(
    c: FloatArray, hold_s: FloatArray, wait_s: FloatArray, percentile: float
) -> FloatArray:
    """The highest slot occupancy (0 to 1) at which ``percentile`` % of randomly arriving
    requests wait at most ``wait_s`` for a slot (0 where no wait at all is allowed)."""
    tail = 1.0 - percentile / 100.0
    shape = np.broadcast(c, hold_s, wait_s).shape
    lo, hi = np.zeros(shape), np.ones(shape)
    for _ in range(OCCUPANCY_BISECTIONS):
        mid = 0.5 * (lo + hi)
        ok = wait_exceeds(c, mid, wait_s, hold_s) <= tail
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return np.asarray(np.where(wait_s > 0, lo, 0.0))


def poisson_quantile(mean: npt.ArrayLike, percentile: float) -> FloatArray:
    """The ``percentile`` % point of a Poisson count of ``mean`` (Cornish-Fisher, above; never
    below the mean, 0 for a mean of 0)."""
    z = NormalDist().inv_cdf(percentile / 100.0)
    m = np.maximum(np.asarray(mean, dtype=np.float64), 0.0)
    skew = (z * z - 1.0) / 6.0
    return np.asarray(np.where(m > 0, np.maximum(m + z * np.sqrt(m) + skew, m), 0.0))
