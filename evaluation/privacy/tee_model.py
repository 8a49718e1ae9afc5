"""The confidential-aggregation (TEE) trust model, ``tee`` — docs/math.md §9.13.

:class:`ConfidentialAggregation` is the family's member whose devices upload in the clear to an attested
enclave that bounds each person's contribution, adds noise and releases only the keys past a DP
partition-selection threshold (:class:`~ldpsim.mechanisms.aggregation.tee.TeeDesign`). One release a night;
a device's reports of one day are its L0 = ``reports_per_day`` keys (L∞ = 1: the count level holds one
report per key and device). Its guarantee is person-level (ε, δ) over the run; if attestation fails or the
enclave is breached, nothing is left (:data:`~ldpsim.mechanisms.aggregation.tee.IF_BREACHED`).

>>> m = ConfidentialAggregation.starting().calibrate(1.0, 10_000, 30, 1e-9)
>>> [(g.scope, round(g.epsilon, 3)) for g in m.guarantees(10_000, 30, 1e-9)][2]
('run', 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from ldpsim.evaluation.privacy.trust_accounting import POWER, TrustModel, bins_moved
from ldpsim.evaluation.privacy.trust_exact import ITEM_ID_BYTES
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.mechanisms.aggregation.tee import IF_BREACHED, TeeDesign, calibrate_tee
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.errors import InputError

#: the starting design before calibration: Gaussian noise (the smaller threshold at equal ε over 30 nights)
DEFAULT = TeeDesign("gaussian", 1.0, 1.0)


@dataclass(frozen=True)
class ConfidentialAggregation(TrustModel):
    """``tee``: clear uploads to an attested enclave that bounds, adds noise and releases by DP partition
    selection (docs/math.md §9.13).

    Parameters
    ----------
    tee : TeeDesign
        The enclave's noise, threshold and contribution bounds (calibration sets the scale and threshold;
        the scenario key ``tee_noise`` its noise family).
    """

    tee: TeeDesign | None = None

    kind = "tee"
    validates = True          # the enclave's bounding keeps at most L0 keys, L∞ each, of a crafted report
    biased = True
    discovery = "tee_histogram"

    def __post_init__(self):
        if not isinstance(self.tee, TeeDesign):
            raise InputError(f"The trust model 'tee' needs a 'tee' (a TeeDesign). Got {self.tee!r} instead.")

    @classmethod
    def settings(cls) -> tuple:
        return ("tee_noise",)

    @classmethod
    def starting(cls) -> ConfidentialAggregation:
        return cls(tee=DEFAULT)

    def configured(self, **settings) -> ConfidentialAggregation:
        """``tee_noise`` sets the design's noise family."""
        return replace(self, tee=replace(self.tee, noise=settings["tee_noise"])) if "tee_noise" in settings else self

    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        """The design's ε over ``reports`` unit key contributions (L0 keys a night over the nights: ε
        depends on their number only), one person replaced when ``bins`` = 2."""
        return self.tee.epsilon(reports, delta, keys=1, replace=bins == 2)

    def contribution_bound(self, reports_per_day: int) -> ContributionBound:
        """The enclave's bound: L0 = ``reports_per_day`` distinct keys a night, L∞ = the design's per key."""
        return ContributionBound(l0=reports_per_day, linf=self.tee.max_per_key, sampler="uniform")

    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        return IF_BREACHED

    @property
    def trusted(self) -> str:
        return "the attested enclave (the audited code, unbroken hardware)"

    def calibrate(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                  reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> ConfidentialAggregation:
        """The design's noise family at ``target_epsilon`` per person over ``days`` nightly releases of
        L0 = ``reports_per_day`` keys (:func:`~ldpsim.mechanisms.aggregation.tee.calibrate_tee`, to 0.1 %)."""
        return replace(self, tee=calibrate_tee(self.tee.noise, target_epsilon, delta, days, reports_per_day,
                                               self.tee.max_per_key, replace=bins_moved(neighbour) == 2))

    def protocol(self, d: int):
        return self.tee.release_counts

    def upload_bytes(self, d: int) -> int:
        return ITEM_ID_BYTES

    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        return self.tee.release_counts(counts, rng), counts

    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        return self.tee.moments(counts)[1], math.sqrt(self.tee.noise_variance())

    def night_theory(self, counted: np.ndarray, variance) -> tuple[np.ndarray, np.ndarray]:
        bias, mse = self.tee.moments(counted)
        return mse - bias ** 2, bias

    def detection_floor(self, sd0: float, d: int, n: int) -> float:
        """T + z_POWER·sd (the threshold is the false-alarm control: a key one person holds passes it with
        probability p₁ ≤ δ)."""
        return self.tee.threshold + stats.norm.isf(1 - POWER) * sd0

    def design(self) -> str:
        return f"{self.tee.noise} threshold"

    def parameter(self):
        return f"scale={self.tee.scale:.4g}, T={self.tee.threshold:.4g}"
