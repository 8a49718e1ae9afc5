"""Warner randomized response for a sensitive yes/no question — docs/math.md §1.1, seed 001."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import check_epsilon, check_real
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.frequency.grr import GRR


class ProportionEstimate(NamedTuple):
    """Estimated share of "yes" (value 1) answers, with a two-sided confidence interval."""

    estimate: float  #: unbiased π̂ (may fall outside [0, 1])
    mle: float  #: maximum-likelihood estimate: π̂ clipped to [0, 1]
    low: float  #: lower confidence bound, clipped to [0, 1]
    high: float  #: upper confidence bound, clipped to [0, 1]


@dataclass(frozen=True)
class RR(GRR):
    """Warner's randomized response on the values {0 ("no"), 1 ("yes")}.

    Math: docs/math.md §1.1 (Warner, JASA 1965; seed 001).

    Privacy: ε-LDP; P[y|x]/P[y|x'] ≤ p/(1−p) = e^ε, attained.

    Client: answer truthfully w.p. p = e^ε/(1+e^ε), else the other value. This is GRR with D = 2
    (p − q = 2p − 1, q = 1 − p), and every method is inherited from :class:`GRR`.
    Server: π̂ = (p − 1 + n₁/n)/(2p − 1) (seed 001's likelihood maximiser before clipping; unbiased).
    Count estimates n·π̂ (value 1) and n·(1 − π̂) (value 0). Var[π̂] = p(1−p)/(n(2p−1)²); for a fixed
    population it does not depend on π, so it is also the exact variance of the counts / n².

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).

    Attributes
    ----------
    domain_size : int
        Always 2.
    p : float
        Probability of the truthful answer, e^ε/(1+e^ε).
    q : float
        Probability of the other answer, 1 − p.

    Examples
    --------
    >>> m = RR(epsilon=math.log(3))
    >>> round(m.p, 6)
    0.75
    >>> round(m.proportion(Aggregate(100, np.array([40, 60]), m.kind)).estimate, 6)
    0.7
    """

    epsilon: float
    domain_size: int = field(default=2, init=False)

    def __post_init__(self):
        check_epsilon(self.name, self.epsilon)  # name RR, not GRR, in the error message
        super().__post_init__()

    def proportion(self, agg: Aggregate, confidence: float = 0.95) -> ProportionEstimate:
        """Share of "yes" answers: unbiased estimate, MLE and a normal-approximation confidence interval.

        The interval is π̂ ± z·sd with sd = sqrt(p(1−p)/(n(2p−1)²)) (docs/math.md §1.1) and z the
        two-sided normal quantile of ``confidence``; bounds are clipped to [0, 1]. The MLE under the
        constraint π ∈ [0, 1] is π̂ clipped to [0, 1] (seed 001's stationary point, clipped; the
        likelihood is concave).

        Parameters
        ----------
        agg : Aggregate
            Output counts of this RR (n ≥ 1).
        confidence : float, default 0.95
            Two-sided confidence level, in (0, 1).

        Returns
        -------
        ProportionEstimate
            ``(estimate, mle, low, high)``.
        """
        self._check_aggregate(agg)
        level = check_real(self.name, "confidence", confidence, 0.0, 1.0)
        if agg.n < 1:
            raise ValueError(f"{self.name}.proportion: the aggregate holds no reports (n = 0).")
        pi_hat = float(self.estimate(agg, [1])[0]) / agg.n  # docs/math.md §1.1
        sd = math.sqrt(self.p * (1 - self.p) / agg.n) / (2 * self.p - 1)  # docs/math.md §1.1
        z = NormalDist().inv_cdf(0.5 + level / 2)
        mle, low, high = np.clip([pi_hat, pi_hat - z * sd, pi_hat + z * sd], 0.0, 1.0).tolist()
        return ProportionEstimate(pi_hat, mle, low, high)
