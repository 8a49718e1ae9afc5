"""The whole-run audit of the amplified, thresholded, confidential and local discovery designs — docs/math.md §11.8.

:mod:`~ldpsim.evaluation.audit.run_audit` audits the local frequency oracles, the LDP tries and the central-noise models
(``secagg``, ``threshold``, ``two_server``); this module builds the same :class:`~ldpsim.evaluation.audit.run_audit.RunPlan`
for the designs whose release is not one report per round or one noisy count:

* ``shuffle``, ``secagg_local`` — ε₀-LDP reports (binary GRR: the trust models' local randomizer
  over two values) shuffled, or summed by secure aggregation, among the m devices of the day, each device
  sending L reports a day for D days. The day's release is the histogram of its m·L reports; with two
  values it is the count of x. World A: the canary's L reports hold x every day; world B: x′; the other
  m − 1 devices hold x′ (their reports are the background the amplification hides the canary in).
  Event Σ_days count ≥ t: Bin(D·L, p) + Bin(D·(m − 1)·L, q) under A against Bin(D·m·L, q) under B
  (p = e^ε₀/(1 + e^ε₀), q = 1 − p), exact by convolution. Claim: the trust accountant's central ε per
  device over the run (replace one person, :func:`~ldpsim.evaluation.privacy.trust_accounting.run_epsilon`).
  Planted ``amplified-by-reports``: the accountant credits each report with amplification among the
  m·L reports of the batch instead of the m devices they come from.
* ``tee`` — confidential aggregation (:class:`~ldpsim.mechanisms.aggregation.tee.TeeDesign`, Gaussian
  noise): every night the canary types L0 distinct words, each several times; the enclave's own code bounds
  them (:func:`~ldpsim.mechanisms.aggregation.tee.bound_contributions`), adds the noise and thresholds.
  Each word also has a background of b other holders, b far above the threshold, so every key is released:
  the event Σ_nights Σ_keys (y − b) ≥ t has the exact law N(D·L0, D·L0·σ²) against N(0, D·L0·σ²) (the
  canary absent in B: add/remove neighbours, the design's guarantee). Claim: the design's (ε, δ) per person
  over D nights. Planted ``bound-l0``: noise and threshold calibrated for L0 = 1 while the enclave keeps 3.
* ``tee_selection`` — the same enclave, the partition-selection half: the canary's L0 words are held by
  nobody else; event "one of them is released on some night", P = 1 − (1 − p₁)^(D·L0) under A, 0 under B
  (no row, no release). Honest: P ≤ δ/2, so no count can refute the claim; ``bound-l0`` puts it at
  ≈ 3δ/2 > δ.
* ``triehh``, ``sample_threshold`` — a sample-and-threshold round each round (TrieHH: votes sampled at γ,
  prefix released at θ votes; trusted hardware: reports kept at rate p, released at τ), released by
  :meth:`~ldpsim.mechanisms.aggregation.threshold.SampleThreshold.release`. The canary's word (prefix)
  has θ − 1 other holders every round (the worst case of §10.2: without the canary it can never be
  released); event "released in some round": 1 − (1 − γ^θ)^n under A, 0 under B. Claims: TrieHH's own
  run accountant (:func:`~ldpsim.mechanisms.discovery.run_budget.run_rounds`), the trust accountant for
  ``sample_threshold``. Planted ``threshold-before-bounding``: the server thresholds the canary's 3
  typed occurrences before bounding them to one vote, P[Bin(θ + 2, γ) ≥ θ] a round.
* ``pem``, ``treehist``, ``sfp``, ``prefix_tree`` — the local discovery protocols: one report per device per
  run (a run a day), or the prefix tree's OUE report each round. World A: the canary's word is
  the first word of :data:`WORDS`, world B: the second. Event: the report in its likelihood-ratio region at the
  sum of the protocol's ``privacy_parts`` (its own ``log_likelihood``), at least k of the n reports
  (binomial); P[S|x] = p·c, q·c for PEM (c the share of groups and pool hashes splitting the two
  prefixes), (1 − γ)(1 − f)², (1 − γ)f² per CMS report for TreeHist and SFP. Claims: Σ ``privacy_parts``
  over the D runs; the prefix tree's run accountant. Planted: ``claimed-per-group`` (PEM, TreeHist: the
  device's ε divided by its groups), ``fragment-uncharged`` (SFP: the word part only), ``uncharged-round``
  (prefix tree: n − 1 rounds charged).

Every event's probabilities are exact; the threshold t (where there is one) is fixed before any trial
from the exact law (fewest trials for the design's planted bug to FAIL, :func:`~ldpsim.evaluation.audit.run_audit.trials_to_fail`),
so choosing it costs no confidence. Each (ε, δ) claim is judged by ε_lb = ln((p_lo(S|A) − δ)/p_hi(S|B))
(docs/math.md §11.5): the hypothesis-test form e^ε·P[S|B] + δ ≥ P[S|A].
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
from scipy import stats

from ldpsim.evaluation.audit.plans import plan_for
from ldpsim.evaluation.audit.repeated import joint_k
from ldpsim.evaluation.audit.run_audit import MAX_ROUNDS, RunPlan, bugs_of, check_reach, check_rounds, trials_to_fail
from ldpsim.evaluation.privacy.trust_accounting import run_epsilon
from ldpsim.evaluation.privacy.trust_exact import HardwareSampleThreshold
from ldpsim.evaluation.privacy.trust_local import SecAggLocal, Shuffled
from ldpsim.mechanisms import make
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.aggregation.tee import TeeDesign, bound_contributions, calibrate_tee
from ldpsim.mechanisms.aggregation.threshold import SampleThreshold
from ldpsim.mechanisms.deltas import DELTA_AUDIT
from ldpsim.mechanisms.discovery.run_budget import run_rounds
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.run_catalog import ALL_BUGS, ALL_DESIGNS, PLANS, STREAMS
from ldpsim.scenarios.studies.audit.run_memo import MEMO, memo_plan

#: the bound L0 of the ``bound-l0`` enclave (the accountant's is 1)
BUG_MAX_KEYS = 3
#: the canary's typed occurrences of each word (the contribution bound caps them at L∞ = 1)
TYPED = 3
#: the smallest P[S|B] an honest design's event is chosen at (about 10 hits in 10⁶ runs)
RESOLVED = 1e-5
#: background holders above the threshold, in noise standard deviations (P[not released] < 10⁻³⁰⁰)
RELEASED_SDS = 40.0


def design_bugs(design: str) -> tuple:
    """The planted bugs ``design`` can carry (:data:`ALL_BUGS`)."""
    check_design(design)
    if design in PLANS:
        return PLANS[design][0]
    return bugs_of(design)


def check_design(design: str) -> str:
    """``design`` when the run audit covers it (:data:`ALL_DESIGNS`).

    Raises
    ------
    InputError
        Naming the allowed designs.
    """
    if design not in ALL_DESIGNS:
        raise InputError(f"The 'design' parameter of the run audit must be one of {', '.join(ALL_DESIGNS)}. "
                         f"Got {design!r} instead.")
    return design


@functools.lru_cache(maxsize=64)
def design_plan(design: str, bug: str | None = None, delta: float = DELTA_AUDIT, **sizes) -> RunPlan:
    """The run audit's plan of one design of :data:`PLANS` (module docstring).

    Parameters
    ----------
    design : str
        A key of :data:`PLANS`.
    bug : str, optional
        One of the design's planted bugs (:func:`design_bugs`).
    delta : float in (0, 1)
        δ of the audited (ε, δ) claim.
    **sizes
        Overrides of the design's defaults (``days``, ``rounds_per_day`` and the design's own: ``devices``,
        ``epsilon_report``; ``epsilon``, ``max_keys``; ``gamma`` or ``rate``; ``length``, ``pool``, ``k``, ``m``;
        RAPPOR's instantaneous ``p``, ``q``).

    Returns
    -------
    RunPlan
        Cached: the same arguments give the same (frozen) plan.

    Raises
    ------
    InputError
        An unknown design, bug or size, or a value out of range.
    """
    if design not in PLANS:
        raise InputError(f"The 'design' parameter of design_plan must be one of {', '.join(PLANS)}. "
                         f"Got {design!r} instead.")
    bugs, defaults = PLANS[design]
    if bug is not None and bug not in bugs:
        raise InputError(f"The 'bug' parameter of the {design} run audit must be one of {bugs} or None. "
                         f"Got {bug!r} instead.")
    unknown = sorted(set(sizes) - set(defaults))
    if unknown:
        raise InputError(f"The {design} run audit takes no size {unknown[0]!r} (it takes: {', '.join(defaults)}).")
    s = {**defaults, **sizes}
    days = check_int(design, "days", s.pop("days"), low=1, high=365)
    per_day = check_int(design, "rounds_per_day", s.pop("rounds_per_day"), low=1, high=MAX_ROUNDS)
    check_rounds(design, days, per_day)
    delta = check_real(design, "delta", delta, 0.0, 0.5)
    build = {"shuffle": _amplified, "secagg_local": _amplified, "tee": _tee, "tee_selection": _tee,
             "triehh": _sample_threshold, "sample_threshold": _sample_threshold,
             "pem": _pem, "treehist": _sketched, "sfp": _sketched, "prefix_tree": _prefix_tree,
             **dict.fromkeys(MEMO, memo_plan)}[design]
    return build(design, bug, delta, days, per_day, **s)


# ------------------------------------------------------------------------------------------------ shuffle
def _amplified(design, bug, delta, days, per_day, devices, epsilon_report) -> RunPlan:
    m = check_int(design, "devices", devices, low=2, high=10**5)
    e0 = check_real(design, "epsilon_report", epsilon_report, 0.0, 8.0)
    models = {crowd: Shuffled(epsilon_report=e0) if design == "shuffle" else
              SecAggLocal(epsilon_report=e0, min_cohort=crowd, min_arrival=1.0)
              for crowd in (m, m * per_day)}     # the devices, or (planted) the batch's reports
    claims = {crowd: run_epsilon(model, crowd, days, delta, per_day, "replace") for crowd, model in models.items()}
    claim = claims[m * per_day if bug else m]
    oracle = models[m].local_oracle(2)                         # the design's client: GRR at ε₀ over {x′, x}
    p = float(oracle.p)
    q = 1.0 - p
    own, others = days * per_day, days * (m - 1) * per_day
    sf_a = _sf(np.convolve(stats.binom.pmf(np.arange(own + 1), own, p),
                           stats.binom.pmf(np.arange(others + 1), others, q)))
    sf_b = _sf(stats.binom.pmf(np.arange(own + others + 1), own + others, q))
    probe = _base(design, days, per_day, claims[m * per_day], bug, delta)   # t: fewest runs to FAIL the bug
    t = _best_index(probe, sf_a, sf_b, delta)

    def draw(value, size, rng):
        total = rng.binomial(others, q, size)                  # the other devices' reports of x, all days
        canary = np.full(size, value, dtype=np.int64)
        for _ in range(own):                                   # the canary's reports, made by its client
            total += oracle.perturb(canary, rng) == 1
        return total >= t

    source = ("planted accountant: each report amplified among the batch's reports, not its devices"
              if bug else f"trust accountant: {design} (central ε per person over the run, replace one person)")
    return dataclasses.replace(
        probe, at_least=t, p_a=float(sf_a[t]), p_b=float(sf_b[t]), claim=claim, claim_source=source, draw=draw,
        one_report=f"Σ over {days} day(s) of the count of x among {m} devices × {per_day} reports ≥ {t}")


# ------------------------------------------------------------------------------------------------ TEE
def _tee(design, bug, delta, days, per_day, epsilon, max_keys) -> RunPlan:
    if per_day != 1:
        raise InputError(f"The {design} run audit releases once a night: 'rounds_per_day' must be 1. Got {per_day}.")
    epsilon = check_real(design, "epsilon", epsilon, 0.0, 20.0)
    l0 = check_int(design, "max_keys", max_keys, low=1, high=64)
    if bug == "bound-l0":          # the accountant's L0 = 1; the enclave keeps BUG_MAX_KEYS
        tee = dataclasses.replace(calibrate_tee("gaussian", epsilon, delta, days, 1), max_keys=BUG_MAX_KEYS)
        claim, source = tee.epsilon(days, delta, keys=1), "planted accountant: calibrated for L0 = 1"
    else:
        tee = calibrate_tee("gaussian", epsilon, delta, days, l0)
        claim, source = tee.epsilon(days, delta), "the enclave's accountant ((ε, δ) per person over the nights)"
    kept = tee.max_keys
    base = dataclasses.replace(_base(design, days, per_day, claim, bug, delta), claim_source=source)
    if design == "tee_selection":
        p_a = tee.threshold_delta(days, kept)
        return dataclasses.replace(
            base, at_least=1, p_a=p_a, p_b=0.0, draw=lambda v, size, rng: _tee_nights(tee, days, v, size, rng, 0) > 0,
            one_report=f"one of the canary's {kept} own words released on one of {days} nights")
    sd = tee.scale * math.sqrt(days * kept)
    background = math.ceil(tee.threshold + RELEASED_SDS * tee.scale)
    grid = np.arange(0, days * kept + int(8 * sd) + 1)             # event thresholds t on the sum
    sf_a, sf_b = stats.norm.sf((grid - days * kept) / sd), stats.norm.sf(grid / sd)
    t = int(grid[_best_index(base, sf_a, sf_b, delta) if bug else _tightest_index(sf_a, sf_b, delta)])
    return dataclasses.replace(
        base, at_least=t, p_a=float(stats.norm.sf((t - days * kept) / sd)), p_b=float(stats.norm.sf(t / sd)),
        draw=lambda v, size, rng: _tee_nights(tee, days, v, size, rng, background) >= t,
        one_report=f"Σ over {days} nights of the canary's words' (release − {background} background) ≥ {t}")


def _tee_nights(tee: TeeDesign, nights: int, value: int, size: int, rng, background: int) -> np.ndarray:
    """Per trial, Σ over the nights of (release − ``background``) of the canary's words; with ``background``
    0 (its words have no other holder) the number of its words released instead. The enclave's own code
    bounds, counts, adds noise and thresholds; each trial's canary is one person typing its L0 words
    :data:`TYPED` times each (world A, ``value`` 1) or is absent (world B)."""
    words = tee.max_keys
    person = np.repeat(np.arange(size), words * TYPED)
    key = person * words + np.tile(np.repeat(np.arange(words), TYPED), size)
    total = np.zeros(size)
    for _ in range(nights):
        counts = np.full(size * words, float(background))
        if value:
            _, kept, count = bound_contributions(person, key, tee.max_keys, tee.max_per_key, rng)
            counts += np.bincount(kept, weights=count, minlength=size * words)
        released = tee.release_counts(counts, rng).reshape(size, words)
        total += (released > 0).sum(axis=1) if background == 0 else (released - background).sum(axis=1)
    return total


# ------------------------------------------------------------------------------------- sample and threshold
def _sample_threshold(design, bug, delta, days, per_day, epsilon, **rate) -> RunPlan:
    epsilon = check_real(design, "epsilon", epsilon, 0.0, 50.0)
    rounds = days * per_day
    if design == "triehh":
        gamma = check_real(design, "gamma", rate["gamma"], 0.0, 1.0)
        try:
            run = run_rounds("triehh", epsilon=epsilon, n_days=days, rounds_per_day=per_day, delta=delta,
                             gamma=gamma, length=per_day, alphabet="ab")
        except ValueError as exc:         # no threshold reaches (ε, δ) over these rounds
            raise InputError(f"The triehh run audit over days × rounds_per_day = {days} × {per_day} rounds: "
                             f"{exc} Audit fewer rounds, or raise 'epsilon' or δ.") from None
        theta, claim = run.protocol.theta, run.epsilon
        source = f"TrieHH's run accountant (central (ε, δ) per device over {rounds} rounds)"
    else:
        gamma = check_real(design, "rate", rate["rate"], 0.0, 1.0, high_open=True)
        model = HardwareSampleThreshold(rate=gamma).tune_threshold(epsilon, 10**6, days, delta, per_day, "add-remove")
        if model is None:
            raise InputError(f"sample_threshold: no threshold reaches ε = {epsilon:g} at rate {gamma:g} over "
                             f"{rounds} rounds; raise 'epsilon' or lower 'rate'.")
        theta = model.threshold
        claim = run_epsilon(model, 10**6, days, delta, per_day, "add-remove")
        source = "trust accountant: sample_threshold ((ε, δ) per device over the run, add/remove)"
    votes = 1 + (TYPED - 1) * (bug == "threshold-before-bounding")     # the canary's votes a round
    release = SampleThreshold(gamma, theta)
    others = np.arange(theta - 1, theta - 1 + 8 * int(math.ceil(theta / gamma)) + 1)
    k = np.arange(1, rounds + 1)

    def run_sf(holders):                      # P[released in ≥ k of the rounds] for each (others, k)
        one = stats.binom.sf(theta - 1, holders, gamma)[:, None]
        return stats.binom.sf(k[None, :] - 1, rounds, one)

    sf_a, sf_b = run_sf(others + votes), run_sf(others)
    probe = _base(design, days, per_day, claim, "threshold-before-bounding", delta)
    bug_a = run_sf(others + TYPED)
    best = _best_index(probe, bug_a.ravel(), sf_b.ravel(), delta)       # (others, k): fewest runs to FAIL the bug
    m, at_least = int(others[best // rounds]), int(k[best % rounds])

    def draw(value, size, rng):
        hits = np.zeros(size, dtype=np.int64)
        for _ in range(rounds):               # m other holders; the canary's votes in world A
            hits += release.release(np.full(size, m + value * votes), rng) > 0
        return hits >= at_least

    return dataclasses.replace(
        probe, bug=bug, at_least=at_least, p_a=float(sf_a.ravel()[best]), p_b=float(sf_b.ravel()[best]),
        claim_source=source, draw=draw,
        one_report=f"the canary's word released in at least {at_least} of {rounds} rounds (θ = {theta}, "
                   f"γ = {gamma:g}, {m} other holders)")


# ------------------------------------------------------------------------------------------ local discovery
#: the canary's planted word (world A) and its neighbour (world B): every prefix differs
WORDS = ("ab", "ba")


def _pem(design, bug, delta, days, per_day, epsilon, length, pool) -> RunPlan:
    pem = make("pem", epsilon=check_real(design, "epsilon", epsilon, 0.0, 8.0), alphabet="ab", start=1,
               length=check_int(design, "length", length, low=2, high=8),
               pool=check_int(design, "pool", pool, low=1, high=1 << 12))
    rows, inv = pem.codec.symbols(list(WORDS))
    codes = pem.group_prefix_codes(rows)[inv]                                   # (2 words, G groups)
    hashed = pem.hash_codes(np.arange(pem.pool)[:, None, None], codes[None])     # (pool, 2, G)
    split = float(np.mean(hashed[:, 0] != hashed[:, 1]))    # P[H_s(x) ≠ H_s(x′)], group and s uniform
    return _one_report(design, bug, days, per_day, pem, (pem.p * split, pem.q * split), pem.groups,
                       f"report (group, s, y) with y = H_s({WORDS[0]!r}) ≠ H_s({WORDS[1]!r}) (pool {pem.pool}, "
                       f"g = {pem.g})")


def _sketched(design, bug, delta, days, per_day, epsilon, length, k, m) -> RunPlan:
    """TreeHist (level uniform, its prefix through the level's CMS) and SFP (the word's CMS and, at a uniform
    position, the fragment's CMS): a CMS report's log-ratio is log((1 − f)/f)·(d(x′) − d(x)), at most its ε
    = 2·log((1 − f)/f), reached iff h_row(x) ≠ h_row(x′), bit h(x) set and bit h(x′) clear: probability
    (1 − γ)(1 − f)² under x, (1 − γ)f² under x′ (γ the share of rows where they collide)."""
    epsilon = check_real(design, "epsilon", epsilon, 0.0, 8.0)
    length = check_int(design, "length", length, low=2 if design == "treehist" else 4, high=8)
    k, m = check_int(design, "k", k, low=1, high=1 << 12), check_int(design, "m", m, low=2, high=1 << 12)
    if design == "treehist":
        mech = make("treehist", epsilon=epsilon, length=length, alphabet="ab", k=k, m=m)
        rows, inv = mech.codec.symbols(list(WORDS))
        sketches = [(mech.cms, [mech.codec.prefix_codes(rows, level + 1)[inv] for level in range(mech.levels)])]
        groups, what = mech.levels, "the level's CMS report"
    else:
        mech = make("sfp", epsilon=epsilon, length=length, alphabet="ab", hash_bits=4, word_k=k, word_m=m,
                    fragment_k=k, fragment_m=m)
        rows, inv = mech.codec.symbols(list(WORDS))
        codes, tokens = mech.word_tokens(rows)
        sketches = [(mech.word_cms, [codes[inv]]), (mech.fragment_cms, [tokens[inv, j] for j in range(mech.positions)])]
        groups, what = 1, "the word's and the position's fragment CMS reports"
    p_a = p_b = 1.0
    for cms, pairs in sketches:         # independent parts: the probabilities multiply
        split = float(np.mean([1.0 - cms.collision_fractions(pair)[0, 1] for pair in pairs]))
        p_a, p_b = p_a * split * (1 - cms.flip) ** 2, p_b * split * cms.flip ** 2
    return _one_report(design, bug, days, per_day, mech, (p_a, p_b), groups,
                       f"{what} at its largest log-ratio for {WORDS[0]!r} over {WORDS[1]!r} (k = {k}, m = {m})")


def _one_report(design, bug, days, per_day, mech, p_one, groups, one_report) -> RunPlan:
    """A discovery protocol that sends one report per device per run (a run a day): S the report's
    likelihood-ratio region at the sum of its :meth:`privacy_parts` (its own ``log_likelihood``), the claim
    that sum composed over the D runs; planted: per group (÷ G groups or levels) or the fragment part
    uncharged."""
    if per_day != 1:
        raise InputError(f"The {design} run audit sends one report a run (a day): 'rounds_per_day' must be 1. "
                         f"Got {per_day}.")
    parts = mech.privacy_parts()
    per_run = sum(parts.values())          # ε of the device's one report of the run
    claims = {None: days * per_run, "claimed-per-group": days * per_run / groups,
              "fragment-uncharged": days * parts.get("word", per_run)}
    source = {None: f"{design}'s privacy_parts ({' + '.join(parts)}): one report per device per run, {days} run(s)",
              "claimed-per-group": f"planted accountant: the device's ε split over its {groups} groups",
              "fragment-uncharged": "planted accountant: the word part charged, the fragment part not"}
    ratio = per_run - 1e-9

    def event(reports):
        n = reports[-1].shape[0]
        return mech.log_likelihood(reports, np.full(n, WORDS[0])) - mech.log_likelihood(
            reports, np.full(n, WORDS[1])) >= ratio

    def perturb(values, rng):              # value 1: the planted word; 0: its neighbour
        return mech.perturb(np.where(values == 1, WORDS[0], WORDS[1]), rng)

    target = claims["fragment-uncharged" if "fragment-uncharged" in design_bugs(design) else "claimed-per-group"]
    return _binomial(design, days, per_day, claims[bug], target, source[bug], bug, p_one, perturb, event,
                     one_report, 1, 0)


def _prefix_tree(design, bug, delta, days, per_day, epsilon) -> RunPlan:
    epsilon = check_real(design, "epsilon", epsilon, 0.0, 50.0)
    if per_day < 2:
        raise InputError(f"The prefix_tree run audit needs words of at least 2 symbols: 'rounds_per_day' must be "
                         f"≥ 2. Got {per_day}.")
    run = run_rounds("prefix_tree", epsilon=epsilon, n_days=days, rounds_per_day=per_day, length=per_day,
                     alphabet="ab")
    short = sum(e for e, _ in run.steps[:-1])               # the planted accountant: one round not charged
    claim, source = ((short, "planted accountant: one round not charged") if bug else
                     (run.epsilon, f"the prefix tree's run accountant (ε per device over {run.rounds} rounds)"))
    plan = plan_for(run.protocol.oracle(1))                 # the round's OUE over the canary's prefix and "none"
    return _binomial(design, days, per_day, claim, short, source, bug, (plan.p_x, plan.p_x_prime),
                     plan.client or run.protocol.oracle(1).perturb, plan.event, plan.description, plan.x,
                     plan.x_prime)


def _binomial(design, days, per_day, claim, target, source, bug, p_one, perturb, event, one_report, x, x_prime):
    """The plan of n = D·R independent reports of the canary, event "at least k in S" (k: fewest trials to
    refute ``target``, the planted claim), exact law P[Bin(n, p) ≥ k] against P[Bin(n, p′) ≥ k]."""
    n = days * per_day
    check_reach(design, target, n)
    k = joint_k(*p_one, target, n)
    p_a, p_b = (float(stats.binom.sf(k - 1, n, p)) for p in p_one)
    return RunPlan(design, days, per_day, x, x_prime, k, p_a, p_b, float(claim), source, one_report, bug,
                   p_one, perturb, event)


# ------------------------------------------------------------------------------------------------ helpers
def _base(design, days, per_day, claim, bug, delta) -> RunPlan:
    return RunPlan(design, days, per_day, 1, 0, 0, math.nan, math.nan, float(claim), "", "", bug,
                   (math.nan, math.nan), None, None, delta=delta)


def _sf(pmf: np.ndarray) -> np.ndarray:
    """P[X ≥ k] for k = 0 … len − 1."""
    return np.minimum(np.cumsum(pmf[::-1])[::-1], 1.0)


def _tightest_index(sf_a: np.ndarray, sf_b: np.ndarray, delta: float) -> int:
    """The event of largest exact ratio ln((P[S|A] − δ)/P[S|B]) among those an audit of about 10⁶ runs
    resolves: P[S|A] ≥ 2δ and P[S|B] ≥ :data:`RESOLVED` (the honest design's event, no bug to aim at)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where((sf_a >= 2 * delta) & (sf_b >= RESOLVED), np.log((sf_a - delta) / sf_b), -np.inf)
    return int(np.argmax(ratio))


def _best_index(probe: RunPlan, sf_a: np.ndarray, sf_b: np.ndarray, delta: float) -> int:
    """The event (index into the exact laws ``sf_a``, ``sf_b``) with the fewest trials for ``probe``'s claim to
    FAIL (:func:`~ldpsim.evaluation.audit.run_audit.trials_to_fail`): among the events with P[S|A] ≥ 2δ whose ratio exceeds the
    claim, the 40 with the smallest delta-method cost (1/P[S|A] + 1/P[S|B])/(ratio − claim)² are tried;
    when none exceeds it, :func:`_tightest_index`."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.log((sf_a - delta) / sf_b)
        proxy = (1 / sf_a + np.where(sf_b > 0, 1 / sf_b, 0.0)) / (np.minimum(ratio, 50.0) - probe.claim) ** 2
    usable = np.flatnonzero((sf_a >= 2 * delta) & (ratio > probe.claim))
    if usable.size == 0:            # no event can refute it: the tightest event (trials_to_fail says "never")
        return _tightest_index(sf_a, sf_b, delta)
    usable = usable[np.argsort(proxy[usable])[:40]]
    cost = [trials_to_fail(dataclasses.replace(probe, p_a=float(sf_a[i]), p_b=float(sf_b[i]))) for i in usable]
    return int(usable[int(np.argmin(cost))])
