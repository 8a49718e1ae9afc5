"""The whole-run audit of the memoized designs: keyed memoization of GRR, RAPPOR's permanent response, dBitFlip's
and 1BitMean's memoized responses — docs/math.md §11.9.

A memoized use case (``memoize = true``) sends, for each value, a report drawn once per device and value: the
simulator's keyed report of GRR (``grr_memo``: every report a deterministic function of hash(device key,
value), :func:`~ldpsim.mechanisms.memo.keyed_perturb`), RAPPOR's own permanent response with a fresh
instantaneous response on every report (``rappor``), dBitFlip's own memoized responses over two buckets, both
sampled (``dbitflip_memo``), or 1BitMean's memoized bit of the α-rounded level of a reading, the counter's ends m
and 0 at granularity 1 (``onebitmean_memo``: levels 1 and 0, two memo classes; each through the mechanism's
``perturb_memoized``). The canary is one device: the
same device key in every round of a run, a fresh key per run (trial); its client is the design's device
client (:func:`~ldpsim.evaluation.audit.repeated.device_client`).

The accountant (:func:`~ldpsim.evaluation.privacy.accountant.device_spend`) charges a memoized use case its
worst spread of the n = D·R reports over the memo classes — with the two values x, x′ two classes,
max over r of ε(r) + ε(n − r), ε(r) = ``memoized_loss(r)`` (GRR, dBitFlip: ε for any r ≥ 1; RAPPOR: its exact
loss; dBitFlip's accountant counts its d + 1 = 3 classes, 3ε, above the 2ε two values reach: not tight).
That number (``epsilon_device``) compares two histories with the **same repetition pattern**; the audited
pair is therefore world A: x in the first r₁ rounds and x′ in the last r₂ = n − r₁, world B: x′ then x, r₁ the
accountant's costliest split. The halves come from independent memos (of x and of x′), so the true loss is
exactly ε(r₁) + ε(r₂), the claim itself (GRR, RAPPOR). Event: "at least k₁ of the first r₁ reports in S(x, x′)
and at least k₂ of the last r₂ in S(x′, x)", S(u, v) the one-report event of the mechanism's plan for u over v
(GRR: the report is u; dBitFlip: the bit of u's bucket 1, of v's 0; RAPPOR: the device's cohort separates them,
u's Bloom bits reported 1 and v's 0).
Its exact law is a mixture over the memoized responses: per half, the whole-report memo is in S or not
(GRR: p·p under A, q·q under B, for any k ≥ 1; dBitFlip the same), RAPPOR's halves follow
:func:`~ldpsim.evaluation.audit.repeated._rappor_joint` given the device's (shared) cohort, so
P = J(r₁, k₁)·J(r₂, k₂)/share. (k₁, k₂) is fixed before any trial from these laws: the fewest runs to FAIL
the design's accounting bug (the honest design is audited on that event too).

Planted bugs:

* ``redrawn-memo`` — the device forgets its key and redraws its "permanent" response on every report
  (:func:`~ldpsim.evaluation.audit.planted.redrawing_client`): the n reports are independent one-report
  draws, P = P[Bin(r₁, a) ≥ k₁]·P[Bin(r₂, a) ≥ k₂] with a = P[S|x] of one report (b = P[S|x′] under B);
  composes to n·ε₁ against the memoized claim;
* ``one-class-charged`` (``grr_memo``, ``dbitflip_memo``) — the accountant charges one memo class for a device
  that reports two values (claim ε(n) = ε);
* ``report-loss-per-class`` (``rappor``) — the accountant charges one report's ε₁ per memo class instead of
  the memoized loss ε(r) (claim 2·ε₁);
* ``claimed-per-pattern`` — the same-pattern number judged as if it bounded a person. ``grr_memo``,
  ``dbitflip_memo``: world A alternates x, x′, x, … and world B repeats x. Event "not every report is the first
  one": under pure memoization impossible when the value repeats (P[S|B] = 0), P[S|A] = P[R(x) ≠ R(x′)], so the
  person-level ε is infinite (docs/math.md §8.6) and any finite claim FAILS with a few dozen runs. ``rappor``:
  world A the honest pair's, world B x in every round (one permanent response), event E(k₁, k₂) with the law
  :func:`~ldpsim.evaluation.audit.run_memo_laws.repeated_rappor_law`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ldpsim.evaluation.audit.planted import redrawing_client
from ldpsim.evaluation.audit.repeated import device_client
from ldpsim.evaluation.audit.run_memo_laws import differ_probability, event_laws, one_report, repeated_rappor_law
from ldpsim.evaluation.audit.run_audit import RunPlan, check_reach, trials_to_fail
from ldpsim.evaluation.privacy.accountant import device_spend, losses
from ldpsim.evaluation.privacy.composition import basic_composition
from ldpsim.evaluation.privacy.person_level import SAME_PATTERN
from ldpsim.mechanisms import RAPPOR, make
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.memo import device_keys
from ldpsim.mechanisms.registry import takes, typical
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.run_catalog import PLANS
from ldpsim.simulator.config import DeploymentConfig, UseCase

#: the memoized designs: design → the registry's mechanism its memoized use case runs
MEMO = {"grr_memo": "grr", "rappor": "rappor", "dbitflip_memo": "dbitflip", "onebitmean_memo": "onebitmean"}
#: events whose delta-method cost is smallest, tried exactly by :func:`trials_to_fail`
TRIED = 20


def memo_params(design: str, epsilon: float, **shape) -> dict:
    """The mechanism parameters of ``design``'s use case: the registry's typical shape at domain size 2 (two
    values x, x′) under ``shape`` (RAPPOR: its instantaneous p, q; 1BitMean: its granularity) and ``epsilon``
    (ε_∞ for RAPPOR, ε of one report for GRR, dBitFlip and 1BitMean)."""
    name = MEMO[design]
    params = typical(name)
    if takes(name, "domain_size"):
        params["domain_size"] = 2
    return {**params, **shape, "epsilon": epsilon}


def memo_claim(design: str, days: int, per_day: int, epsilon: float, **shape) -> float:
    """The accountant's ε per device over the run of the memoized use case (``epsilon_device``, same repetition
    pattern, δ = 0): a deployment with the two items x, y, ``per_day`` reports a day for ``days`` days."""
    uc = memo_use_case(design, per_day, epsilon, **shape)
    cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=days)
    return device_spend(cfg).total(uc.guarantee.label, "epsilon_device")


def memo_use_case(design: str, per_day: int, epsilon: float, **shape) -> UseCase:
    """The memoized use case of ``design``, ``per_day`` reports a day: an event over the two items, or
    (1BitMean) a reading whose memo class is its α-point-rounded level (docs/math.md §7.3)."""
    params = tuple(memo_params(design, epsilon, **shape).items())
    if MEMO[design] == "onebitmean":
        return UseCase("typing_speed", "reading", "onebitmean", params, daily_limit=per_day, value_range=(0.0, 1.0),
                       memoize=True)
    return UseCase("planted", "event", MEMO[design], params, daily_limit=per_day, memoize=True)


def costliest_split(mech, n: int) -> int:
    """r₁ of the accountant's costliest spread of ``n`` reports over two memo classes,
    argmax over 1 ≤ r < n of ε(r) + ε(n − r) (ties: the r nearest n/2)."""
    order = sorted(range(1, n), key=lambda r: (abs(2 * r - n), r))
    return max(order, key=lambda r: mech.memoized_loss(r) + mech.memoized_loss(n - r))


def memo_plan(design, bug, delta, days, per_day, epsilon, **shape) -> RunPlan:
    """The run audit of the memoized ``design`` (module docstring).

    Parameters
    ----------
    design : str
        A key of :data:`MEMO`.
    bug : str or None
        One of the design's planted bugs (:data:`~ldpsim.scenarios.studies.audit.run_catalog.PLANS`).
    delta : float
        Unused: the memoized designs' claims are pure (δ = 0).
    days, per_day : int
        D and R (checked by the caller); n = D·R ≥ 2.
    epsilon : float
        The mechanism's ``epsilon`` (ε of one report for GRR and dBitFlip, ε_∞ for RAPPOR).
    **shape
        RAPPOR's instantaneous ``p``, ``q`` in [0, 1].

    Returns
    -------
    RunPlan
        With the design's own ``draw`` and the exact P[S|A], P[S|B] of the audited client.

    Raises
    ------
    InputError
        A run of one report, or a parameter out of range.
    """
    epsilon = check_real(design, "epsilon", epsilon, 0.0, 20.0)
    n = days * per_day
    if n < 2:
        raise InputError(f"The {design} run audit needs at least two reports (two memo classes): days × "
                         f"rounds_per_day must be ≥ 2. Got {days} × {per_day}.")
    shape = {k: check_int(design, k, v, low=1, high=1 << 20) if k == "granularity" else
             check_real(design, k, v, 0.0, 1.0, low_open=False, high_open=False) for k, v in shape.items()}
    mech = make(MEMO[design], **memo_params(design, epsilon, **shape))
    claim = memo_claim(design, days, per_day, epsilon, **shape)
    r1 = costliest_split(mech, n)
    one = one_report(mech)
    undercharged = {"one-class-charged": basic_composition(e * c for e, c in losses(mech, n, 1).items()),
                    "report-loss-per-class": 2 * mech.guarantee.epsilon_report}
    accounting = next(b for b in undercharged if b in PLANS[design][0])
    claims = {None: claim, "redrawn-memo": claim, "claimed-per-pattern": claim, accounting: undercharged[accounting]}
    source = {None: f"accountant: {MEMO[design]} memoized, ε per device over the run ({SAME_PATTERN})",
              "redrawn-memo": f"accountant ({SAME_PATTERN}); planted client: the memo redrawn every report",
              "one-class-charged": "planted accountant: one memo class charged for two values",
              "report-loss-per-class": "planted accountant: one report's ε₁ per memo class, not its memoized loss",
              "claimed-per-pattern": f"planted scope: the accountant's number ({SAME_PATTERN}) judged per person"}
    check_reach(design, claims[bug], n)
    base = RunPlan(design, days, per_day, 1, 0, 0, math.nan, math.nan, float(claims[bug]), source[bug], "", bug,
                   (one.a, one.b), None, None, delta=0.0,
                   scope="" if bug == "claimed-per-pattern" else SAME_PATTERN)
    if bug == "claimed-per-pattern" and not isinstance(mech, RAPPOR):
        return _pattern_plan(base, mech, one, n)
    honest = event_laws(mech, one, n, r1, redrawn=False)
    law = honest
    if bug == "redrawn-memo":
        law = event_laws(mech, one, n, r1, redrawn=True)
    elif bug == "claimed-per-pattern":                        # RAPPOR: B repeats x, one permanent response
        law = (honest[0], repeated_rappor_law(mech, one, n, r1))
    k1, k2 = _fewest(base, *law) if bug else _fewest(dataclasses.replace(base, claim=claims[accounting]), *honest)
    client = redrawing_client(mech) if bug == "redrawn-memo" else device_client(mech)
    seqs = {1: [one.x] * r1 + [one.x_prime] * (n - r1),     # B: the swap, or (RAPPOR's scope bug) x repeated
            0: [one.x] * n if bug == "claimed-per-pattern" else [one.x_prime] * r1 + [one.x] * (n - r1)}

    def draw(value, size, rng):
        keys = device_keys(size, rng)                  # one device key a run, kept over all its rounds
        first, second = np.zeros(size, np.int64), np.zeros(size, np.int64)
        for r, token in enumerate(seqs[value]):
            reports = client(np.full(size, token), keys, rng)
            if r < r1:
                first += one.s_x(reports)
            else:
                second += one.s_x_prime(reports)
        return (first >= k1) & (second >= k2)

    return dataclasses.replace(
        base, at_least=k1 + k2, p_a=float(law[0][k1 - 1, k2 - 1]), p_b=float(law[1][k1 - 1, k2 - 1]), draw=draw,
        one_report=f"A: {one.x!r} × {r1} then {one.x_prime!r} × {n - r1}, "
                   f"B {f'{one.x!r} × {n}' if bug == 'claimed-per-pattern' else 'swapped'}; at least {k1} of the first "
                   f"{r1} reports in S({one.x!r}) and {k2} of the last {n - r1} in S({one.x_prime!r}); S: {one.what}")


def _fewest(probe: RunPlan, p_a: np.ndarray, p_b: np.ndarray) -> tuple[int, int]:
    """(k₁, k₂) with the fewest runs to FAIL ``probe``'s claim (:func:`trials_to_fail`) under the law
    ``p_a``, ``p_b``: the :data:`TRIED` events above the claim of smallest delta-method cost
    (1/P[S|A] + 1/P[S|B])/(ratio − claim)², tried exactly; without any, the event of largest ratio."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(p_a / p_b)
        proxy = (1 / p_a + 1 / p_b) / (ratio - probe.claim) ** 2
    usable = np.flatnonzero((p_a > 0) & (p_b > 0) & (ratio > probe.claim))
    if usable.size == 0:
        best = int(np.nanargmax(np.where(p_b > 0, ratio, -np.inf)))
    else:
        tried = usable[np.argsort(proxy.ravel()[usable])[:TRIED]]
        cost = [trials_to_fail(dataclasses.replace(probe, p_a=float(p_a.flat[i]), p_b=float(p_b.flat[i])))
                for i in tried]
        best = int(tried[int(np.argmin(cost))])
    k1, k2 = np.unravel_index(best, p_a.shape)
    return int(k1) + 1, int(k2) + 1


def _pattern_plan(base: RunPlan, mech, one, n: int) -> RunPlan:
    """``claimed-per-pattern``: world A alternates x, x′, …; world B repeats x. Event: some report differs
    from the first — impossible under B (pure memoization), P[R(x) ≠ R(x′)] under A (:func:`differ_probability`)."""
    client = device_client(mech)
    seqs = {1: [(one.x, one.x_prime)[r % 2] for r in range(n)], 0: [one.x] * n}

    def draw(value, size, rng):
        keys = device_keys(size, rng)
        first = client(np.full(size, seqs[value][0]), keys, rng)
        differ = np.zeros(size, dtype=bool)
        for token in seqs[value][1:]:
            differ |= _differs(client(np.full(size, token), keys, rng), first)
        return differ

    return dataclasses.replace(
        base, at_least=1, p_a=differ_probability(mech, one), p_b=0.0, draw=draw,
        one_report=f"A: {one.x!r}, {one.x_prime!r} alternating; B: {one.x!r} every round; "
                   f"some of the {n} reports differs from the first")


def _differs(reports, others) -> np.ndarray:
    """Per row, whether two batches of reports differ (every field of a NamedTuple of arrays compared)."""
    fields = zip(reports, others) if isinstance(reports, tuple) else ((reports, others),)
    return np.any([(np.asarray(a) != np.asarray(b)).reshape(len(np.asarray(a)), -1).any(axis=1)
                   for a, b in fields], axis=0)
