"""The accountant: what one device spends over a run, per use case and in total, on one scale — docs/math.md §8.

Every report, plot and comparison asks this module for a composed ε; nothing else composes.

**Per use case** (one device, the worst case over devices: the guarantee every device has).
R = n_days × daily_limit reports at most. Fresh reports cost ε of one report each
(``guarantee.epsilon_report``). A memoized use case re-sends the report of a value it has already
reported: r reports of one memo class cost ``mechanism.memoized_loss(r)`` (ε of one report for
re-sent reports; RAPPOR's exact loss of r instantaneous responses to one permanent response, at
most ε_∞); a device with C memo classes (the items, dBitFlip's d + 1 responses, 1BitMean's s + 1
levels) spends at most the costliest spread of its R reports over C classes (docs/math.md §8.2).

**Several attributes.** Under ``spl`` the use cases compose; under ``smp`` and ``rsfd``
(``simulator/attributes.py``) a device-day is one report of the whole record at the policy's ε.

**Caps.** The ledger never lets a device spend more than ``budget_total``, nor more than
``budget_daily`` a day (basic composition), so the run's basic ε is at most
min(Σ, budget_total, n_days × budget_daily).

**Tighter at a δ.** The same losses composed by their privacy-loss distributions
(:func:`~ldpsim.evaluation.privacy.composition.compose`) give ε at δ, per device over the run; never
above the pure (δ = 0) basic ε. Only guarantees of one kind compose: the totals are per kind.

**Interactive rounds.** An interactive words protocol (docs/math.md §10.8) charges one day of rounds
per day a device answers (ε/D of its ε per device over the run); its PLD composes its R rounds'
(ε_r, δ_r), and its kind is the protocol's (pure ε-LDP, or central (ε, δ) after the threshold).

**Central.** With ``shuffled_among`` n, each day's report of a use case is shuffled with n − 1 others
(FMT21, :mod:`~ldpsim.evaluation.privacy.amplification`), at δ/(2·n_days) each, and the days compose
at δ.

**Trust models** (docs/math.md §9.5). What a device's reports guarantee when the server side is a
shuffler, secure aggregation, two servers or trusted hardware (:class:`TrustModel`, :func:`guarantees`,
:func:`calibrate`); the same shuffle step (:func:`shuffled_epsilon`) as the central ε above.
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

Neighbouring relation: one device's report *replaced* (as in FMT21), so two histogram bins move by one
(``neighbour="replace"``: the per-bin privacy-loss distribution composed twice); ``"add-remove"`` moves
one bin. Composition over reports and days uses ``dp-accounting`` privacy-loss distributions (exact
pmfs for the noise models; :func:`~ldpsim.evaluation.privacy.composition.compose` for (ε, δ) pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.evaluation.privacy.composition import basic_composition, compose
from ldpsim.evaluation.privacy.person_level import SAME_PATTERN, person_level
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secure_sum import SecureSum, cohort_sizes, quorum
from ldpsim.mechanisms.aggregation.threshold import SampleThreshold
from ldpsim.runtime.errors import InputError

#: δ of the (ε, δ) per device over a run unless the caller chooses another
DEFAULT_DELTA = 1e-6


def memo_classes(cfg, uc) -> int | None:
    """Memo classes a device can report from in a memoized use case (None when not memoized): the
    d + 1 responses of dBitFlip, 1BitMean's s + 1 levels, or the items of an event use case."""
    if not uc.memoize:
        return None
    mech = uc.make_mechanism()
    if hasattr(mech, "d"):
        return mech.d + 1
    if hasattr(mech, "granularity"):
        return mech.granularity + 1
    return len(cfg.items)


def losses(mech, reports: int, classes: int | None = None) -> dict[float, int]:
    """The worst device's losses, ε → how many times it is spent (docs/math.md §8.2).

    Parameters
    ----------
    mech : Mechanism
        The use case's mechanism (its ``guarantee`` and ``memoized_loss``).
    reports : int
        Reports a device sends at most (≥ 0).
    classes : int, optional
        Memo classes (memoized use cases only). r reports of one class cost
        ``mech.memoized_loss(r)``; the reports are spread over the classes in the costliest way
        (an exact knapsack over r = 1 … R with at most C classes).

    Returns
    -------
    dict
        ε → count, whose sum Σ ε·count is the basic composition over the run.
    """
    reports = check_int("losses", "reports", reports, low=0)
    if classes is None:
        return {mech.guarantee.epsilon_report: reports} if reports else {}
    classes = check_int("losses", "classes", classes, low=1)
    cost = np.array([mech.memoized_loss(r) for r in range(reports + 1)])
    # best[t]: the costliest spread of t reports over the classes used so far; take[j][t]: the r
    # reports the j-th class received in it
    best, take = np.zeros(reports + 1), []
    for _ in range(min(classes, reports)):
        cand = np.full((reports + 1, reports + 1), -np.inf)  # [t, r]: r reports to this class
        for r in range(reports + 1):
            cand[r:, r] = best[: reports + 1 - r] + cost[r]
        take.append(cand.argmax(axis=1))
        best = cand.max(axis=1)
    spent: dict[float, int] = {}
    t = reports
    for pick in reversed(take):
        r = int(pick[t])
        if r:
            spent[float(cost[r])] = spent.get(float(cost[r]), 0) + 1
        t -= r
    return spent


def _pld_epsilon(spent: dict[float, int], delta: float) -> tuple[float, str]:
    if not spent:
        return 0.0, "none"
    got = compose([(e, 0.0) for e, n in spent.items() for _ in range(n)], delta)
    return got.epsilon, got.method


def _steps_epsilon(steps, delta: float) -> tuple[float, str]:
    """(ε, δ) steps — an interactive protocol's R rounds (docs/math.md §10.8) and pure reports — composed
    at ``delta``; NaN when their δ already sum past it."""
    try:
        got = compose(steps, delta)
    except ValueError:
        return math.nan, "none"
    return got.epsilon, got.method


def _merge(into: dict, more: dict) -> dict:
    for e, n in more.items():
        into[e] = into.get(e, 0) + n
    return into


def _person_total(rows, kind: str, basic: float) -> float:
    """ε per person over the run of a kind's total row: the basic total without memoized use cases,
    else the sum of the use cases' person-level ε (docs/math.md §8.6)."""
    own = [r for r in rows if r["kind"] == kind and r["use_case"] != "total"]
    return sum(r["epsilon_person"] for r in own) if any(r["memoize"] for r in own) else basic


@dataclass(frozen=True)
class DeviceSpend:
    """What one device spends over a run (:func:`device_spend`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per use case (``use_case`` its name) and one total row per guarantee kind
        (``use_case`` = "total"): ``kind`` (the guarantee's label), ``epsilon_report`` (ε of one
        report), ``epsilon_permanent`` (ε_∞, memoized use cases), ``reports`` (per device over the
        run, at most), ``memo_classes``, ``epsilon_device`` (basic composition, δ = 0, capped by the
        budgets), ``epsilon_device_at_delta`` (PLD at ``delta``), ``epsilon_central`` (after the
        shuffle, at ``delta``; NaN unless ``shuffled_among`` was given), ``epsilon_person`` (ε per
        person over the run between arbitrary histories, docs/math.md §8.6: for a memoized use case
        ``epsilon_device`` holds only per value between histories of one repetition pattern, and
        ``epsilon_person`` is ∞ under pure memoization; else ``epsilon_device``).
    delta : float
        δ of the (ε, δ) columns.
    method : str
        How the (ε, δ) columns were composed.
    """

    table: pd.DataFrame
    delta: float
    method: str

    def total(self, kind: str = "ε-LDP", column: str = "epsilon_device") -> float:
        """The total row's ``column`` for guarantees of ``kind`` (NaN when no use case is of that kind)."""
        rows = self.table[(self.table["use_case"] == "total") & (self.table["kind"] == kind)]
        return float(rows[column].iloc[0]) if len(rows) else math.nan

    def lines(self) -> list[str]:
        """The spend as text: one line per use case and per total."""
        out = []
        for r in self.table.itertuples():
            central = "" if not np.isfinite(r.epsilon_central) else f", central {r.epsilon_central:.3g}"
            perm = "" if not np.isfinite(r.epsilon_permanent) else f", ε_∞ {r.epsilon_permanent:.3g}"
            per_report = "" if not np.isfinite(r.epsilon_report) else f"ε a report {r.epsilon_report:.3g}{perm}; "
            person = (f"; {SAME_PATTERN}; per person over the run "
                      + ("∞ (memoization reveals a change of value)" if math.isinf(r.epsilon_person)
                         else f"≤ {r.epsilon_person:.3g}")
                      if r.memoize or r.epsilon_person != r.epsilon_device else "")
            out.append(f"{r.use_case:>16}  {r.kind:<8} {per_report}per device over the run {r.epsilon_device:.3g} "
                       f"(δ = 0), {r.epsilon_device_at_delta:.3g} at δ = {self.delta:g}{central}{person}")
        return out


def device_spend(cfg, delta: float = DEFAULT_DELTA, shuffled_among: int | None = None) -> DeviceSpend:
    """What one device spends over the run of the deployment ``cfg``, per use case and in total.

    Parameters
    ----------
    cfg : ldpsim.simulator.config.DeploymentConfig
        The deployment: use cases (their mechanisms, daily limits, memoization), policy, days, caps.
    delta : float in (0, 1)
        δ of the (ε, δ) per device (PLD composition) and of the central ε.
    shuffled_among : int, optional
        Reports each report is shuffled among (per use case and day): adds the central ε.

    Returns
    -------
    DeviceSpend
        The table of the module docstring's quantities (docs/math.md §8.2–§8.4).
    """
    delta = check_real("device_spend", "delta", delta, 0.0, 1.0)
    if shuffled_among is not None:
        shuffled_among = check_int("device_spend", "shuffled_among", shuffled_among, low=1)
    cap = min(cfg.budget_total, cfg.n_days * cfg.budget_daily)
    rows, spent_by_kind, central_by_kind, pure_by_kind, rounds_by_kind = [], {}, {}, {}, {}
    joint = cfg.policy != "spl"
    for uc in cfg.use_cases:
        if uc.collected:  # a trust model's guarantee is the trust accountant's (evaluation/deployment/trust_estimates.py)
            continue
        g = uc.guarantee
        reports = cfg.n_days * (1 if joint else uc.daily_limit)
        classes = memo_classes(cfg, uc)
        if joint:  # one report of the whole record per device-day, at the policy's cost
            spent = {uc.ledger_cost: cfg.n_days}
        else:
            spent = losses(uc.make_mechanism(), reports, classes)
        rounds = uc.make_mechanism().steps if uc.interactive else []
        eps_at, method = _steps_epsilon(rounds, delta) if rounds else _pld_epsilon(spent, delta)
        basic = min(basic_composition(e * n for e, n in spent.items()), cap)
        central = math.nan
        if shuffled_among is not None:
            day_eps = uc.ledger_cost * (1 if joint else uc.daily_limit)
            per_day = shuffle_step(day_eps, shuffled_among, delta / (2 * cfg.n_days))
            central = min(compose([(per_day, delta / (2 * cfg.n_days))] * cfg.n_days, delta).epsilon, basic)
            central_by_kind.setdefault(g.label, []).append((per_day, cfg.n_days))
        rows.append({"use_case": uc.name, "mechanism": uc.mechanism, "kind": g.label, "memoize": uc.memoize,
                     "epsilon": float(dict(uc.params)["epsilon"]), "epsilon_report": g.epsilon_report,
                     "epsilon_permanent": g.epsilon_permanent if uc.memoize else math.nan,
                     "reports": reports, "memo_classes": classes if classes is not None else math.nan,
                     "epsilon_device": basic, "epsilon_device_at_delta": min(eps_at, basic),
                     "epsilon_central": central,
                     "epsilon_person": person_level(uc.make_mechanism(), reports).epsilon if uc.memoize else basic})
        # under smp/rsfd the device-day is charged once for all use cases: count it once per kind
        if not (joint and g.label in spent_by_kind):
            _merge(spent_by_kind.setdefault(g.label, {}), spent)
            _merge(pure_by_kind.setdefault(g.label, {}), {} if rounds else spent)
            rounds_by_kind.setdefault(g.label, []).extend(rounds)
    for kind, spent in spent_by_kind.items():
        basic = min(basic_composition(e * n for e, n in spent.items()), cap)
        if rounds_by_kind[kind]:
            eps_at, method = _steps_epsilon([(e, 0.0) for e, n in pure_by_kind[kind].items() for _ in range(n)]
                                            + rounds_by_kind[kind], delta)
        else:
            eps_at, method = _pld_epsilon(spent, delta)
        central = math.nan
        if kind in central_by_kind:
            parts = central_by_kind[kind][:1] if joint else central_by_kind[kind]
            n_parts = sum(n for _, n in parts)
            central = min(compose([(e, delta / (2 * n_parts)) for e, n in parts for _ in range(n)], delta).epsilon,
                          basic)
        rows.append({"use_case": "total", "mechanism": "", "kind": kind, "memoize": False, "epsilon": math.nan,
                     "epsilon_report": math.nan, "epsilon_permanent": math.nan,
                     "reports": int(sum(r["reports"] for r in rows if r["kind"] == kind and r["use_case"] != "total")),
                     "memo_classes": math.nan, "epsilon_device": basic,
                     "epsilon_device_at_delta": min(eps_at, basic), "epsilon_central": central,
                     "epsilon_person": _person_total(rows, kind, basic)})
    return DeviceSpend(pd.DataFrame(rows), delta, method if rows else "none")


def solve_epsilon(make, target: float, reports: int, classes: int | None = None, per: str = "device",
                  delta: float | None = None, tol: float = 1e-6) -> float:
    """The mechanism parameter ε at which a design spends exactly ``target`` (docs/math.md §8.5).

    Parameters
    ----------
    make : callable
        ε → the mechanism (its ``guarantee`` is read).
    target : float
        The budget: ε of one report (``per="report"``) or ε per device over the run (``per="device"``).
    reports : int
        Reports per device over the run.
    classes : int, optional
        Memo classes when the design memoizes (None: fresh reports).
    per : {"device", "report"}
        Which ε the target is.
    delta : float, optional
        With ``per="device"``: meet the target at this δ (PLD) instead of δ = 0 (basic composition).
    tol : float
        Relative width of the final bisection bracket; the returned ε never exceeds the target. An ε
        at which ``make`` raises ``ValueError`` counts as over the target.

    Returns
    -------
    float
        The mechanism's ``epsilon`` parameter.
    """
    target = check_real("solve_epsilon", "target", target, 0.0, math.inf)
    if per not in ("device", "report"):
        raise ValueError(f"The 'per' parameter of solve_epsilon must be 'device' or 'report'. Got {per!r} instead.")

    def spend(eps: float) -> float:
        try:
            mech = make(eps)
        except ValueError:  # a parameter derived from ε out of range (PEM's g = e^ε + 1): unusable
            return math.inf
        if per == "report":
            return mech.guarantee.epsilon_report
        spent = losses(mech, reports, classes)
        if delta is None:
            return basic_composition(e * n for e, n in spent.items())
        return _pld_epsilon(spent, delta)[0]

    low, high = 1e-6, 50.0
    if spend(high) <= target:
        return high
    if spend(low) > target:
        raise ValueError(f"The 'target' parameter of solve_epsilon ({target:g}) is below what the design spends "
                         f"at the smallest supported ε ({spend(low):.3g}).")
    while high - low > tol * low:
        mid = math.sqrt(low * high)
        if spend(mid) <= target:
            low = mid
        else:
            high = mid
    return low


def spend_summary(cfg, delta: float = DEFAULT_DELTA) -> dict:
    """The run's bound on one device's spend, flat for a run's ``summary.json``: per guarantee kind k
    (``ldp``, ``sdldp``, ``uldp``), ``epsilon_device_<k>`` (δ = 0) and ``epsilon_device_<k>_at_delta``,
    with ``epsilon_device_delta``."""
    from ldpsim.mechanisms import GUARANTEE_KINDS

    spend = device_spend(cfg, delta)
    out = {"epsilon_device_delta": delta}
    for key, label in GUARANTEE_KINDS.items():
        if np.isfinite(spend.total(label)):
            out[f"epsilon_device_{key}"] = spend.total(label)
            out[f"epsilon_device_{key}_at_delta"] = spend.total(label, "epsilon_device_at_delta")
    return out


MODELS = ("ldp", "shuffle", "secagg_local", "secagg", "two_server", "threshold", "sample_threshold")
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

    def __post_init__(self):
        if self.kind not in MODELS:
            raise InputError(f"The 'aggregation' setting must be one of {', '.join(MODELS)}. Got {self.kind!r} instead.")
        if self.client_epsilon is not None and self.kind != "two_server":
            raise InputError(f"The 'client_epsilon' setting is for aggregation = 'two_server'. Got it for {self.kind!r}.")
        if self.kind in NOISE_MODELS and not isinstance(self.noise, IntegerNoise):
            raise InputError(f"The trust model {self.kind!r} needs a 'noise' (an IntegerNoise). Got {self.noise!r} instead.")

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
                "threshold": "the trusted hardware", "sample_threshold": "the trusted hardware"}[self.kind]


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

    Exact PLD of one coordinate — the count is Bern(q or 1 − q) + Bin(n − 1, q), the other devices
    holding 0 there — composed over the changed coordinates with dp-accounting.
    """
    from scipy import stats

    q = 1.0 / (math.exp(client_epsilon / 2) + 1.0)
    others = stats.binom(n - 1, q)
    k = np.arange(int(others.ppf(1e-18)), int(others.isf(1e-18)) + 3)
    y, y_prev = others.pmf(k), others.pmf(k - 1)
    with_one, with_zero = q * y + (1 - q) * y_prev, (1 - q) * y + q * y_prev
    keep = (with_one > 0) & (with_zero > 0)
    pld = _pld_of_pair(k[keep], with_one[keep], k[keep], with_zero[keep], 1e-4)
    with np.errstate(over="ignore"):      # dp-accounting's tail bound overflows harmlessly for large losses
        eps = float((pld.self_compose(compositions) if compositions > 1 else pld).get_epsilon_for_delta(delta))
    return math.inf if eps > EPS_CAP else eps


def shuffle_step(eps0: float, n: int, delta_step: float) -> float:
    """Central ε of one ε₀-LDP step (a report, or a device's day of reports) shuffled among n, at
    ``delta_step`` (FMT21's numerical bound, never above ε₀): the one shuffle step of the accountant."""
    return min(eps0, numerical_epsilon(eps0, n, delta_step, tol=1e-4))


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


def guarantees(model: TrustModel, n: int, days: int, delta: float = 1e-9, reports_per_day: int = 1,
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


def calibrate(model: TrustModel, target_epsilon: float, n: int, days: int, delta: float = 1e-9,
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


def calibrate_threshold(model: TrustModel, target_epsilon: float, n: int, days: int, delta: float = 1e-9,
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


def dropout_epsilon(target: IntegerNoise, provisioned_for: int, arrived: int, delta: float = 1e-9,
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
