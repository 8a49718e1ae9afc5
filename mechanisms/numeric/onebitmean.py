"""1BitMean: the mean of counters in [0, m] from one bit per device (Microsoft telemetry) — docs/math.md §7.3.

Ding, Kulkarni, Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017, §2.1 (1BitMean),
§3.1 (α-point rounding) and §3 (memoization).

Client: b = 1 w.p. π(x) = 1/(e^ε+1) + (x/m)·(e^ε−1)/(e^ε+1). Server: mean estimate
(m/n)·Σ (b_i(e^ε+1) − 1)/(e^ε−1), unbiased, with variance (over the fixed population)
(m/n)²·((e^ε+1)/(e^ε−1))²·Σ π(x_i)(1 − π(x_i)).

Memoization with α-point rounding (:meth:`OneBitMean.perturb_memoized`): the range is cut into
``granularity`` (s) steps of width m/s; each device draws α uniform in [0, 1) once (from its key)
and reports the rounded level L = ⌊x·s/m + α⌋ (so P[L = ⌊xs/m⌋ + 1] = frac(xs/m) and E[L·m/s] = x),
then the memoized 1BitMean bit of that level, a deterministic function of (key, L). Since π is
affine, E[π(L·m/s)] = π(x): over devices the bit has exactly the law of the plain 1BitMean bit, so
the estimator and its theory are unchanged, while a device whose value stays at the same level
reports the same bit every day (one ε for its whole history).

Output perturbation (``gamma`` = γ ∈ [0, 0.5), default 0): the sent bit is the (memoized) bit flipped
w.p. γ, fresh each report, so it is 1 w.p. π_γ(x) = γ + (1 − 2γ)π(x); the estimator debiases with π_γ:
x̂ = m·((b − γ)(e^ε+1)/(1 − 2γ) − 1)/(e^ε − 1), Var = (m(e^ε+1)/((e^ε−1)(1−2γ)))²·π_γ(1 − π_γ) per
device (docs/math.md §7.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import (as_generator, check_epsilon, check_finite_in, check_int, check_item_ids,
                                          check_real)
from ldpsim.mechanisms.base import Aggregate, Mechanism
from ldpsim.mechanisms.memo import check_gamma, check_keys, flip_bits, flipped_probability, keyed_uniforms

_TAG_ALPHA, _TAG_BIT = 0x1B1, 0x1B2


@dataclass(frozen=True)
class OneBitMean(Mechanism):
    """1BitMean for counters x ∈ [0, m] (module docstring; docs/math.md §7.3); ``granularity`` s for
    α-point rounding.

    Privacy: ε-LDP with equality at γ = 0: π(m)/π(0) = (1 − π(0))/(1 − π(m)) = e^ε. With γ > 0 one
    report's exact loss is ln(π_γ(m)/π_γ(0)) < ε (:attr:`epsilon_report`); the ledger still charges ε
    once per memoized level (the flips are data-independent post-processing of the memoized bit).

    Not a :class:`~ldpsim.mechanisms.numeric.interface.NumericMechanism`: its inputs are counters in [0, m], not
    readings in [−1, 1], and its report is one bit (no piecewise density for EM); it has the same
    mean-mechanism interface (``perturb``, ``aggregate``, ``estimate_mean``, ``report_mean``,
    ``report_variance``, ``mean_variance``, wire form) plus ``sample_aggregate(values)``.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    m : float
        Upper end of the counters' range [0, m], > 0 (default 1).
    granularity : int
        Rounding steps s ≥ 1 of α-point rounding (default 32).
    gamma : float
        Output perturbation γ ∈ [0, 0.5): each sent bit is flipped w.p. γ (default 0: none).

    Examples
    --------
    >>> mech = OneBitMean(epsilon=1.0, m=100.0)
    >>> [round(float(v), 4) for v in mech.bit_probability([0.0, 50.0, 100.0])]
    [0.2689, 0.5, 0.7311]
    """

    epsilon: float
    has_permanent_response = True  # ``epsilon`` is ε_∞; one report costs ``epsilon_report``
    m: float = 1.0
    granularity: int = 32
    gamma: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon("OneBitMean", self.epsilon))
        object.__setattr__(self, "m", check_real("OneBitMean", "m", self.m, 0.0))
        object.__setattr__(self, "granularity", check_int("OneBitMean", "granularity", self.granularity,
                                                                 low=1, high=1 << 31))
        object.__setattr__(self, "gamma", check_gamma("OneBitMean", self.gamma))

    def _check_values(self, values) -> np.ndarray:
        return check_finite_in(self.name, values, 0.0, self.m)

    def bit_probability(self, x) -> np.ndarray:
        """π(x) = P[b = 1 | x] = 1/(e^ε+1) + (x/m)(e^ε−1)/(e^ε+1) (vectorized)."""
        e = math.exp(self.epsilon)
        return 1 / (e + 1) + np.asarray(x, dtype=float) / self.m * (e - 1) / (e + 1)

    def report_probability(self, x) -> np.ndarray:
        """π_γ(x) = P[sent bit = 1 | x] = γ + (1 − 2γ)·π(x) (= π(x) at γ = 0; vectorized)."""
        return flipped_probability(self.bit_probability(x), self.gamma)

    def transition_matrix(self, x) -> np.ndarray:
        """Rows [P(sent b=0 | x_i), P(sent b=1 | x_i)] for the inputs ``x``."""
        p1 = self.report_probability(np.atleast_1d(x))
        return np.stack([1 - p1, p1], axis=1)

    @property
    def epsilon_report(self) -> float:
        """Exact privacy loss of one sent bit: ln(π_γ(m)/π_γ(0)) (= ε at γ = 0)."""
        if self.gamma == 0:
            return self.epsilon
        p = self.report_probability(np.array([0.0, self.m]))
        return float(np.log(p[1] / p[0]))

    def _scale(self) -> float:
        """m(e^ε + 1)/((e^ε − 1)(1 − 2γ)): the per-device estimate is scale·(b − π_γ(0))."""
        e = math.exp(self.epsilon)
        return self.m * (e + 1) / ((e - 1) * (1 - 2 * self.gamma))

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> np.ndarray:
        """One uint8 bit per device.

        Parameters
        ----------
        values : array_like of float, shape (n,)
            One counter in [0, m] per device.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        reports
        """
        x = self._check_values(values)
        return (as_generator(rng).random(x.size) < self.report_probability(x)).astype(np.uint8)

    def rounded_levels(self, values, keys) -> np.ndarray:
        """α-point rounding: L = ⌊x·s/m + α⌋ ∈ [0, s] with α = the device's keyed uniform.

        The level is also the memo class: a privacy ledger charges ε once per distinct level a device
        reports from (equal level ⇒ identical memoized bit).

        Parameters
        ----------
        values : array_like of float, shape (n,)
            Counters in [0, m].
        keys : array_like of uint64, shape (n,)
            Device keys.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
        """
        x = self._check_values(values)
        alpha = keyed_uniforms(np.asarray(keys, dtype=np.uint64), _TAG_ALPHA)
        return np.minimum(np.floor(x * self.granularity / self.m + alpha), self.granularity).astype(np.int64)

    def perturb_memoized(self, values, keys, rng=None) -> np.ndarray:
        """The memoized bit of each device (1BitMean of its rounded value, keyed by (key, level)),
        flipped w.p. γ with fresh randomness from ``rng`` (deterministic, rng unused, when γ = 0).

        Parameters
        ----------
        values, keys : array_like, shape (n,)
            Counters in [0, m] and uint64 device keys, as in :meth:`rounded_levels`.
        rng : numpy.random.Generator, int or None
            Source of the daily flips (γ > 0 only).

        Returns
        -------
        numpy.ndarray of uint8, shape (n,)
        """
        keys = np.asarray(keys, dtype=np.uint64)
        level = self.rounded_levels(values, keys)
        keys = check_keys(f"{self.name}.perturb_memoized", keys, level.size)
        u = keyed_uniforms(keys, _TAG_BIT, level)
        bits = (u < self.bit_probability(level * self.m / self.granularity)).astype(np.uint8)
        return flip_bits(bits, self.gamma, as_generator(rng) if self.gamma else None)

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> np.ndarray:
        return check_item_ids(f"{self.name}.{what}", np.asarray(reports), 2, "reports").astype(np.uint8)

    def aggregate(self, reports) -> Aggregate:
        """``Aggregate(n, [number of ones])``: mergeable by addition.

        Parameters
        ----------
        reports
            As returned by :meth:`perturb` or :meth:`decode` (validated).

        Returns
        -------
        Aggregate
        """
        b = self._check_reports(reports, "aggregate")
        return Aggregate(b.size, np.array([int(b.sum())], dtype=np.int64), self.kind)

    def estimate_mean(self, agg: Aggregate) -> float:
        """(m/n)·Σ ((b_i − γ)(e^ε+1)/(1 − 2γ) − 1)/(e^ε−1) (nan for n = 0).

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.

        Returns
        -------
        float
        """
        self._check_aggregate(agg)
        if agg.n == 0:
            return float("nan")
        return float(self._scale() * (agg.data[0] / agg.n - self.report_probability(0.0)))

    # theory ------------------------------------------------------------------------------------
    def report_mean(self, x) -> np.ndarray:
        """E[scale·(b − π_γ(0)) | x] = x (the per-device estimate is unbiased)."""
        return np.asarray(x, dtype=float)

    def report_variance(self, x) -> np.ndarray:
        """Var of one device's term: (m(e^ε+1)/((e^ε−1)(1−2γ)))²·π_γ(1−π_γ)."""
        p = self.report_probability(x)
        return self._scale() ** 2 * p * (1 - p)

    def mean_variance(self, values) -> float:
        """Exact variance of :meth:`estimate_mean` over the fixed population ``values``."""
        x = self._check_values(values)
        return float(self.report_variance(x).sum() / max(x.size, 1) ** 2)

    def sample_aggregate(self, values, rng=None) -> Aggregate:
        """Exact: the number of ones is Σ over distinct values v of Bin(count_v, π_γ(v)) (one binomial
        per distinct value: fast for counters with few distinct values, per-device otherwise).

        Parameters
        ----------
        values : array_like of float, shape (n,)
            One counter in [0, m] per device.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        Aggregate
        """
        x = self._check_values(values)
        uniq, count = np.unique(x, return_counts=True)
        ones = as_generator(rng).binomial(count, self.report_probability(uniq)).sum()
        return Aggregate(x.size, np.array([int(ones)], dtype=np.int64), self.kind)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """One byte (0 or 1) per report."""
        return 1

    def encode(self, reports) -> bytes:
        return self._check_reports(reports, "encode").tobytes()

    def decode(self, payload: bytes) -> np.ndarray:
        """Bits from their wire form.

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`, one byte (0 or 1) per report; ``ValueError`` otherwise.

        Returns
        -------
        numpy.ndarray of uint8
        """
        self._check_payload(payload)
        return self._check_reports(np.frombuffer(payload, dtype=np.uint8).copy(), "decode")
