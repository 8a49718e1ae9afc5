"""Audit plans for the mechanisms of this package: the input pair, the event, its exact probabilities.

A plan fixes, before any trial, the neighbouring inputs x, x′ and the output event S with the largest
likelihood ratio the mechanism claims, P[S|x] / P[S|x′] = e^ε (docs/math.md §7.5). ``event(reports)``
tests S on real reports of the mechanism's client (the *sample* mode audits the implementation);
``p_x``, ``p_x_prime`` are the mechanism's own probabilities of S (the *declared* mode draws the two counts
from Binomial(N, p) directly, which checks the claimed math at any N in microseconds).

Events ("supports x and not x′", the distinguishing attack of Arcolezi & Gambs 2024):

* GRR, RR, URR, SDGRR (keep-or-uniform): the single output y and pair (x, x′) maximising
  P[y|x]/P[y|x′] over the pairs and outputs the mechanism's definition covers (URR: sensitive outputs
  only — ULDP; SDGRR: two high inputs, or any inputs on a high output — SDLDP);
* unary encodings (OUE, SUE, THE): bit x set and bit x′ clear: p(1−q) vs q(1−p);
* OLH, BLH: H_s(x) = y ≠ H_s(x′): (1−1/g)·p vs (1−1/g)·q (ideal hash: P[H_s(x) ≠ H_s(x′)] = 1 − 1/g);
  FLH: the same with the pool's exact share of functions separating x, x′;
* CMS: bit h_j(x) is +1 and bit h_j(x′) is −1: c(1−f)² vs c·f², c the share of rows where x, x′ differ;
* HCMS: w̃ = H[l, h_j(x)] ≠ H[l, h_j(x′)]: (c/2)(1−f′) vs (c/2)·f′;
* PM, SDPM (pair 1, −1, both high for SDPM): report in [1, C] = the window of x = 1: p(C−1) vs q(C−1);
* SW (pair 1, −1): report in [|1 − w|, C], in x = 1's window and outside x = −1's: p(C − |1 − w|) vs q(…);
* PersonalizedSDGRR / PersonalizedSDPM, target "group<g>": a user who chose group g is audited with the
  SDGRR / SDPM plan of that group's partition / low range (the ε-SDLDP that group is promised), on
  reports of the personalized client with every user in group g; S also requires the clear group g;
* SHE, 1BitMean, RAPPOR (one report and ε_∞): :mod:`.plans_deployed`; SFP, PEM, TreeHist (the whole
  report against the composed ε): :mod:`.plans_discovery`; one round of an interactive protocol
  (TrieHH, TrieHH++: central (ε, δ(ε)) at the worst neighbouring fleets, and "below-threshold";
  LDPTrie: one report, ε-LDP): :mod:`.plans_interactive`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ldpsim.evaluation.audit.event import AuditPlan, differ_share, packed_bit, sketch_pair_event
from ldpsim.evaluation.audit.plans_deployed import one_bit_mean_plan, rappor_plan, she_plan
from ldpsim.evaluation.audit.plans_discovery import pem_plan, sketch_walk_plan, sfp_plan
from ldpsim.evaluation.audit.plans_interactive import (below_threshold_plan, is_local_round, is_threshold_round,
                                                       local_round_plan, threshold_round_plan)
from ldpsim.mechanisms import (CMS, FLH, HCMS, OLH, PEM, PM, RAPPOR, SDPM, SDGRR, SFP, SHE, SW, URR, OneBitMean,
                               PersonalizedSDGRR, PersonalizedSDPM, TreeHist)
from ldpsim.mechanisms.sketches.hcms import hadamard_sign
from ldpsim.mechanisms.frequency.mixture import KeepOrUniform
from ldpsim.mechanisms.frequency.unary import UnaryEncoding

__all__ = ["AuditPlan", "packed_bit", "plan_for", "plan_targets"]


def _keep_or_uniform(mech: KeepOrUniform) -> AuditPlan:
    T = mech.transition_matrix()
    d = mech.domain_size
    best = (-np.inf, 0, 1, 0)
    for y in range(d):
        if isinstance(mech, URR) and y not in mech.sensitive:
            continue  # ULDP constrains sensitive outputs only
        inputs = np.arange(d)
        if isinstance(mech, SDGRR) and y not in mech.high:
            inputs = np.array(mech.high)  # SDLDP: low outputs constrain pairs of high inputs only
        col = T[inputs, y]
        # first of (numerically) tied inputs, so the pair does not hinge on rounding (same pair at every ε)
        hi, lo = int(np.argmax(col >= col.max() * (1 - 1e-12))), int(np.argmax(col <= col.min() * (1 + 1e-12)))
        ratio = np.log(col[hi]) - np.log(col[lo]) if col[lo] > 0 else np.inf
        if ratio > best[0]:
            best = (ratio, int(inputs[hi]), int(inputs[lo]), y)
    _, x, xp, y = best
    return AuditPlan(x, xp, f"report == {y}", lambda r: np.asarray(r) == y, float(T[x, y]), float(T[xp, y]))


def _unary(mech: UnaryEncoding) -> AuditPlan:
    p, q = mech.p, mech.q
    return AuditPlan(0, 1, "bit 0 set, bit 1 clear",
                     lambda r: (packed_bit(r, 0) == 1) & (packed_bit(r, 1) == 0), p * (1 - q), q * (1 - p))


def _olh(mech: OLH) -> AuditPlan:
    def event(r):
        return (mech.hash_items(r.seed, 0) == r.y) & (mech.hash_items(r.seed, 1) != r.y)
    share = 1 - 1 / mech.g
    return AuditPlan(0, 1, "H_s(0) = y != H_s(1)", event, share * mech.p, share * mech.q)


def _cms(mech: CMS) -> AuditPlan:
    key, key_p = mech.family.keys([0, 1])

    def event(r):
        return sketch_pair_event(mech.family, r.bits, r.row, key, key_p)
    c, f = differ_share(mech.family, key, key_p), mech.flip
    return AuditPlan(0, 1, "bit h_j(0) = +1, bit h_j(1) = -1", event, c * (1 - f) ** 2, c * f * f)


def _hcms(mech: HCMS) -> AuditPlan:
    def event(r):
        s0 = hadamard_sign(r.col, mech.family.hash_values(r.row, np.zeros(r.row.size, dtype=np.int64)))
        s1 = hadamard_sign(r.col, mech.family.hash_values(r.row, np.ones(r.row.size, dtype=np.int64)))
        w = 2 * r.bit.astype(np.int64) - 1
        return (w == s0) & (s0 != s1)
    c, f = differ_share(mech.family, *mech.family.keys([0, 1])), mech.flip
    return AuditPlan(0, 1, "w = H[l, h_j(0)] != H[l, h_j(1)]", event, c / 2 * (1 - f), c / 2 * f)


def _flh(mech: FLH) -> AuditPlan:
    """Local hashing over a fixed pool: y = H_j(0) ≠ H_j(1), exact given the pool (not an ideal hash)."""
    H = mech.hash_table([0, 1])
    share = float(np.mean(H[:, 0] != H[:, 1]))

    def event(r):
        h, h_p = H[r.index, 0], H[r.index, 1]
        return (r.y == h) & (h != h_p)
    return AuditPlan(0, 1, "y = H_j(0) != H_j(1) (pool function j)", event, share * mech.p, share * mech.q)


def _piecewise(mech) -> AuditPlan:
    pm = mech.pm if isinstance(mech, SDPM) else mech
    if isinstance(mech, SDPM) and (mech.is_low(1.0) or mech.is_low(-1.0)):
        raise ValueError(f"{mech.name}: the audit pair (1, -1) must be two high-sensitivity inputs; "
                         f"got low range {mech.low}.")
    width = pm.C - 1
    return AuditPlan(1.0, -1.0, f"report >= 1 (window of x = 1, [1, {pm.C:.4g}])",
                     lambda r: np.asarray(r) >= 1.0, pm.p * width, pm.q * width)


def _square_wave(mech: SW) -> AuditPlan:
    """Pair (1, −1): report ≥ |1 − w|, inside x = 1's window and outside x = −1's (docs/math.md §2.5)."""
    t = abs(1.0 - mech.w)
    width = mech.C - t
    return AuditPlan(1.0, -1.0, f"report >= {t:.4g} (window of x = 1 only)",
                     lambda r: np.asarray(r) >= t, mech.p * width, mech.q * width)


def _best_ratio(P: np.ndarray) -> tuple[int, int, int]:
    """(x, x′, r) maximising P[x, r] / P[x′, r] over a row-stochastic matrix (rows inputs, columns outputs)."""
    hi, lo = P.argmax(axis=0), P.argmin(axis=0)
    cols = np.arange(P.shape[1])
    with np.errstate(divide="ignore"):
        ratio = np.log(P[hi, cols]) - np.log(P[lo, cols])
    r = int(np.argmax(ratio))
    return int(hi[r]), int(lo[r]), r


def _transition(mech) -> AuditPlan:
    """Any oracle with a finite transition matrix: the single output with the largest ratio."""
    P = mech.transition_matrix()
    x, xp, y = _best_ratio(P)
    return AuditPlan(x, xp, f"report == {y}", lambda r: np.asarray(r) == y, float(P[x, y]), float(P[xp, y]))


def _enumerated(mech) -> AuditPlan:
    """Any oracle with enumerable reports (``all_reports``, ``report_distribution``): the single whole
    report with the largest ratio, recognised by its wire form."""
    P = mech.report_distribution()
    x, xp, r = _best_ratio(P)
    width = mech.report_bytes
    ref = np.frombuffer(mech.encode(_take(mech.all_reports(), r)), dtype=np.uint8)

    def event(reports):
        rows = np.frombuffer(mech.encode(reports), dtype=np.uint8).reshape(-1, width)
        return (rows == ref).all(axis=1)
    return AuditPlan(x, xp, f"report #{r} of the enumerated reports", event, float(P[x, r]), float(P[xp, r]))


def _take(reports, r: int):
    if isinstance(reports, tuple):  # a NamedTuple of arrays
        return type(reports)(*(np.asarray(a)[r:r + 1] for a in reports))
    return np.asarray(reports)[r:r + 1]


def _personalized(mech, target: str) -> AuditPlan:
    g = int(target[len("group"):])
    inner = plan_for(mech.groups[g] if isinstance(mech, PersonalizedSDGRR) else mech.ems[g].mechanism)

    def event(r):
        return inner.event(r.y) & (np.asarray(r.group) == g)

    def client(values, rng):
        return mech.perturb(values, np.full(len(values), g), rng)
    return AuditPlan(inner.x, inner.x_prime, f"group == {g} and {inner.description}", event, inner.p_x,
                     inner.p_x_prime, claim=inner.claim, client=client)


#: (class, plan maker); makers with targets take (mech, target)
_PLANS = ((KeepOrUniform, _keep_or_uniform), (UnaryEncoding, _unary), (OLH, _olh), (FLH, _flh), (CMS, _cms),
          (HCMS, _hcms), (SDPM, _piecewise), (PM, _piecewise), (SW, _square_wave), (SHE, she_plan), (OneBitMean, one_bit_mean_plan),
          (SFP, sfp_plan), (PEM, pem_plan), (TreeHist, sketch_walk_plan))
_TARGETED = ((RAPPOR, rappor_plan), (PersonalizedSDGRR, _personalized), (PersonalizedSDPM, _personalized))


def plan_targets(mech) -> tuple[str, ...]:
    """What can be audited of ``mech``: RAPPOR ("report": one report against ε₁, "permanent": the
    permanent response against ε_∞), the personalized mechanisms ("group0", "group1", …: a user of that
    group against the ε its partition/range promises), a sample-and-threshold round ("worst": the worst
    neighbouring fleets of the exact analysis, "below-threshold": a prefix under θ holders released);
    ("",) for every other mechanism (one plan)."""
    if isinstance(mech, RAPPOR):
        return ("report", "permanent")
    if isinstance(mech, (PersonalizedSDGRR, PersonalizedSDPM)):
        return tuple(f"group{g}" for g in range(mech.n_groups))
    if is_threshold_round(mech):
        return ("worst", "below-threshold")
    return ("",)


def plan_for(mech, target: str | None = None, epsilon: float | None = None) -> AuditPlan:
    """The audit plan of one of this package's mechanisms; ValueError for those without one.

    Parameters
    ----------
    mech : Mechanism
        Any mechanism of the registry.
    target : str, optional
        One of :func:`plan_targets` (default: the first).
    epsilon : float, optional
        The ε at which a sample-and-threshold round's (ε, δ(ε)) is audited (its δ is the exact one of
        docs/math.md §10.2; default 1); other mechanisms carry their own ε.

    Returns
    -------
    AuditPlan
        With ``claim`` set (the mechanism's ε unless the plan states another).

    Specific plans first (table above); then any oracle with a transition matrix, then any with
    enumerable reports (HR, dBitFlip, ...): the single output of largest ratio.
    """
    targets = plan_targets(mech)
    target = targets[0] if target is None else target
    if target not in targets:
        raise ValueError(f"The 'target' parameter of plan_for({type(mech).__name__}) must be one of "
                         f"{list(targets)}. Got {target!r} instead.")
    if is_threshold_round(mech):
        make = threshold_round_plan if target == "worst" else below_threshold_plan
        plan = make(mech, 1.0 if epsilon is None else float(epsilon))
    elif is_local_round(mech):
        plan = local_round_plan(mech)
    else:
        plan = _make_plan(mech, target)
    if plan.claim is None:
        plan = replace(plan, claim=float(mech.epsilon))
    return replace(plan, target=target)


def _make_plan(mech, target: str) -> AuditPlan:
    for cls, make in _TARGETED:
        if isinstance(mech, cls):
            return make(mech, target)
    for cls, make in _PLANS:
        if isinstance(mech, cls):
            return make(mech)
    if hasattr(mech, "transition_matrix"):
        return _transition(mech)
    if hasattr(mech, "report_distribution") and hasattr(mech, "all_reports"):
        return _enumerated(mech)
    raise ValueError(f"No audit plan for {type(mech).__name__}: supported are "
                     f"{sorted(c.__name__ for c, _ in _PLANS + _TARGETED)} and their subclasses, and "
                     f"oracles with a transition matrix or enumerable reports.")
