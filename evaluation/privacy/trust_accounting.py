"""The trust models' accounting — docs/math.md §9.5.

:class:`TrustModel` is the family every trust model belongs to: what a device's reports guarantee when the
server side is a shuffler, secure aggregation, two servers or trusted hardware (:func:`guarantees`,
:func:`calibrate`), who must be trusted and what is left if they misbehave, the devices' randomizer and the
collectors' protocol. The members are :mod:`.trust_local` (the devices randomize: ``ldp``, ``shuffle``,
``secagg_local``) and :mod:`.trust_exact` (exact reports, a trusted party releases: ``secagg``,
``two_server``, ``threshold``, ``sample_threshold``) and :mod:`.tee_model` (an attested enclave releases:
``tee``), registered by name in
:data:`~ldpsim.evaluation.privacy.trust_models.TRUST_MODELS`. The shuffle step is the device accountant's
(:func:`~ldpsim.evaluation.privacy.accountant.shuffle_step`, :func:`shuffled_epsilon`); the exact noise
laws' ε is :func:`noise_epsilon`, the clients' symmetric RAPPOR :func:`client_rappor_epsilon`.

Neighbouring relation: one device's report *replaced* (as in FMT21), so two histogram bins move by one
(``neighbour="replace"``: the per-bin privacy-loss distribution composed twice); ``"add-remove"`` moves
one bin. Composition over reports and days uses ``dp-accounting`` privacy-loss distributions (exact
pmfs for the noise models; :func:`~ldpsim.evaluation.privacy.composition.compose` for (ε, δ) pairs).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields, replace
from typing import ClassVar

import numpy as np
from scipy import stats

from ldpsim.evaluation.privacy.accountant import shuffle_step
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.errors import InputError

#: ε reported as unbounded above this (the accountants' range ends at 50)
EPS_CAP = 50.0
#: family-wise false-alarm rate and power of the detection floor (:meth:`TrustModel.detection_floor`)
FALSE_ALARM, POWER = 0.05, 0.95


@dataclass(frozen=True)
class ScopedGuarantee:
    """(ε, δ) for one scope, with what it means."""

    scope: str
    epsilon: float
    delta: float
    meaning: str


@dataclass(frozen=True)
class TrustModel(ABC):
    """One trust model: who sees the reports, what a device's guarantee is, and what is left if the trusted
    party misbehaves (docs/math.md §9). The family's members (:mod:`.trust_local`, :mod:`.trust_exact`) are
    frozen dataclasses whose fields are the parameters they read; :data:`~.trust_models.TRUST_MODELS` is
    their one registry (name → class), and :func:`~.trust_models.trust_model` builds one by name.
    """

    #: the registered name (``aggregation`` in scenario files)
    kind: ClassVar[str]
    #: whether a deployment's collectors take the reports out of the server's LDP path (simulator)
    collected: ClassVar[bool] = True
    #: whether the devices randomize each report at ``epsilon_report``, the parameter calibration sets
    randomizes: ClassVar[bool] = False
    #: whether the server side can check each report's validity (two aggregators' proof, trusted hardware,
    #: an enclave's contribution bounding)
    validates: ClassVar[bool] = False
    #: whether secure aggregation sums whatever vector a device masks (no input-validity proof)
    sums_unchecked: ClassVar[bool] = False
    #: whether the released counts are biased (thresholded): no normal interval of the measured error
    biased: ClassVar[bool] = False
    #: the new-word discovery design the server side allows (a :mod:`ldpsim.mechanisms` name)
    discovery: ClassVar[str] = "triehh_pp"
    #: a scenario key that may be given instead of ``epsilon_device`` (the guarantee then follows from it)
    given_instead: ClassVar[str | None] = None

    @classmethod
    def settings(cls) -> tuple:
        """The scenario-file keys this model reads: its parameters but the one calibration sets."""
        return tuple(f.name for f in fields(cls) if f.metadata.get("key", True))

    @classmethod
    def starting(cls) -> TrustModel:
        """The model's parameters before calibration (the noise families production uses)."""
        return cls()

    def configured(self, **settings) -> TrustModel:
        """The model with scenario-file ``settings`` (keys of :meth:`settings`, as parsed values) applied."""
        return replace(self, **settings)

    # ---- the guarantee (docs/math.md §9.5) ----

    @abstractmethod
    def epsilon(self, n: int, reports: int, delta: float, bins: int) -> float:
        """ε at ``delta`` of ``reports`` reports of one device among n devices a day, ``bins`` histogram
        bins moved by each report."""

    def central_delta(self, delta: float) -> float:
        """δ of the guarantee stated at ``delta`` (0 for a pure local one)."""
        return delta

    def meanings(self, days: int) -> dict:
        """What each scope's (ε, δ) protects."""
        return {"report": "one report, central view", "day": "one device over one day",
                "run": f"one device over the run ({days} days)"}

    def contribution_bound(self, reports_per_day: int) -> ContributionBound:
        """What one device contributes a day: ``reports_per_day`` typed events (an item may fill every
        report; docs/math.md §8.7), the reports the scopes per item and per person count."""
        return ContributionBound(l0=reports_per_day, sampler="events")

    @abstractmethod
    def misbehaving(self, reports: int) -> tuple[float, float, str]:
        """(ε, δ, meaning) over ``reports`` reports of one device when the trusted party misbehaves."""

    @property
    @abstractmethod
    def trusted(self) -> str:
        """Who must behave for the central guarantee (the local one, if any, needs nobody)."""

    def guarantees(self, n: int, days: int, delta: float = DELTA_RELEASE, reports_per_day: int = 1,
                   neighbour: str = "replace") -> list[ScopedGuarantee]:
        """See :func:`guarantees`."""
        bins = bins_moved(neighbour)
        r_day, r_run = reports_per_day, reports_per_day * days
        meaning = self.meanings(days)
        out = [ScopedGuarantee(scope, self.epsilon(n, r, delta, bins), self.central_delta(delta), meaning[scope])
               for scope, r in (("report", 1), ("day", r_day), ("run", r_run))]
        out.append(ScopedGuarantee("misbehaving server", *self.misbehaving(r_run)))
        return out

    # ---- calibration ----

    @abstractmethod
    def calibrate(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                  reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> TrustModel:
        """See :func:`calibrate` (``target_epsilon`` already checked)."""

    def tune_threshold(self, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                       reports_per_day: int = 1, neighbour: str = "replace") -> TrustModel | None:
        """See :func:`calibrate_threshold`: only a model whose threshold sets its guarantee has one to tune."""
        raise InputError(f"calibrate_threshold tunes a model whose threshold sets its guarantee "
                         f"(given_instead = 'threshold'). Got {self.kind!r}.")

    def release_threshold(self, d: int) -> TrustModel:
        """The model as it releases over d items (a noisy threshold: at its family-wise false-alarm level)."""
        return self

    def for_target(self, target_epsilon: float, n: int, days: int, delta: float, d: int,
                   reports_per_day: int = 1) -> TrustModel | None:
        """The model a run at ``target_epsilon`` per device over ``days`` days of n devices a day uses over
        d items: calibrated, then at its release threshold (None: no parameter reaches the target)."""
        return calibrate(self, target_epsilon, n, days, delta, reports_per_day).release_threshold(d)

    def unreachable(self) -> str:
        """Why :meth:`for_target` found no parameter, and what to change."""
        return "no parameter reaches it"

    def for_fleet(self, devices: int) -> TrustModel:
        """The starting model for ``devices`` devices a day (cohorts no larger than the fleet)."""
        return self

    # ---- the design: randomizer, protocol, cost ----

    def local_oracle(self, d: int):
        """The devices' local randomizer over d items, or None (exact reports)."""
        return None

    def central_noise(self):
        """The integer noise the trusted party adds to each released count, or None."""
        return None

    @abstractmethod
    def protocol(self, d: int):
        """The collectors' protocol over d items (:func:`ldpsim.simulator.collectors.collect`): a
        SecureSum, a TwoServer, or a release function ``(counts, rng) -> estimate``."""

    @abstractmethod
    def upload_bytes(self, d: int) -> int:
        """Bytes per device per report (docs/math.md §9.3 for the costs' sources)."""

    def discovery_local(self, online: int) -> TrustModel | None:
        """The model whose local ε₀ the :attr:`discovery` design runs at (its local reports amplified as
        that model's, ``online`` devices a round), or None: the design has its own accounting."""
        return None

    # ---- one day at the count level (docs/math.md §9.6) ----

    @abstractmethod
    def release(self, counts: np.ndarray, rng, arrival: float) -> tuple[np.ndarray, np.ndarray]:
        """One day's estimate and the counts it estimates (``arrival``: share of uploads that arrive
        before a secure-aggregation round closes)."""

    @abstractmethod
    def theory(self, counts: np.ndarray, arrival: float) -> tuple[np.ndarray, float]:
        """Exact per-item MSE of the day's estimate, and the estimate's sd at a zero count."""

    def night_theory(self, counted: np.ndarray, variance) -> tuple[np.ndarray, np.ndarray]:
        """(variance, bias) of one night's released counts, given the variance of the collectors' noise."""
        return np.asarray(variance, float), np.zeros(counted.size)

    def counted_reports(self, total: int, arrival: float) -> float:
        """The expected number of reports a day's estimate covers (the denominator of its frequencies)."""
        return float(total)

    def detection_floor(self, sd0: float, d: int, n: int) -> float:
        """Smallest count detected with probability POWER at a family-wise false-alarm rate FALSE_ALARM
        over the d items (normal approximation, ``sd0`` the estimate's sd at a zero count)."""
        return (stats.norm.isf(FALSE_ALARM / d) + stats.norm.isf(1 - POWER)) * sd0

    @abstractmethod
    def design(self) -> str:
        """The estimator of the model's line: its local oracle, or the noise / sampling it releases with."""

    @abstractmethod
    def parameter(self):
        """The privacy parameter calibration sets (ε₀, the noise scale, or the rate and threshold)."""

    def describe(self) -> str:
        """The model's parameters as ``name = value`` pairs."""
        return ", ".join(f"{f.name} = {getattr(self, f.name)!r}" for f in fields(self))


def bins_moved(neighbour: str) -> int:
    """Histogram bins one device's report moves: 2 when it is replaced, 1 when added or removed."""
    if neighbour not in ("replace", "add-remove"):
        raise InputError(f"The 'neighbour' parameter must be 'replace' or 'add-remove'. Got {neighbour!r} instead.")
    return 2 if neighbour == "replace" else 1


def noise_pld(noise: IntegerNoise, discretization: float = 1e-3, shift: int = 1):
    """dp-accounting privacy-loss distribution of x ↦ x + Z against x + ``shift`` ↦ x + ``shift`` + Z,
    Z ~ ``noise`` (exact pmf on its truncated support; the left-out mass is returned separately for δ).

    Returns
    -------
    (PrivacyLossDistribution, float)
    """
    k, p, left = noise.pmf_table()
    keep = p > 1e-300
    return _pld_of_pair(k[keep], p[keep], k[keep] + shift, p[keep], discretization), left


def _pld_of_pair(outcomes_lower, pmf_lower, outcomes_upper, pmf_upper, discretization: float):
    """dp-accounting's PLD of two pmfs given on (possibly different) integer outcomes (positive masses)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    lower = dict(zip(np.asarray(outcomes_lower).tolist(), np.log(pmf_lower).tolist()))
    upper = dict(zip(np.asarray(outcomes_upper).tolist(), np.log(pmf_upper).tolist()))
    return pld_lib.from_two_probability_mass_functions(lower, upper, value_discretization_interval=discretization)


def noise_epsilon(noise: IntegerNoise, delta: float, compositions: int = 1) -> float:
    """ε at ``delta`` of ``compositions`` unit changes of a count protected by ``noise`` (dp-accounting)."""
    pld, left = noise_pld(noise)
    budget = delta - compositions * left
    if budget <= 0:
        raise InputError(f"noise_epsilon: 'delta' = {delta:g} is below the truncation mass of the noise table.")
    with np.errstate(over="ignore"):      # dp-accounting's tail bound overflows harmlessly for large losses
        eps = float(pld.self_compose(compositions).get_epsilon_for_delta(budget)) if compositions > 1 \
            else float(pld.get_epsilon_for_delta(budget))
    return math.inf if eps > EPS_CAP else eps


def client_rappor_epsilon(client_epsilon: float, n: int, delta: float, compositions: int = 2) -> float:
    """Central ε at δ of n summed symmetric-RAPPOR vectors (SUE at ``client_epsilon``: every bit flipped
    w.p. q = 1/(e^{ε/2} + 1)), for ``compositions`` changed coordinates (docs/math.md §9.7).

    A changed coordinate's count is Bern(1 − q) + Bin(n − 1, q) on the side where the device holds the
    item and Bern(q) + Bin(n − 1, q) on the other, the other devices holding 0 there. Replacing the
    device's item changes two coordinates in opposite directions (1 → 0 and 0 → 1): their exact PLDs,
    one of each direction, are composed with dp-accounting; an odd count takes the worse orientation.
    """
    from scipy import stats

    q = 1.0 / (math.exp(client_epsilon / 2) + 1.0)
    others = stats.binom(n - 1, q)
    k = np.arange(int(others.ppf(1e-18)), int(others.isf(1e-18)) + 3)
    y, y_prev = others.pmf(k), others.pmf(k - 1)
    with_one, with_zero = q * y + (1 - q) * y_prev, (1 - q) * y + q * y_prev
    keep = (with_one > 0) & (with_zero > 0)
    one_to_zero = _pld_of_pair(k[keep], with_one[keep], k[keep], with_zero[keep], 1e-4)
    zero_to_one = _pld_of_pair(k[keep], with_zero[keep], k[keep], with_one[keep], 1e-4)

    def paired(first, second) -> float:
        up, down = (compositions + 1) // 2, compositions // 2
        pld = first.self_compose(up) if up > 1 else first
        if down:
            pld = pld.compose(second.self_compose(down) if down > 1 else second)
        return float(pld.get_epsilon_for_delta(delta))

    with np.errstate(over="ignore"):      # dp-accounting's tail bound overflows harmlessly for large losses
        eps = paired(one_to_zero, zero_to_one)
        if compositions % 2:
            eps = max(eps, paired(zero_to_one, one_to_zero))
    return math.inf if eps > EPS_CAP else eps


def shuffled_epsilon(eps0: float, n: int, steps: int, delta: float) -> float:
    """Central ε at ``delta`` of ``steps`` ε₀-LDP steps, each shuffled among n at δ/(2·steps) and composed
    by their privacy-loss distributions (docs/math.md §8.4, §9.5)."""
    step = shuffle_step(eps0, n, delta / (2 * steps))
    return step if steps == 1 else compose([(step, delta / (2 * steps))] * steps, delta).epsilon


def guarantees(model: TrustModel, n: int, days: int, delta: float = DELTA_RELEASE, reports_per_day: int = 1,
               neighbour: str = "replace") -> list[ScopedGuarantee]:
    """The device's (ε, δ) per report, per day, over the run, and when the trusted party misbehaves.

    Parameters
    ----------
    model : TrustModel
    n : int
        Devices reporting per day (the shuffle's batch; the cohorts are cut from them).
    days : int
        Days in the run.
    delta : float
        δ of the over-the-run guarantee; per report and per day are stated at the same δ.
    reports_per_day : int
        Reports one device contributes per day (daily_limit).
    neighbour : {"replace", "add-remove"}

    Returns
    -------
    list of ScopedGuarantee
        Scopes "report", "day", "run", "misbehaving server" (docs/math.md §9.5).
    """
    return model.guarantees(n, days, delta, reports_per_day, neighbour)


def run_epsilon(model: TrustModel, n: int, days: int, delta: float, reports_per_day: int = 1,
                neighbour: str = "replace") -> float:
    """ε per device over the run (the "run" row of :func:`guarantees`)."""
    return model.epsilon(n, reports_per_day * days, delta, bins_moved(neighbour))


def calibrate(model: TrustModel, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
              reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> TrustModel:
    """The model with its privacy parameter set so that ε per device over the run ≈ ``target_epsilon``.

    Each model solves for its own parameter: ε₀ of the local reports (exactly under pure LDP, by bisection
    when amplified) or the noise scale (bisection on log scale) — never below the target: the returned
    model's run ε is within ``rel_tol`` *under* ``target_epsilon``. A model whose guarantee follows from
    a sampling rate and threshold is returned unchanged (:func:`calibrate_threshold` tunes its threshold).
    """
    target_epsilon = check_real("calibrate", "target_epsilon", target_epsilon, 0.0, EPS_CAP)
    return model.calibrate(target_epsilon, n, days, delta, reports_per_day, neighbour, rel_tol)


def calibrate_threshold(model: TrustModel, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                        reports_per_day: int = 1, neighbour: str = "replace") -> TrustModel | None:
    """A sample-and-threshold model at its rate p with the smallest threshold τ whose ε per device over the
    run is at most ``target_epsilon`` at ``delta`` (docs/math.md §9.6); None if no τ reaches it at this p
    (:meth:`~ldpsim.evaluation.privacy.trust_exact.HardwareSampleThreshold.tune_threshold`).

    Raises
    ------
    InputError
        The model has no threshold that sets its guarantee.
    """
    target_epsilon = check_real("calibrate_threshold", "target_epsilon", target_epsilon, 0.0, EPS_CAP)
    return model.tune_threshold(target_epsilon, n, days, delta, reports_per_day, neighbour)


def dropout_epsilon(target: IntegerNoise, provisioned_for: int, arrived: int, delta: float = DELTA_RELEASE,
                    changes: int = 2) -> float:
    """ε of one published cohort sum when each device's share was provisioned for ``provisioned_for``
    arrivals but only ``arrived`` shares made it (docs/math.md §9.2).

    The cohort's noise is then target.share(provisioned_for).times(arrived): Sk(μ·m/s) or Pólya with
    r = m/s, less than the target when m < s, so ε grows as devices drop out. With SecureSum's default
    provisioning (s = the quorum t) and publication only when m ≥ t, this never exceeds the target's ε.

    Parameters
    ----------
    target : IntegerNoise
    provisioned_for, arrived : int ≥ 1
    delta : float
    changes : int
        Unit changes of the counts (2 for a replaced report).

    Returns
    -------
    float
    """
    return noise_epsilon(target.share(provisioned_for).times(arrived), delta, changes)

