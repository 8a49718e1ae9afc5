"""The exact laws of the memoized designs' whole-run events — docs/math.md §11.9.

The audited pair (:mod:`ldpsim.scenarios.studies.audit.run_memo`): world A holds x in the first r₁ rounds and x′
in the last r₂ = n − r₁, world B x′ then x. The event "at least k₁ of the first r₁ reports in S(x, x′) and at
least k₂ of the last r₂ in S(x′, x)" has, under a memoizing client, a law that mixes over the memoized responses
of x and x′ (independent: each is keyed by the device and the value); under a client that redraws its memo on
every report, independent one-report draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from ldpsim.evaluation.audit.event import packed_bit
from ldpsim.evaluation.audit.plans import plan_for
from ldpsim.evaluation.audit.plans_deployed import _rappor_pair
from ldpsim.evaluation.audit.repeated import _rappor_joint
from ldpsim.mechanisms import RAPPOR, DBitFlip, OneBitMean
from ldpsim.runtime.errors import InputError


@dataclass(frozen=True)
class OneReport:
    """The one-report events of the pair: S(x, x′) (``s_x``) and S(x′, x) (``s_x_prime``), a = P[S(x, x′)|x] =
    P[S(x′, x)|x′] and b = P[S(x, x′)|x′] = P[S(x′, x)|x] of one report drawn afresh (its cohort too), and
    ``share``: the probability that a device's (fixed) cohort separates x and x′ (1 without cohorts)."""

    x: object
    x_prime: object
    s_x: Callable
    s_x_prime: Callable
    a: float
    b: float
    share: float
    what: str


def one_report(mech) -> OneReport:
    """The pair x, x′ and the one-report events of ``mech`` (GRR over two values: the report is the value;
    dBitFlip over two buckets, both sampled: the bits (1, 0) or (0, 1); RAPPOR:
    :func:`~.plans_deployed.rappor_plan`'s tokens and cohorts)."""
    if isinstance(mech, RAPPOR):
        x, x_prime, pos, pos_p, good = _rappor_pair(mech)
        plan = plan_for(mech, "report")

        def separated(reports, own, other):
            c = np.asarray(reports.cohort)
            hit = good[c].copy()
            for l in range(mech.num_hashes):
                hit &= (packed_bit(reports.bits, own[c, l]) == 1) & (packed_bit(reports.bits, other[c, l]) == 0)
            return hit
        return OneReport(x, x_prime, lambda r: separated(r, pos, pos_p), lambda r: separated(r, pos_p, pos),
                         plan.p_x, plan.p_x_prime, float(good.mean()), plan.description)
    plan = plan_for(mech)
    if isinstance(mech, DBitFlip):    # two buckets, both sampled: the bit of u's bucket 1, of v's 0
        if (mech.domain_size, mech.d) != (2, 2):
            raise InputError(f"The memoized dBitFlip run audit takes domain_size = 2 and d = 2 (both buckets "
                             f"sampled). Got domain_size = {mech.domain_size}, d = {mech.d}.")

        def bits(u):
            return lambda r: (np.asarray(r.bits)[:, u] == 1) & (np.asarray(r.bits)[:, 1 - u] == 0)
        return OneReport(0, 1, bits(0), bits(1), plan.p_x, plan.p_x_prime, 1.0,
                         "the bit of u's bucket 1, of the other's 0")
    if isinstance(mech, OneBitMean):  # the counter's ends m and 0: S(m, 0) the bit 1, S(0, m) the bit 0
        return OneReport(plan.x, plan.x_prime, lambda r: np.asarray(r) == 1, lambda r: np.asarray(r) == 0,
                         plan.p_x, plan.p_x_prime, 1.0, "the bit is 1 for the counter's top m, 0 for its bottom 0")
    x, x_prime = plan.x, plan.x_prime  # GRR over two values: the report is the value
    return OneReport(x, x_prime, lambda r: np.asarray(r) == x, lambda r: np.asarray(r) == x_prime,
                     plan.p_x, plan.p_x_prime, 1.0, "the report is the value")


def differ_probability(mech, one: OneReport) -> float:
    """P[R(x) ≠ R(x′)] of two whole-report memos of x and x′ drawn independently: 1 − Σ_y P[y|x]·P[y|x′] over
    the mechanism's reports (its transition matrix or enumerated report distribution)."""
    if isinstance(mech, OneBitMean):   # its transition matrix's rows are those of the inputs asked for
        rows = mech.transition_matrix(np.array([one.x, one.x_prime]))
        return float(1.0 - rows[0] @ rows[1])
    table = mech.report_distribution() if hasattr(mech, "report_distribution") else mech.transition_matrix()
    return float(1.0 - table[one.x] @ table[one.x_prime])


def event_laws(mech, one: OneReport, n: int, r1: int, redrawn: bool) -> tuple[np.ndarray, np.ndarray]:
    """P[S|A], P[S|B] of the events (k₁, k₂), k₁ = 1 … r₁ (rows), k₂ = 1 … n − r₁ (columns): memoized
    (docs/math.md §11.9: a mixture over the memos) or, ``redrawn``, every report a fresh one-report draw."""
    halves = []
    for r in (r1, n - r1):
        k = np.arange(1, r + 1)
        if redrawn:
            halves.append((stats.binom.sf(k - 1, r, one.a), stats.binom.sf(k - 1, r, one.b)))
        elif isinstance(mech, RAPPOR):
            laws = np.array([_rappor_joint(mech, r, int(kk), one.share) for kk in k])
            halves.append((laws[:, 0], laws[:, 1]))
        else:                         # the whole report memoized: the half is in S iff its one memo is
            halves.append((np.full(r, one.a), np.full(r, one.b)))
    share = 1.0 if redrawn else one.share     # the memoized halves share the device's cohort
    return tuple(np.outer(halves[0][w], halves[1][w]) / share for w in (0, 1))


def repeated_rappor_law(mech: RAPPOR, one: OneReport, n: int, r1: int) -> np.ndarray:
    """P[E(k₁, k₂)] (rows k₁ = 1 … r₁, columns k₂ = 1 … n − r₁) when all n reports come from one memoized
    permanent response of x (a history that repeats x; docs/math.md §11.9): given its i bits of x set and j bits
    of x′ clear, a report is in S(x, x′) w.p. π = q^i p^{h−i} (1 − p)^j (1 − q)^{h−j} and in S(x′, x) w.p.
    π′ = q^{h−j} p^j (1 − p)^{h−i} (1 − q)^i, independently given the permanent bits; i, j ~ Bin(h, 1 − f/2)."""
    f, p, q, h = mech.f, mech.p, mech.q, mech.num_hashes
    i = np.arange(h + 1)[:, None]
    j = np.arange(h + 1)[None, :]
    pi = q ** i * p ** (h - i) * (1 - p) ** j * (1 - q) ** (h - j)
    pi_prime = q ** (h - j) * p ** j * (1 - p) ** (h - i) * (1 - q) ** i
    w = stats.binom.pmf(np.arange(h + 1), h, 1 - f / 2)
    weight = one.share * w[:, None] * w[None, :]
    k1 = np.arange(1, r1 + 1)[:, None, None, None]
    k2 = np.arange(1, n - r1 + 1)[None, :, None, None]
    tails = stats.binom.sf(k1 - 1, r1, pi[None, None]) * stats.binom.sf(k2 - 1, n - r1, pi_prime[None, None])
    return (tails * weight[None, None]).sum(axis=(2, 3))

