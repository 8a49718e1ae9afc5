"""The trust models' accounting — docs/math.md §9.5.

What a device's reports guarantee when the server side is a
shuffler, secure aggregation, two servers or trusted hardware (:class:`TrustModel`, :func:`guarantees`,
:func:`calibrate`); the shuffle step is the device accountant's
(:func:`~ldpsim.evaluation.privacy.accountant.shuffle_step`, :func:`shuffled_epsilon`).
Models (:data:`MODELS`):

* ``ldp`` — each report is ε₀-LDP (GRR); the server sees every report. Pure ε composes by addition.
* ``shuffle`` — the same reports through a shuffler; central ε per report from the FMT21 numerical
  bound over the day's n reports (:mod:`~ldpsim.evaluation.privacy.amplification`).
* ``secagg_local`` — the same local reports summed by secure aggregation within cohorts: the server
  sees cohort sums, a post-processing of the shuffled cohort, so the shuffle bound applies with the
  cohort's guaranteed arrivals t in place of n.
* ``secagg`` — exact one-hot reports, distributed integer noise (:class:`SecureSum`): every published
  cohort sum carries at least the target noise; privacy from that law's exact pmf.
* ``two_server`` — Prio3/DAP: exact reports in shares, noise added by the leader or both aggregators;
  privacy from one aggregator's noise (the guarantee holds if that aggregator is honest).
* ``threshold`` — trusted hardware holds exact counts, adds central integer noise and releases items
  above a threshold (post-processing of the noisy counts).
* ``sample_threshold`` — trusted hardware, no noise: sampling rate p and threshold τ
  (:class:`SampleThreshold`, exact δ(ε) per item).
* ``tee`` — confidential aggregation: clear uploads to an attested enclave that bounds each person's
  contribution, adds noise and releases only keys past a DP partition-selection threshold; person-level
  (ε, δ) over the run (:mod:`~ldpsim.evaluation.privacy.tee_model`, docs/math.md §9.11).

Neighbouring relation: one device's report *replaced* (as in FMT21), so two histogram bins move by one
(``neighbour="replace"``: the per-bin privacy-loss distribution composed twice); ``"add-remove"`` moves
one bin. Composition over reports and days uses ``dp-accounting`` privacy-loss distributions (exact
pmfs for the noise models; :func:`~ldpsim.evaluation.privacy.composition.compose` for (ε, δ) pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ldpsim.evaluation.privacy.accountant import shuffle_step
from ldpsim.evaluation.privacy import tee_model
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum, cohort_sizes, quorum
from ldpsim.mechanisms.aggregation.tee import TeeDesign
from ldpsim.mechanisms.aggregation.threshold import SampleThreshold
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.errors import InputError

MODELS = ("ldp", "shuffle", "secagg_local", "secagg", "two_server", "threshold", "sample_threshold", "tee")


NOISE_MODELS = ("secagg", "two_server", "threshold")


#: ε reported as unbounded above this (the accountants' range ends at 50)
EPS_CAP = 50.0


@dataclass(frozen=True)
class TrustModel:
    """One trust model with its parameters (only those its ``kind`` uses are read).

    Parameters
    ----------
    kind : one of :data:`MODELS`
    local_epsilon : float
        ε₀ of each GRR report (ldp, shuffle, secagg_local).
    noise : IntegerNoise
        Target noise (secagg: per published cohort; two_server: per noisy aggregator; threshold: central).
    min_cohort, min_arrival : int, float
        Secure-aggregation cohorts (secagg, secagg_local).
    noise_by : {"leader", "both"}
        two_server: which aggregators add ``noise``.
    client_epsilon : float, optional
        two_server: the clients first randomize their one-hot vector with symmetric RAPPOR (SUE at this
        ε, each bit at ε/2) and the aggregators check "at most m ones" (the DP-for-DAP draft's client
        randomization); the guarantee is then the better of the aggregators' noise and the clients'
        amplified randomization, and a local one remains if both aggregators collude.
    threshold : int
        threshold / sample_threshold: the release threshold τ (0: no suppression).
    rate : float
        sample_threshold: sampling probability p.
    tee : TeeDesign
        tee: the enclave's noise, threshold and contribution bounds.
    """

    kind: str
    local_epsilon: float = 1.0
    noise: IntegerNoise | None = None
    min_cohort: int = 1000
    min_arrival: float = 0.8
    noise_by: str = "both"
    threshold: int = 0
    rate: float = 1.0
    client_epsilon: float | None = None
    tee: TeeDesign | None = None

    def __post_init__(self):
        if self.kind not in MODELS:
            raise InputError(f"The 'aggregation' setting must be one of {', '.join(MODELS)}. Got {self.kind!r} instead.")
        if self.client_epsilon is not None and self.kind != "two_server":
            raise InputError(f"The 'client_epsilon' setting is for aggregation = 'two_server'. Got it for {self.kind!r}.")
        if self.kind in NOISE_MODELS and not isinstance(self.noise, IntegerNoise):
            raise InputError(f"The trust model {self.kind!r} needs a 'noise' (an IntegerNoise). Got {self.noise!r} instead.")
        if self.kind == "tee" and not isinstance(self.tee, TeeDesign):
            raise InputError(f"The trust model 'tee' needs a 'tee' (a TeeDesign). Got {self.tee!r} instead.")

    def secure_sum(self, client=None) -> SecureSum:
        """The cohort protocol of ``secagg`` (its noise) or ``secagg_local`` (``client``: the local oracle)."""
        return SecureSum(None if client is not None else self.noise, self.min_cohort, self.min_arrival, client=client)

    def sampler(self) -> SampleThreshold:
        """The sample-and-threshold release of ``sample_threshold``."""
        return SampleThreshold(self.rate, max(1, self.threshold))

    @property
    def trusted(self) -> str:
        """Who must behave for the central guarantee (the local one, if any, needs nobody)."""
        return {"ldp": "nobody", "shuffle": "the shuffler", "secagg_local": "the secure-aggregation protocol",
                "secagg": "the secure-aggregation protocol (no server–device collusion)",
                "two_server": ("either aggregator" if self.noise_by == "both" else "the leader")
                              + " (and the two not colluding)",
                "threshold": "the trusted hardware", "sample_threshold": "the trusted hardware",
                "tee": tee_model.TRUSTED}[self.kind]


@dataclass(frozen=True)
class Guarantee:
    """(ε, δ) for one scope, with what it means."""

    scope: str
    epsilon: float
    delta: float
    meaning: str


def _bins(neighbour: str) -> int:
    if neighbour not in ("replace", "add-remove"):
        raise InputError(f"The 'neighbour' parameter must be 'replace' or 'add-remove'. Got {neighbour!r} instead.")
    return 2 if neighbour == "replace" else 1


def noise_pld(noise: IntegerNoise, discretization: float = 1e-3):
    """dp-accounting privacy-loss distribution of x ↦ x + Z against x + 1 ↦ x + 1 + Z, Z ~ ``noise``
    (exact pmf on its truncated support; the left-out mass is returned separately for δ).

    Returns
    -------
    (PrivacyLossDistribution, float)
    """
    k, p, left = noise.pmf_table()
    keep = p > 1e-300
    return _pld_of_pair(k[keep], p[keep], k[keep] + 1, p[keep], discretization), left


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


def _composed_pairs(model: TrustModel, n: int, steps: int, delta: float, bins: int) -> float:
    """ε at ``delta`` over ``steps`` reports for the pair-composed models (shuffle, secagg_local,
    sample_threshold): each report at δ/(2·steps), composed at ``delta``."""
    if model.kind == "secagg_local":
        sizes = cohort_sizes(n, model.min_cohort)
        if sizes.size == 0:                      # no cohort forms: the local reports' pure ε, composed
            e0 = model.local_epsilon
            return e0 if steps == 1 else compose([(e0, 0.0)] * steps, delta).epsilon
        n = quorum(int(sizes.min()), model.min_arrival)
    if model.kind in ("shuffle", "secagg_local"):
        return shuffled_epsilon(model.local_epsilon, n, steps, delta)
    delta_r = delta / (2 * steps)
    eps = bins * model.sampler().epsilon(delta_r / bins)
    if steps == 1 or not math.isfinite(eps):     # no finite ε up to EPS_CAP meets this δ
        return eps
    return compose([(eps, delta_r)] * steps, delta).epsilon


def guarantees(model: TrustModel, n: int, days: int, delta: float = DELTA_RELEASE, reports_per_day: int = 1,
               neighbour: str = "replace") -> list[Guarantee]:
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
    list of Guarantee
        Scopes "report", "day", "run", "misbehaving server" (docs/math.md §9.5).
    """
    bins = _bins(neighbour)
    r_day, r_run = reports_per_day, reports_per_day * days
    k = model.kind
    if k == "ldp":
        e0 = model.local_epsilon
        rows = [("report", e0, 0.0), ("day", r_day * e0, 0.0), ("run", r_run * e0, 0.0)]
        bad = (r_run * e0, 0.0, "nothing to misbehave: the server sees the local reports")
    elif k == "tee":
        rows, bad = tee_model.tee_guarantee(replace(model.tee, max_keys=r_day), days, delta, bins == 2)
    elif k in NOISE_MODELS:
        one = [noise_epsilon(model.noise, delta, bins * r) for r in (1, r_day, r_run)]
        if model.client_epsilon is not None:   # two valid bounds: keep the better one at each scope
            one = [min(e, client_rappor_epsilon(model.client_epsilon, n, delta, bins * r))
                   for e, r in zip(one, (1, r_day, r_run))]
        rows = [("report", one[0], delta), ("day", one[1], delta), ("run", one[2], delta)]
        bad = {"secagg": (math.inf, 0.0, "server and devices collude or SecAgg is broken: a report is seen "
                          "with only its own noise share"),
               "two_server": (math.inf, 0.0, "both aggregators collude: the reports are reconstructed")
               if model.client_epsilon is None else
               (r_run * model.client_epsilon, 0.0, "both aggregators collude: the clients' local randomization"),
               "threshold": (math.inf, 0.0, "the hardware is breached: exact reports")}[k]
    else:
        rows = [(label, _composed_pairs(model, n, r, delta, bins), delta)
                for label, r in (("report", 1), ("day", r_day), ("run", r_run))]
        if k == "sample_threshold":
            bad = (math.inf, 0.0, "the hardware is breached: exact reports")
        else:
            bad = (r_run * model.local_epsilon, 0.0, "the shuffler / aggregation is bypassed: the local guarantee")
    meaning = {"report": "one report, central view", "day": "one device over one day",
               "run": f"one device over the run ({days} days)"}
    if k == "ldp":
        meaning = {"report": "one report (local)", "day": "one device over one day (local)",
                   "run": f"one device over the run ({days} days, local)"}
    out = [Guarantee(s, e, d, meaning[s]) for s, e, d in rows]
    out.append(Guarantee("misbehaving server", bad[0], bad[1], bad[2]))
    return out


def run_epsilon(model: TrustModel, n: int, days: int, delta: float, reports_per_day: int = 1,
                neighbour: str = "replace") -> float:
    """ε per device over the run (the "run" row of :func:`guarantees`)."""
    return next(g.epsilon for g in guarantees(model, n, days, delta, reports_per_day, neighbour) if g.scope == "run")


def calibrate(model: TrustModel, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
              reports_per_day: int = 1, neighbour: str = "replace", rel_tol: float = 0.01) -> TrustModel:
    """The model with its privacy parameter set so that ε per device over the run ≈ ``target_epsilon``.

    Solves for ε₀ (ldp exactly; shuffle, secagg_local by bisection) or the noise scale (secagg,
    two_server, threshold; bisection on log scale) — never below the target: the returned model's
    run ε is within ``rel_tol`` *under* ``target_epsilon``. sample_threshold is returned unchanged
    (its ε follows from p and τ).
    """
    target_epsilon = check_real("calibrate", "target_epsilon", target_epsilon, 0.0, EPS_CAP)
    k = model.kind
    if k == "ldp":
        return replace(model, local_epsilon=target_epsilon / (reports_per_day * days))
    if k == "sample_threshold":
        return model
    if k == "tee":
        return replace(model, tee=tee_model.calibrate_design(model.tee, target_epsilon, days, reports_per_day, delta,
                                                             _bins(neighbour) == 2))

    def eps_of(x: float) -> float:
        return run_epsilon(build(x), n, days, delta, reports_per_day, neighbour)

    if k in ("shuffle", "secagg_local"):
        def build(x):
            return replace(model, local_epsilon=x)
        low, high = target_epsilon / (reports_per_day * days), 20.0          # ε(low) ≤ target; ε grows with ε₀
        if eps_of(high) <= target_epsilon:
            return build(high)
        while high / low > 1 + rel_tol / 4:
            mid = math.sqrt(low * high)
            low, high = (mid, high) if eps_of(mid) <= target_epsilon else (low, mid)
        return build(low)

    def build(x):
        return replace(model, noise=IntegerNoise(model.noise.kind, x, model.noise.copies))
    low, high = model.noise.scale, model.noise.scale                           # bracket: ε(high) ≤ target < ε(low)
    while eps_of(high) > target_epsilon:
        high *= 4
        if high > 1e12:
            raise InputError(f"calibrate: no noise scale of {model.noise.kind} reaches ε = {target_epsilon:g} over "
                             f"the run; raise 'target_epsilon'.")
    while eps_of(low) <= target_epsilon and low > 1e-3:
        low /= 4
    while high / low > 1 + rel_tol / 4:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if eps_of(mid) <= target_epsilon else (mid, high)
    return build(high)


def calibrate_threshold(model: TrustModel, target_epsilon: float, n: int, days: int, delta: float = DELTA_RELEASE,
                        reports_per_day: int = 1, neighbour: str = "replace") -> TrustModel | None:
    """A ``sample_threshold`` model at its rate p with the smallest threshold τ whose ε per device over the
    run is at most ``target_epsilon`` at ``delta`` (docs/math.md §9.6); None if no τ reaches it at this p.

    The R = days·reports_per_day reports are each (ε_r, δ/(2R)) and compose at δ (as :func:`guarantees`):
    ε_r is the largest per-report ε whose composition meets the target (bisection), and τ the smallest
    threshold with the per-item δ(ε_r/b) ≤ δ/(2R·b) (b bins change per report; δ falls as τ grows:
    exponential search, then bisection). Needs ε_r/b above p's floor ln(1/(1 − p)).
    """
    target_epsilon = check_real("calibrate_threshold", "target_epsilon", target_epsilon, 0.0, EPS_CAP)
    if model.kind != "sample_threshold":
        raise InputError(f"calibrate_threshold tunes aggregation = 'sample_threshold'. Got {model.kind!r}.")
    bins, steps = _bins(neighbour), reports_per_day * days
    delta_r = delta / (2 * steps)
    if steps == 1:
        eps_r = target_epsilon
    else:
        low, high = 0.0, target_epsilon
        while high - low > 1e-4 * target_epsilon:
            mid = (low + high) / 2
            low, high = (mid, high) if compose([(mid, delta_r)] * steps, delta).epsilon <= target_epsilon else (low, mid)
        eps_r = low
    need = eps_r / bins - 2e-4                   # below SampleThreshold.epsilon's rounding up (tol 1e-4)
    probe = model.sampler()
    if need <= probe.epsilon_floor():
        return None

    def private(tau: int) -> bool:
        return SampleThreshold(model.rate, tau).delta(need) <= delta_r / bins

    high = 1
    while not private(high):
        high *= 2
        if high > 10 * n:
            return None
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if private(mid) else (mid, high)
    return replace(model, threshold=high)


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

