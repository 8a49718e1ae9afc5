"""ε per person over a run of memoized reports, between arbitrary histories — docs/math.md §8.6.

The accountant's ε per device over the run of a memoized use case (docs/math.md §8.2) composes the
losses of memo classes: it compares two histories with the **same repetition pattern** (the same
days share a value in both). Two histories that differ in *whether* values repeat are told apart
more:

* pure memoization (the report of a value re-sent unchanged: any mechanism memoized by the device;
  dBitFlip and 1BitMean with γ = 0) — for D ≥ 2 reports the person-level ε is **infinite**: two
  different reports prove two different values, an output impossible when the value stayed the same;
* a memoized permanent response with an instantaneous randomization of every report (RAPPOR's
  instantaneous response, dBitFlip's and 1BitMean's γ flips) — finite: every sent bit is a fresh
  randomization of some permanent bit, so the likelihood of any output under any history lies
  between the products of the smallest and the largest per-bit probabilities, and the person-level ε
  is at most D·k·ln ρ (k bits a report, ρ the bit's largest likelihood ratio).

>>> from ldpsim.mechanisms.frequency.grr import GRR
>>> person_level(GRR(epsilon=1.0, domain_size=10), reports=4).epsilon
inf
>>> person_level(GRR(epsilon=1.0, domain_size=10), reports=1).epsilon
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ldpsim.mechanisms._validation import check_int

#: what the person-level ε of each kind of memoized design means, as printed
MEANINGS = {
    "one report": "one report: ε of one report",
    "pure memoization": "a change of report proves a change of value: memoization reveals it",
    "memoized + instantaneous": "bound over arbitrary histories: every sent bit freshly randomized",
}


@dataclass(frozen=True)
class PersonLevel:
    """ε of D memoized reports of one device between arbitrary histories (:func:`person_level`).

    Attributes
    ----------
    epsilon : float
        Pure ε (δ = 0) between any two histories of D values; ``inf`` under pure memoization (D ≥ 2).
    design : str
        A key of :data:`MEANINGS`: ``"one report"`` (D ≤ 1), ``"pure memoization"`` or
        ``"memoized + instantaneous"``.
    reports : int
        D.
    """

    epsilon: float
    design: str
    reports: int

    @property
    def meaning(self) -> str:
        """What the number says, as printed beside it."""
        return MEANINGS[self.design]

    def text(self) -> str:
        """``"per person over the run ∞ (…)"`` or ``"per person over the run ≤ 12.3 (…)"``."""
        value = "∞" if math.isinf(self.epsilon) else f"≤ {self.epsilon:.3g}"
        return f"per person over the run {value} ({self.meaning})"


def instantaneous_bits(mech) -> tuple[int, float, float] | None:
    """(k, q₀, q₁) of a memoized design that randomizes every sent bit afresh — k bits a report, each
    sent as 1 w.p. q₁ when its permanent bit is 1 and q₀ when it is 0 — or None (pure memoization).

    RAPPOR: (num_bits, p, q); dBitFlip with γ > 0: (d, γ, 1 − γ); 1BitMean with γ > 0: (1, γ, 1 − γ).
    """
    from ldpsim.mechanisms.frequency.dbitflip import DBitFlip
    from ldpsim.mechanisms.frequency.rappor import RAPPOR
    from ldpsim.mechanisms.numeric.onebitmean import OneBitMean

    if isinstance(mech, RAPPOR):
        return mech.num_bits, mech.p, mech.q
    if isinstance(mech, (DBitFlip, OneBitMean)) and mech.gamma > 0:
        return (mech.d if isinstance(mech, DBitFlip) else 1), mech.gamma, 1 - mech.gamma
    return None


def bit_log_ratio(q0: float, q1: float) -> float:
    """ln ρ = max(|ln(q₁/q₀)|, |ln((1 − q₁)/(1 − q₀))|): the largest log-ratio of one sent bit's
    probabilities under its two permanent values (∞ when one of them is 0)."""
    def lr(a, b):
        if a == b:
            return 0.0
        return math.inf if min(a, b) == 0 else abs(math.log(a) - math.log(b))
    return max(lr(q1, q0), lr(1 - q1, 1 - q0))


def person_level(mech, reports: int) -> PersonLevel:
    """ε of ``reports`` memoized reports of one device between arbitrary histories (docs/math.md §8.6).

    Parameters
    ----------
    mech : Mechanism
        The memoized use case's mechanism.
    reports : int
        D, the reports the device sends over the run (≥ 0).

    Returns
    -------
    PersonLevel
        D = 0: ε = 0; D = 1: ε of one report; D ≥ 2: ∞ under pure memoization, D·k·ln ρ with an
        instantaneous randomization of every sent bit (:func:`instantaneous_bits`).
    """
    reports = check_int("person_level", "reports", reports, low=0)
    if reports <= 1:
        return PersonLevel(reports * mech.guarantee.epsilon_report, "one report", reports)
    irr = instantaneous_bits(mech)
    if irr is None:
        return PersonLevel(math.inf, "pure memoization", reports)
    k, q0, q1 = irr
    return PersonLevel(reports * k * bit_log_ratio(q0, q1), "memoized + instantaneous", reports)


def use_case_person_level(cfg, uc) -> PersonLevel | None:
    """:func:`person_level` of a memoized use case of the deployment ``cfg`` over its reports per device
    over the run (days × daily limit); None when the use case is not memoized."""
    if not uc.memoize:
        return None
    return person_level(uc.make_mechanism(), cfg.n_days * uc.daily_limit)


#: how the accountant's ε of a memoized use case is scoped wherever it is printed
SAME_PATTERN = "per value, same repetition pattern"

