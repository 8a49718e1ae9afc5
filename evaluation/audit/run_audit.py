"""The audit of a whole run: one canary person through every round of every day — docs/math.md §11.7.

A one-report audit checks one randomizer; a person's promise is about everything the run releases
about them. Here the neighbouring pair is two runs of the *same* design that differ in one canary
person — world A: the canary's input is the planted word x in every one of the n = D·R rounds of the
run (D days, R rounds or reports a day); world B: the canary's input is x′ in every round (the
frequency oracles' other value; a numeric reading's plan pair; the tries' "none", the canary without the
word) — user-level neighbours, the whole history replaced, each round's contribution bounded to one report
as the design bounds it. The background fleet is empty: under local DP the other devices' reports are
independent of the canary's and do not change the likelihood ratio of the release, so they can only
blur the audit; the smallest background maximises the canary's effect.

Each trial is one complete run: the canary's n reports, each made by the design's own client (the
registry's mechanism through ``make``; the trie's round randomizer, ``protocol.oracle``), vectorised
over trials (one client call per round for all trials). The event on the release is

    S_n,k = "at least k of the n reports are in S",

S the one-report event of the mechanism's plan (:func:`~.plans.plan_for`: report = x for GRR, bit x
set and bit x′ clear for OUE, H_s(x) = y ≠ H_s(x′) for OLH, the report in x = 1's window and outside
x′ = −1's for PM, SDPM and SW, bit = 1 for 1BitMean at x = m, x′ = 0; the personalized mechanisms: the
canary's group :data:`~.run_names.RUN_GROUPS` in the clear and its group's event), whose probabilities
p, p′ are the plan's.
The rounds are independent, so P[S_n,k | A] = P[Bin(n, p) ≥ k] and P[S_n,k | B] = P[Bin(n, p′) ≥ k]
exactly; k is fixed from these declared probabilities before any trial (:func:`~.repeated.joint_k`:
fewest trials to refute the planted accountant's claim), so the choice costs no confidence. With
k = n and a plan ratio p/p′ = e^{ε₀} (GRR, OUE) the event is the likelihood ratio's extreme tail and
its ratio e^{n·ε₀} is the claim itself.

The claim is the one accountant's ε per person over the run
(:func:`ldpsim.evaluation.privacy.accountant.device_spend`, ``epsilon_person``: the number a run
summary prints) for a deployment of the design over D days. ε_lb = ln(p_lo(S|A) / p_hi(S|B))
(:func:`~.bounds.epsilon_lower_bound`); FAIL when it exceeds the claim, INCONCLUSIVE when no outcome
of these trials could (:func:`~.bounds.largest_lower_bound`), else PASS.

Central-noise trust models (``secagg``: Skellam; ``threshold``: discrete Gaussian; ``two_server``: the discrete
Gaussian of the honest aggregator, the view of the other one colluding): world A the canary adds
1 to its word's count each round, world B it is absent; each round releases count + Z (the noise's own
sampler, vectorised over trials and rounds); the event is Σ_r (release_r − background) ≥ t with the exact
law of the n-fold noise sum; the claim is the trust accountant's (ε, δ) per device over the run at
:data:`~ldpsim.mechanisms.deltas.DELTA_AUDIT`, and ε_lb = ln((p_lo − δ)/p_hi) (docs/math.md §11.5).

Planted bugs (``bug=``): ``"uncharged-round"`` — an accountant that forgets to charge one round
(claim: n − 1 rounds composed); ``"clear-round"`` — a client that sends one round's report
unrandomised (the true category: a GRR report of ε = ∞; a numeric reading's true value, which its event
holds for x and not for x′; a personalized report's value beside its group), so S is certain under A and
impossible under B in that round; for the central models, an aggregator that releases one round without noise;
``"split-noise"`` (two servers) — each aggregator adds half the target noise while the claim rests on one
aggregator's full noise. :func:`bugs_of` says which a design carries; :func:`trials_to_fail` gives the
trials at which an audit FAILS a bug with probability ≥ 0.95. The amplified, thresholded and enclave
designs are planned in :mod:`ldpsim.scenarios.studies.audit.run_designs` (docs/math.md §11.8).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from ldpsim.evaluation.audit.auditor import CHUNK, AuditResult
from ldpsim.evaluation.audit.bounds import epsilon_lower_bound, fewest_trials, largest_lower_bound
from ldpsim.evaluation.audit.plans import plan_for
from ldpsim.evaluation.audit.repeated import joint_k
from ldpsim.evaluation.audit.run_names import BUGS, CENTRAL, CLEAR_ROUND_DESIGNS, DESIGNS, NUMERIC, ORACLES, RUN_GROUPS
from ldpsim.evaluation.cost import CostError
from ldpsim.mechanisms import make
from ldpsim.mechanisms.registry import PARAMETERS, takes, typical
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.deltas import DELTA_AUDIT
from ldpsim.mechanisms.frequency.personalized import PersonalizedReports
from ldpsim.mechanisms.discovery.run_budget import run_rounds
from ldpsim.runtime.errors import InputError

#: the audited run: days, rounds (reports) a day, ε of one round — small enough that e^{n·ε₀} is measurable
DAYS, ROUNDS_PER_DAY, EPSILON_ROUND = 3, 2, 0.5
#: power of :func:`trials_to_fail` (each planted bug FAILS with at least this probability)
POWER = 0.95
#: runs per world beyond which a planted bug counts as out of reach (days of CPU for the cheapest clients)
MAX_RUNS = 10**9
#: most rounds n = D·R of an audited run: a run's cost, its exact law and the search for its event grow with n
MAX_ROUNDS = 1000


@dataclass(frozen=True)
class RunPlan:
    """One design's run audit before any trial: the neighbouring canaries, the event, its exact law, the claim.

    Attributes
    ----------
    design : str
    days, rounds_per_day : int
        D and R; ``rounds`` = n = D·R reports of the canary.
    x, x_prime : int or float
        The canary's input in world A (the planted word; a numeric reading's value) and in world B.
    at_least : int
        k of the event S_n,k.
    p_a, p_b : float
        P[S_n,k | A], P[S_n,k | B] of the honest client (binomial tails of the plan's p, p′); for the
        designs of :mod:`ldpsim.scenarios.studies.audit.run_designs`, of the audited release (its planted bug included).
    claim : float
        ε per person over the run (pure, δ = 0) — the accountant's, or the planted accountant's.
    claim_source : str
        Which accountant made ``claim``.
    one_report : str
        The one-report event S.
    bug : str or None
    p_one : (float, float)
        P[S | x], P[S | x′] of one report.
    perturb, event : callable
        The round's client ``perturb(values, rng)`` and the one-report event S.
    """

    design: str
    days: int
    rounds_per_day: int
    x: int | float
    x_prime: int | float
    at_least: int
    p_a: float
    p_b: float
    claim: float
    claim_source: str
    one_report: str
    bug: str | None
    p_one: tuple  #: (p, p′) of the one-report event S
    perturb: Callable | None
    event: Callable | None
    noise: object = None  #: central designs: the per-round IntegerNoise (the event is Σ releases ≥ at_least)
    delta: float = 0.0    #: δ of the (ε, δ) claim (central designs)
    #: the designs of :mod:`ldpsim.scenarios.studies.audit.run_designs`: ``draw(value, size, rng)`` → whether each of ``size`` runs lands in S
    draw: Callable | None = None
    #: the planted ``clear-round`` client's report of ``values`` unrandomised (None: the values themselves)
    clear: Callable | None = None
    #: what the claim covers beyond one person over the run (the memoized designs: the same repetition pattern)
    scope: str = ""

    @property
    def rounds(self) -> int:
        return self.days * self.rounds_per_day

    @property
    def description(self) -> str:
        if self.noise is not None or self.draw is not None:
            return self.one_report
        return f"at least {self.at_least} of {self.rounds} reports: {self.one_report}"


def check_rounds(design: str, days: int, rounds_per_day: int) -> None:
    """Refuse a run of more than :data:`MAX_ROUNDS` rounds before planning it (:class:`CostError` naming
    'days' and 'rounds_per_day')."""
    if days * rounds_per_day > MAX_ROUNDS:
        raise CostError(f"run audit of {design}: days × rounds_per_day = {days} × {rounds_per_day} = "
                        f"{days * rounds_per_day:,} rounds, more than the {MAX_ROUNDS:,} the run audit plans (each run "
                        f"costs its rounds, and its claim outgrows what any feasible number of runs can show); "
                        f"audit fewer days or rounds a day (--days, --rounds-per-day)")


def check_reach(design: str, claim: float, rounds: int, delta: float = 0.0) -> None:
    """Refuse, before the event is planned, a claim no audit of at most :data:`MAX_RUNS` runs per world can
    exceed at any confidence: every such audit would be INCONCLUSIVE (docs/math.md §11.3)."""
    reach = largest_lower_bound(MAX_RUNS, MAX_RUNS, 1 - 1e-9, delta)
    if claim >= reach:
        raise CostError(f"run audit of {design}: the claim {claim:.4g} over {rounds:,} rounds is beyond what "
                        f"{MAX_RUNS:.0e} runs per world can show at any confidence (ε_lb ≤ {reach:.3g}): no audit "
                        f"could FAIL or PASS it; audit fewer days or rounds a day (--days, --rounds-per-day)")


def bugs_of(design: str) -> tuple:
    """The planted bugs of :data:`BUGS` that ``design`` can carry."""
    return tuple(b for b in BUGS if (b != "clear-round" or design in CLEAR_ROUND_DESIGNS)
                 and (b != "split-noise" or design == "two_server"))


def run_mechanism(design: str, days: int, rounds_per_day: int, epsilon_round: float):
    """The randomizer of one round of ``design``: the registry's frequency oracle over {x, x′} or numeric
    mechanism at ``epsilon_round``, or the trie's round randomizer over one candidate (the canary's prefix) and
    "none" (its protocol at ε = n·ε₀ over the run, one pass of ``rounds_per_day`` rounds a day)."""
    if design in CENTRAL:
        return IntegerNoise(*CENTRAL[design])
    if design in ("ldp_trie", "gboard"):
        rounds = run_rounds(design, epsilon=epsilon_round * days * rounds_per_day, n_days=days,
                            length=rounds_per_day, alphabet="ab")
        return rounds.protocol.oracle(np.arange(1))
    return make(design, **oracle_params(design, epsilon_round))


def oracle_params(design: str, epsilon_round: float) -> dict:
    """The parameters of the frequency oracle or numeric mechanism ``design`` (:data:`ORACLES`, :data:`NUMERIC`) in
    the run audit at ε = ``epsilon_round``: the registry's pair shape where it has one (the id sets of SDGRR, URR
    and the personalized SDGRR over two values), else its typical shape, an oracle's at domain size 2 (the
    accountant charges the same)."""
    if PARAMETERS[design].pair is not None:
        return {**typical(design, "pair"), "epsilon": epsilon_round}
    shape = typical(design)
    if takes(design, "domain_size"):
        shape["domain_size"] = 2
    return {**shape, "epsilon": epsilon_round}


def run_plan(design: str, claim: float, days: int = DAYS, rounds_per_day: int = ROUNDS_PER_DAY,
             epsilon_round: float = EPSILON_ROUND, bug: str | None = None,
             claim_short: float | None = None, delta: float = DELTA_AUDIT) -> RunPlan:
    """The run audit of ``design`` (module docstring) over ``days`` × ``rounds_per_day`` rounds at
    ``epsilon_round`` per round, judged against ``claim`` (the accountant's ε per person over the run of
    that deployment, computed by the caller: :func:`ldpsim.scenarios.studies.audit.gate.run_claim`),
    optionally with a planted ``bug`` (:data:`BUGS`). ``claim_short``: the same accountant over n − 1
    rounds (the planted accountant's claim; default ``claim`` minus one round's ε, pure composition).
    ``delta``: δ of a central design's (ε, δ) claim (the local designs' claims are pure, δ = 0).

    Raises
    ------
    InputError
        An unknown design or bug, a bug the design cannot carry, or a parameter out of range.
    """
    if design not in DESIGNS:
        raise InputError(f"The 'design' parameter of the run audit must be one of {DESIGNS}. Got {design!r} instead.")
    if bug is not None and bug not in BUGS:
        raise InputError(f"The 'bug' parameter of the run audit must be one of {BUGS} or None. Got {bug!r} instead.")
    if bug is not None and bug not in bugs_of(design):
        raise InputError(f"The {bug!r} bug does not apply to design {design!r} ('clear-round' sends a GRR category "
                         f"or a count in the clear; 'split-noise' splits the two servers' noise); it takes "
                         f"{bugs_of(design)}.")
    days = check_int("run_plan", "days", days, low=1, high=365)
    rounds_per_day = check_int("run_plan", "rounds_per_day", rounds_per_day,
                               low=2 if design in ("ldp_trie", "gboard") else 1, high=64)
    epsilon_round = check_real("run_plan", "epsilon_round", epsilon_round, 0.0, 8.0)
    check_rounds(design, days, rounds_per_day)
    mech = run_mechanism(design, days, rounds_per_day, epsilon_round)
    local = design in ORACLES + NUMERIC
    one_round = mech.guarantee.epsilon_report if local else epsilon_round   # THE's report: below ε₀
    short = claim - one_round if claim_short is None else claim_short
    check_reach(design, short if bug == "uncharged-round" else claim, days * rounds_per_day,
                delta if design in CENTRAL else 0.0)
    if design in CENTRAL:
        return _central_plan(design, claim, short, days, rounds_per_day, mech, bug,
                             check_real("run_plan", "delta", delta, 0.0, 0.5))
    group = RUN_GROUPS.get(design)
    plan = plan_for(mech, None if group is None else f"group{group}")
    n = days * rounds_per_day
    source = "accountant (ε per person over the run)"
    if bug == "uncharged-round":
        claim, source = short, "planted accountant: one round not charged"
    k = joint_k(plan.p_x, plan.p_x_prime, short, n)
    p_a, p_b = (float(stats.binom.sf(k - 1, n, p)) for p in (plan.p_x, plan.p_x_prime))
    return RunPlan(design, days, rounds_per_day, plan.x, plan.x_prime, k, p_a, p_b, claim, source,
                   plan.description, bug, (plan.p_x, plan.p_x_prime), plan.client or mech.perturb, plan.event,
                   clear=None if group is None else lambda values: PersonalizedReports(values,
                                                                                        np.full(values.size, group)))


def _central_plan(design, claim, short, days, rounds_per_day, noise, bug, delta) -> RunPlan:
    """The central design's plan (docs/math.md §11.7): world A the canary adds 1 to its word's count in each
    of the n rounds, world B it is absent; each round releases count + Z. Event: Σ_r (release_r − background)
    ≥ t, exact law P[Z^{*n} ≥ t − n] vs P[Z^{*n} ≥ t]; t fixed before any trial (fewest trials to refute the
    claim one round short, which ``claim`` already is under the planted accountant)."""
    n = days * rounds_per_day
    law = noise.share(2) if bug == "split-noise" else noise   # the colluding aggregator removes its own share
    t = _fewest_runs(design, days, rounds_per_day, law, claim if bug == "split-noise" else short, delta)
    source = {"uncharged-round": "planted accountant: one round not charged",
              "split-noise": "planted: each aggregator adds half the noise, the claim one aggregator's full noise"
              }.get(bug, "accountant (ε per person over the run)")
    return RunPlan(design, days, rounds_per_day, 1, 0, t.at_least, t.p_a, t.p_b,
                   short if bug == "uncharged-round" else claim, source,
                   f"Σ over the {n} rounds of (release − background) ≥ {t.at_least}", bug, (math.nan, math.nan),
                   None, None, law, delta)


def _fewest_runs(design, days, rounds_per_day, noise, target, delta) -> RunPlan:
    """The event Σ ≥ t of the n-round noise sum with the fewest runs to refute ``target`` (exact law)."""
    n = days * rounds_per_day
    k, p, _ = noise.times(n).pmf_table()
    sf = np.cumsum(p[::-1])[::-1]                         # P[Z^{*n} ≥ k[i]]
    best = None
    for i in range(n, k.size):
        probe = RunPlan(design, days, rounds_per_day, 1, 0, int(k[i]), float(sf[i - n]), float(sf[i]), target, "",
                        "", None, (math.nan, math.nan), None, None, noise, delta)
        if sf[i] < 1e-8 or sf[i - n] < 2 * delta:
            continue
        cost = trials_to_fail(probe)
        best = min(best or (cost, probe), (cost, probe), key=lambda c: c[0])
    if best is None:
        raise CostError(f"run audit of {design}: no event Σ ≥ t of the {n}-round noise sum has P[S|A] ≥ 2δ = "
                        f"{2 * delta:g} and P[S|B] ≥ 1e-8: no run count could measure it; give a smaller δ "
                        f"(--delta) or fewer rounds (--days, --rounds-per-day)")
    return best[1]


def run_hits(plan: RunPlan, value: int | float, trials: int, rng) -> int:
    """How many of ``trials`` runs of the canary holding ``value`` in every round land in S_n,k: the client
    runs once per round for all trials (chunks of :data:`~.auditor.CHUNK`)."""
    hits = 0
    for start in range(0, trials, CHUNK):
        size = min(CHUNK, trials - start)
        if plan.draw is not None:
            hits += int(np.count_nonzero(plan.draw(value, size, rng)))
            continue
        if plan.noise is not None:         # central: each round's noise drawn by its own sampler
            z = plan.noise.sample((size, plan.rounds), rng)
            if plan.bug == "clear-round":
                z[:, -1] = 0                   # the planted aggregator: one round released without noise
            hits += int(np.count_nonzero(z.sum(axis=1) + value * plan.rounds >= plan.at_least))
            continue
        inside = np.zeros(size, dtype=np.int64)
        values = np.full(size, value)                 # the canary's category (int64) or reading (float64)
        for r in range(plan.rounds):
            if plan.bug == "clear-round" and r == plan.rounds - 1:
                reports = values if plan.clear is None else plan.clear(values)   # the planted client: not randomised
            else:
                reports = plan.perturb(values, rng)
            inside += plan.event(reports)
        hits += int(np.count_nonzero(inside >= plan.at_least))
    return hits


def audit_run(plan: RunPlan, trials: int, rng, confidence: float = 0.95) -> AuditResult:
    """Run ``trials`` complete runs per world and judge the claim (module docstring)."""
    trials = check_int("audit_run", "trials", trials, low=1)
    confidence = check_real("audit_run", "confidence", confidence, 0.0, 1.0)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    a_rng, b_rng = rng.spawn(2)
    t0 = time.perf_counter()
    k_a, k_b = run_hits(plan, plan.x, trials, a_rng), run_hits(plan, plan.x_prime, trials, b_rng)
    alpha = 1 - confidence
    return AuditResult(
        subject=f"{plan.design} run" + (f" (planted: {plan.bug})" if plan.bug else ""),
        epsilon_claimed=float(plan.claim), epsilon_lower_bound=float(epsilon_lower_bound(k_a, trials, k_b, trials, alpha, plan.delta)),
        confidence=confidence, x=plan.x, x_prime=plan.x_prime, event=plan.description, trials=trials,
        count_x=k_a, count_x_prime=k_b, mode="run", seconds=time.perf_counter() - t0,
        epsilon_event=event_epsilon(plan), delta=plan.delta,
        target=f"{plan.days} days × {plan.rounds_per_day} rounds" + (f", {plan.scope}" if plan.scope else ""),
        largest_bound=largest_lower_bound(trials, trials, alpha, plan.delta), days=plan.rounds)


def event_epsilon(plan: RunPlan) -> float:
    """ln((P[S|A] − δ)/P[S|B]) of the audited release's exact law (:func:`bug_probabilities`: the planted
    bug's when there is one): the most its event can show with unlimited runs (−inf when P[S|A] ≤ δ, inf
    when P[S|B] = 0 < P[S|A] − δ)."""
    p_a, p_b = bug_probabilities(plan)
    if p_a <= plan.delta:
        return -math.inf
    return math.inf if p_b == 0 else math.log((p_a - plan.delta) / p_b)


def bug_probabilities(plan: RunPlan) -> tuple[float, float]:
    """P[S_n,k | A], P[S_n,k | B] under the plan's client: the honest law, or with one round in the clear
    (that round in S w.p. 1 under A and 0 under B; the other n − 1 binomial)."""
    if plan.bug != "clear-round":
        return plan.p_a, plan.p_b
    n, k = plan.rounds, plan.at_least
    if plan.noise is not None:          # Σ = (n or 0) + Z^{*(n−1)}
        kk, p, _ = plan.noise.times(n - 1).pmf_table() if n > 1 else (np.zeros(1, np.int64), np.ones(1), 0.0)
        return float(p[kk >= k - n].sum()), float(p[kk >= k].sum())
    p, p_prime = plan.p_one
    return float(stats.binom.sf(k - 2, n - 1, p)), float(stats.binom.sf(k - 1, n - 1, p_prime))


def trials_to_fail(plan: RunPlan, confidence: float = 0.95, power: float = POWER, max_trials: int = MAX_RUNS) -> int:
    """The fewest trials per world at which the audit FAILS the plan's claim with probability ≥ ``power``
    under the plan's client (:func:`bug_probabilities`): with a = (1 − power)/2, when the a-quantile of
    k_A and the (1 − a)-quantile of k_B already give ε_lb > claim, both hold together with probability
    ≥ 1 − 2a (ε_lb rises with k_A and falls with k_B) — docs/math.md §11.7. Found by
    :func:`~.bounds.fewest_trials`."""
    p_a, p_b = bug_probabilities(plan)
    a = (1 - power) / 2

    def fails(t: int) -> bool:
        k_a, k_b = stats.binom.ppf(a, t, p_a), stats.binom.isf(a, t, p_b)
        return epsilon_lower_bound(k_a, t, k_b, t, 1 - confidence, plan.delta) > plan.claim

    return fewest_trials(fails, max_trials)
