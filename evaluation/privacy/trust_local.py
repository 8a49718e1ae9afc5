"""Trust models whose devices randomize every report (ε₀-LDP with GRR or OLH) — docs/math.md §9.5.

* :class:`LocalDP` (``ldp``) — the server sees every report; pure ε composes by addition; nobody is
  trusted.
* :class:`Shuffled` (``shuffle``) — the same reports through a shuffler; central ε per report from the
  FMT21 numerical bound over the day's n reports (:mod:`~ldpsim.evaluation.privacy.amplification`).
* :class:`SecAggLocal` (``secagg_local``) — the same local reports summed by secure aggregation within
  cohorts: the server sees cohort sums, a post-processing of the shuffled cohort, so the shuffle bound
  applies with the cohort's guaranteed arrivals t in place of n.

If the shuffler or the aggregation is bypassed, the local guarantee (ε₀ per report, added up) is left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ldpsim.evaluation.privacy.composition import compose
from ldpsim.evaluation.privacy.trust_accounting import TrustModel, run_epsilon, shuffled_epsilon
from ldpsim.mechanisms import make
from ldpsim.mechanisms.aggregation.secagg_cost import secagg_bytes
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum, cohort_sizes, quorum
from ldpsim.mechanisms.deltas import DELTA_RELEASE

#: ε₀ the local oracles are built at, at most (their tables overflow above)
ORACLE_EPSILON_MAX = 50.0


@dataclass(frozen=True)
class LocalReports(TrustModel):
    """A trust model of ε₀-LDP reports (the family's local half).

    Parameters
    ----------
    epsilon_report : float
        ε₀ of each report (set by calibration, not a scenario key).
    """

    epsilon_report: float = field(default=1.0, metadata={"key": False})

    randomizes = True
    discovery = "ldp_trie"

    def local_oracle(self, d: int):
        """GRR at ε₀ over d items (the amplified models' randomizer)."""
        return make("grr", epsilon=min(self.epsilon_report, ORACLE_EPSILON_MAX), domain_size=d)

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        return reports * self.epsilon_report, 0.0, "the shuffler / aggregation is bypassed: the local guarantee"

    def calibrate(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                  reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> LocalReports:
        """ε₀ by bisection on log scale in [target/R, 20] (R reports over the run; ε grows with ε₀)."""
        def eps_of(x: float) -> float:
            return run_epsilon(replace(self, epsilon_report=x), n, days, delta, reports_per_day, neighbour)

        low, high = target_epsilon / (reports_per_day * days), 20.0          # ε(low) ≤ target
        if eps_of(high) <= target_epsilon:
            return replace(self, epsilon_report=high)
        while high / low > 1 + rel_tol / 4:
            mid = math.sqrt(low * high)
            low, high = (mid, high) if eps_of(mid) <= target_epsilon else (low, mid)
        return replace(self, epsilon_report=low)

    def protocol(self, d: int):
        oracle = self.local_oracle(d)
        return lambda counts, rng: oracle.estimate(oracle.sample_aggregate(counts, rng=rng))

    def upload_bytes(self, d: int) -> int:
        return self.local_oracle(d).report_bytes

    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        oracle = self.local_oracle(counts.size)
        return oracle.estimate(oracle.sample_aggregate(counts, rng=rng)), counts

    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        var = self.local_oracle(counts.size).variance(counts)
        return var, math.sqrt(float(var[np.argmin(counts)]))

    def design(self) -> str:
        return type(self.local_oracle(2)).__name__

    def parameter(self):
        return self.epsilon_report


@dataclass(frozen=True)
class LocalDP(LocalReports):
    """``ldp``: each report is ε₀-LDP and the server sees it; OLH (small ε₀, large D)."""

    kind = "ldp"
    collected = False
    discovery = "pem"

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        return reports * self.epsilon_report

    def central_delta(self, delta: float) -> float:
        return 0.0

    def meanings(self, days: int) -> dict:
        return {"report": "one report (local)", "day": "one device over one day (local)",
                "run": f"one device over the run ({days} days, local)"}

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        return reports * self.epsilon_report, 0.0, "nothing to misbehave: the server sees the local reports"

    @property
    def trusted(self) -> str:
        return "nobody"

    def calibrate(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                  reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> LocalDP:
        """ε₀ = target / R exactly (pure ε adds up over the R reports of the run)."""
        return replace(self, epsilon_report=target_epsilon / (reports_per_day * days))

    def local_oracle(self, d: int):
        """OLH at ε₀ over d items."""
        return make("olh", epsilon=min(self.epsilon_report, ORACLE_EPSILON_MAX), domain_size=d)


@dataclass(frozen=True)
class Shuffled(LocalReports):
    """``shuffle``: the reports through a shuffler among the day's n (docs/math.md §8.4)."""

    kind = "shuffle"
    collected = False

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        return shuffled_epsilon(self.epsilon_report, n, reports, delta)

    @property
    def trusted(self) -> str:
        return "the shuffler"

    def discovery_local(self, online: int) -> TrustModel:
        return Shuffled()


@dataclass(frozen=True)
class SecAggLocal(LocalReports):
    """``secagg_local``: the local reports summed by secure aggregation within cohorts of at least
    ``min_cohort`` devices, published when ``min_arrival`` of them arrive (docs/math.md §9.2)."""

    min_cohort: int = 1000
    min_arrival: float = 0.8

    kind = "secagg_local"
    sums_unchecked = True

    @classmethod
    def starting(cls) -> SecAggLocal:
        return cls(min_cohort=10_000)

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        sizes = cohort_sizes(n, self.min_cohort)
        if sizes.size == 0:                      # no cohort forms: the local reports' pure ε, composed
            e0 = self.epsilon_report
            return e0 if reports == 1 else compose([(e0, 0.0)] * reports, delta).epsilon
        return shuffled_epsilon(self.epsilon_report, quorum(int(sizes.min()), self.min_arrival), reports, delta)

    @property
    def trusted(self) -> str:
        return "the secure-aggregation protocol"

    def secure_sum(self, client) -> SecureSum:
        """The cohort protocol summing ``client``'s local reports."""
        return SecureSum(None, self.min_cohort, self.min_arrival, client=client)

    def protocol(self, d: int):
        return self.secure_sum(self.local_oracle(d))

    def upload_bytes(self, d: int) -> int:
        """SecAgg+ messages; each bin's sum: s one-hots (:func:`~ldpsim.mechanisms.aggregation.secagg_cost.secagg_bytes`)."""
        return secagg_bytes(d, self.min_cohort, float(self.min_cohort + 1))

    def for_fleet(self, devices: int) -> SecAggLocal:
        return replace(self, min_cohort=min(self.min_cohort, devices))

    def discovery_local(self, online: int) -> TrustModel:
        return SecAggLocal(min_cohort=min(10_000, online))
