"""Trust models whose devices send exact one-hot reports to a trusted party that releases noisy or sampled
counts — docs/math.md §9.2–§9.5.

* :class:`SecAgg` (``secagg``) — distributed integer noise under secure aggregation (:class:`SecureSum`):
  every published cohort sum carries at least the target noise; privacy from that law's exact pmf.
* :class:`TwoServers` (``two_server``) — Prio3/DAP: exact reports in shares, noise added by the leader or
  both aggregators; privacy from one aggregator's noise (the guarantee holds if that aggregator is
  honest), or with the clients' symmetric RAPPOR the better of the two bounds.
* :class:`HardwareThreshold` (``threshold``) — trusted hardware holds exact counts, adds central integer
  noise and releases items above a threshold (post-processing of the noisy counts).
* :class:`HardwareSampleThreshold` (``sample_threshold``) — trusted hardware, no noise: sampling rate p and
  threshold τ (:class:`~ldpsim.mechanisms.aggregation.threshold.SampleThreshold`, exact δ(ε) per item).

If the trusted party misbehaves the exact reports are seen: ε is unbounded (or, with the clients'
randomization, their local guarantee is left).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from ldpsim.evaluation.privacy.composition import compose
from ldpsim.evaluation.privacy.trust_accounting import (FALSE_ALARM, POWER, TrustModel, bins_moved, calibrate_threshold,
                                                        client_rappor_epsilon, noise_epsilon, run_epsilon)
from ldpsim.evaluation.privacy.trust_local import SecAggLocal
from ldpsim.mechanisms import make
from ldpsim.mechanisms.aggregation.field_shares import prio3_histogram_bytes
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secagg_cost import secagg_bytes
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum
from ldpsim.mechanisms.aggregation.threshold import SampleThreshold, noisy_threshold_moments
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.errors import InputError

#: bytes a device uploads to trusted hardware per report (one item id)
ITEM_ID_BYTES = 4


@dataclass(frozen=True)
class CentralNoise(TrustModel):
    """A trust model whose trusted party adds integer noise to the exact counts (the noise models).

    Parameters
    ----------
    noise : IntegerNoise
        The target noise of one released count (calibration sets its scale).
    """

    noise: IntegerNoise | None = None

    def __post_init__(self):
        if not isinstance(self.noise, IntegerNoise):
            raise InputError(f"The trust model {self.kind!r} needs a 'noise' (an IntegerNoise). Got {self.noise!r} instead.")

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        return noise_epsilon(self.noise, delta, bins * reports)

    def calibrate(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                  reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> CentralNoise:
        """The noise scale by bracketing (ε falls as the scale grows), then bisection on log scale."""
        def build(x: float) -> CentralNoise:
            return replace(self, noise=IntegerNoise(self.noise.kind, x, self.noise.copies))

        def eps_of(x: float) -> float:
            return run_epsilon(build(x), n, days, delta, reports_per_day, neighbour)

        low, high = self.noise.scale, self.noise.scale                        # bracket: ε(high) ≤ target < ε(low)
        while eps_of(high) > target_epsilon:
            high *= 4
            if high > 1e12:
                raise InputError(f"calibrate: no noise scale of {self.noise.kind} reaches ε = {target_epsilon:g} "
                                 f"over the run; raise 'target_epsilon'.")
        while eps_of(low) <= target_epsilon and low > 1e-3:
            low /= 4
        while high / low > 1 + rel_tol / 4:
            mid = math.sqrt(low * high)
            low, high = (low, mid) if eps_of(mid) <= target_epsilon else (mid, high)
        return build(high)

    def central_noise(self) -> IntegerNoise:
        return self.noise

    def design(self) -> str:
        return self.noise.kind.replace("_", " ")

    def parameter(self):
        return self.noise.scale


@dataclass(frozen=True)
class SecAgg(CentralNoise):
    """``secagg``: exact reports in cohorts of at least ``min_cohort``, published when ``min_arrival`` of
    them arrive, each published sum carrying at least ``noise`` (docs/math.md §9.2)."""

    min_cohort: int = 1000
    min_arrival: float = 0.8

    kind = "secagg"
    sums_unchecked = True
    discovery = "ldp_trie"

    @classmethod
    def starting(cls) -> SecAgg:
        return cls(noise=IntegerNoise("skellam", 1000.0), min_cohort=10_000, min_arrival=0.8)

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        return math.inf, 0.0, "server and devices collude or SecAgg is broken: a report is seen with only its own noise share"

    @property
    def trusted(self) -> str:
        return "the secure-aggregation protocol (no server–device collusion)"

    def secure_sum(self) -> SecureSum:
        """The cohort protocol with its target noise."""
        return SecureSum(self.noise, self.min_cohort, self.min_arrival)

    def protocol(self, d: int):
        return self.secure_sum()

    def upload_bytes(self, d: int) -> int:
        """SecAgg+ messages; each bin's sum: s one-hots plus the noise within ±10 sd."""
        s = self.min_cohort
        return secagg_bytes(d, s, s + 1 + 20 * self.noise.sd())

    def for_fleet(self, devices: int) -> SecAgg:
        return replace(self, min_cohort=min(self.min_cohort, devices))

    def discovery_local(self, online: int) -> TrustModel:
        return SecAggLocal(min_cohort=min(10_000, online))

    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        return self.secure_sum().release(counts, rng, arrival_rate=arrival)

    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        v = self.secure_sum().noise_variance(int(counts.sum()), arrival)
        return np.full(counts.size, v), math.sqrt(v)

    def counted_reports(self, total: int, arrival: float) -> float:
        """Only the reports that arrive before the round closes."""
        return arrival * total


@dataclass(frozen=True)
class TwoServers(CentralNoise):
    """``two_server``: exact reports secret-shared between two aggregators that add ``noise``
    (``noise_by``: the leader or both); with ``client_epsilon`` the clients first randomize their one-hot
    vector with symmetric RAPPOR (SUE at that ε, each bit at ε/2) and the aggregators check "at most m
    ones" (the DP-for-DAP draft's client randomization): the guarantee is then the better of the
    aggregators' noise and the clients' amplified randomization, and a local one remains if both
    aggregators collude (docs/math.md §9.3, §9.7)."""

    noise_by: str = "both"
    client_epsilon: float | None = None

    kind = "two_server"
    validates = True

    @classmethod
    def starting(cls) -> TwoServers:
        return cls(noise=IntegerNoise("discrete_gaussian", 30.0), noise_by="both")

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        eps = super().epsilon(n, reports, delta, bins)
        if self.client_epsilon is None:
            return eps
        return min(eps, client_rappor_epsilon(self.client_epsilon, n, delta, bins * reports))  # two valid bounds

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        if self.client_epsilon is None:
            return math.inf, 0.0, "both aggregators collude: the reports are reconstructed"
        return reports * self.client_epsilon, 0.0, "both aggregators collude: the clients' local randomization"

    @property
    def trusted(self) -> str:
        return ("either aggregator" if self.noise_by == "both" else "the leader") + " (and the two not colluding)"

    def local_oracle(self, d: int):
        """Symmetric RAPPOR (SUE) at ``client_epsilon``, or None without client randomization."""
        return None if self.client_epsilon is None else make("sue", epsilon=self.client_epsilon, domain_size=d)

    def protocol(self, d: int) -> TwoServer:
        return TwoServer(self.noise, self.noise_by, client=self.local_oracle(d))

    def upload_bytes(self, d: int) -> int:
        return prio3_histogram_bytes(d)["upload"]

    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        return self.protocol(counts.size).release(counts, rng), counts

    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        var = self.protocol(counts.size).variance(counts)
        return var, math.sqrt(float(var[np.argmin(counts)]))


@dataclass(frozen=True)
class HardwareThreshold(CentralNoise):
    """``threshold``: trusted hardware adds ``noise`` to the exact counts and releases those at or above
    ``threshold`` (docs/math.md §9.4)."""

    threshold: int = 0

    kind = "threshold"
    validates = True
    biased = True

    @classmethod
    def starting(cls) -> HardwareThreshold:
        return cls(noise=IntegerNoise("discrete_gaussian", 30.0))

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        return math.inf, 0.0, "the hardware is breached: exact reports"

    @property
    def trusted(self) -> str:
        return "the trusted hardware"

    def release_threshold(self, d: int) -> HardwareThreshold:
        """τ at the noise's family-wise false-alarm level over d items, τ = ⌈z_{1−FALSE_ALARM/d}·sd⌉."""
        return replace(self, threshold=int(math.ceil(stats.norm.isf(FALSE_ALARM / d) * self.noise.sd())))

    def _release(self, counts: np.ndarray, rng) -> np.ndarray:
        z = self.noise.sample(counts.size, rng)
        return np.where(counts + z >= self.threshold, counts + z, 0).astype(float)

    def protocol(self, d: int):
        return self._release

    def upload_bytes(self, d: int) -> int:
        return ITEM_ID_BYTES

    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        return self._release(counts, rng), counts

    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        return noisy_threshold_moments(self.noise, counts, self.threshold)[1], self.noise.sd()

    def night_theory(self, counted: np.ndarray, variance) -> tuple[np.ndarray, np.ndarray]:
        bias, mse = noisy_threshold_moments(self.noise, counted, self.threshold)
        return mse - bias ** 2, bias

    def detection_floor(self, sd0: float, d: int, n: int) -> float:
        """The release threshold plus z_POWER noise sd."""
        return self.threshold + stats.norm.isf(1 - POWER) * sd0


@dataclass(frozen=True)
class HardwareSampleThreshold(TrustModel):
    """``sample_threshold``: trusted hardware, no noise — each report kept with probability ``rate`` and
    the items whose sampled count reaches ``threshold`` released, scaled by 1/p (docs/math.md §9.4, §9.6).
    Its ε follows from p and τ: ``threshold`` may be given instead of an ε to calibrate to."""

    rate: float = 1.0
    threshold: int = 0

    kind = "sample_threshold"
    validates = True
    biased = True
    discovery = "triehh"
    given_instead = "threshold"

    @classmethod
    def starting(cls) -> HardwareSampleThreshold:
        return cls(rate=0.1, threshold=20)

    def sampler(self) -> SampleThreshold:
        """The sample-and-threshold release."""
        return SampleThreshold(self.rate, max(1, self.threshold))

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        """Each report (b·ε(δ_r/b), δ_r) with δ_r = δ/(2R), composed at δ."""
        delta_r = delta / (2 * reports)
        eps = bins * self.sampler().epsilon(delta_r / bins)
        if reports == 1 or not math.isfinite(eps):     # no finite ε up to EPS_CAP meets this δ
            return eps
        return compose([(eps, delta_r)] * reports, delta).epsilon

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        return math.inf, 0.0, "the hardware is breached: exact reports"

    @property
    def trusted(self) -> str:
        return "the trusted hardware"

    def calibrate(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                  reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01):
        """Unchanged: the guarantee follows from p and τ (:meth:`tune_threshold` sets τ)."""
        return self

    def tune_threshold(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                       reports_per_day: int = 1, neighbour: str = "replace") -> HardwareSampleThreshold | None:
        """The model at its rate p with the smallest threshold τ whose ε per device over the run is at most
        ``target_epsilon`` at ``delta``; None if no τ reaches it at this p (docs/math.md §9.6).

        The R = days·reports_per_day reports are each (ε_r, δ/(2R)) and compose at δ (as :meth:`epsilon`):
        ε_r is the largest per-report ε whose composition meets the target (bisection), and τ the smallest
        threshold with the per-item δ(ε_r/b) ≤ δ/(2R·b) (b bins change per report; δ falls as τ grows:
        exponential search, then bisection). Needs ε_r/b above p's floor ln(1/(1 − p)).
        """
        bins, steps = bins_moved(neighbour), reports_per_day * days
        delta_r = delta / (2 * steps)
        if steps == 1:
            eps_r = target_epsilon
        else:
            low, high = 0.0, target_epsilon
            while high - low > 1e-4 * target_epsilon:
                mid = (low + high) / 2
                low, high = (mid, high) if compose([(mid, delta_r)] * steps, delta).epsilon <= target_epsilon \
                    else (low, mid)
            eps_r = low
        need = eps_r / bins - 2e-4                   # below SampleThreshold.epsilon's rounding up (tol 1e-4)
        if need <= self.sampler().epsilon_floor():
            return None

        def private(tau: int) -> bool:
            return SampleThreshold(self.rate, tau).delta(need) <= delta_r / bins

        high = 1
        while not private(high):
            high *= 2
            if high > 10 * n:
                return None
        low = high // 2
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if private(mid) else (mid, high)
        return replace(self, threshold=high)

    def for_target(self, target_epsilon: float, n: int, days: int, delta: float, d: int,
                   reports_per_day: int = 1) -> HardwareSampleThreshold | None:
        return calibrate_threshold(self, target_epsilon, n, days, delta, reports_per_day)

    def unreachable(self) -> str:
        return f"with rate = {self.rate:g} (sampling alone spends more): lower the rate"

    def protocol(self, d: int):
        return lambda counts, rng: self.sampler().release(counts, rng)

    def upload_bytes(self, d: int) -> int:
        return ITEM_ID_BYTES

    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        return self.sampler().release(counts, rng), counts

    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        return self.sampler().moments(counts)[1], math.nan

    def night_theory(self, counted: np.ndarray, variance) -> tuple[np.ndarray, np.ndarray]:
        bias, mse = self.sampler().moments(counted)
        return mse - bias ** 2, bias

    def detection_floor(self, sd0: float, d: int, n: int) -> float:
        """The smallest count whose sampled count reaches τ with probability POWER."""
        c = np.arange(1, n + 1)
        ok = stats.binom.sf(self.threshold - 1, c, self.rate) >= POWER
        return float(c[np.argmax(ok)]) if ok.any() else math.inf

    def design(self) -> str:
        return "no noise"

    def parameter(self):
        return f"p={self.rate:.3g}, τ={self.threshold}"
