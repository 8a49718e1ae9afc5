"""Expected frequency gain of data-poisoning attacks, in closed form — docs/math.md §7.5.

Cao, Jia, Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols", USENIX Security 2021.
m fake users join n genuine ones (β = m/(n+m)) and promote r target items T. The frequency gain is
G = Σ_{t∈T} (E f̃_t after − E f̃_t before), f̃ = estimated count / number of users. Every oracle here has
a count estimator that is a sum of per-report contributions, so with c(t) the expected contribution of
one fake report to the count estimate of t and E_gen(t) = f_t + b_t the genuine users' expected
estimated frequency (b_t the oracle's bias, zero except for the sketches):

    G = β · [Σ_t c(t) − Σ_t (f_t + b_t)]                                  (docs/math.md §7.5)

Per-report contributions (p, q the oracle's support probabilities, g OLH's hash range, w a sketch's
width, c_ε and c′_ε the CMS and HCMS scale constants):

| oracle | RPA (uniform random report) | RIA (honest report of a random target) | MGA (maximal gain) |
|---|---|---|---|
| GRR  | r(1/D − q)/(p − q)          | 1 | (1 − rq)/(p − q)         (Cao et al., Thms 1–3) |
| OUE  | r(1/2 − q)/(p − q)          | 1 | r(1 − q)/(p − q)         (Cao et al., Thms 4–6) |
| OLH  | 0                           | 1 | r(1 − 1/g)/(p − 1/g)     (Cao et al., Thms 7–9) |
| CMS  | r·w/(w−1)·(1/2 − 1/w)       | 1 + Σ_t b_t(fakes)/m | r·w/(w−1)·((c_ε+1)/2 − 1/w)   (derived here) |
| HCMS | −r/(w − 1)                  | 1 + Σ_t b_t(fakes)/m | r·w/(w−1)·(c′_ε − 1/w)        (derived here) |

RIA on a sketch: fake users are honest users holding targets, so their expected estimate is the
oracle's own expectation (counts + :meth:`bias`) for the fake population (m/r per target). The MGA
report of CMS is row j with +1 exactly at h_j(t) for t ∈ T and no flip; of HCMS the coefficient l = 0
(H[0, ·] = +1 everywhere) with w̃ = +1, which maximises Σ_t w̃·H[l, h_j(t)] = r. OLH's MGA needs a seed
that hashes every target to one value (:mod:`.attacks` searches; the formula assumes it was found).
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.mechanisms import CMS, GRR, HCMS, OLH, OUE

ATTACKS = ("rpa", "ria", "mga")
#: the oracles with modelled attacks (RR is GRR with D = 2; URR and SDGRR, whose estimators differ per
#: item class, are not modelled)
ORACLES = (GRR, OUE, OLH, CMS, HCMS)


def check_attack(attack: str) -> str:
    if attack not in ATTACKS:
        raise ValueError(f"The 'attack' parameter must be one of {ATTACKS}. Got {attack!r} instead.")
    return attack


def check_oracle(mech) -> None:
    if not isinstance(mech, ORACLES):
        raise ValueError(f"Poisoning is modelled for {[c.__name__ for c in ORACLES]}; got {type(mech).__name__}.")


def fake_contribution(mech, attack: str, targets, m: int = 1) -> float:
    """Σ_t c(t): expected contribution of one fake report to the targets' count estimates (table above).

    ``m`` (the number of fakes) is accepted for symmetry; RIA on a sketch depends on the fake population's
    composition (m/r per target), not on its size, because the bias is linear in the counts.
    """
    check_oracle(mech)
    check_attack(attack)
    r = len(targets)
    if attack == "ria":
        if isinstance(mech, (CMS, HCMS)):
            # the bias is linear in the counts: m/r fakes per target = (m/r) × one per target
            return 1.0 + float(np.sum(mech.bias(np.ones(r, dtype=np.int64), list(targets)))) / r
        return 1.0
    if isinstance(mech, GRR):
        p, q = mech.p, mech.q
        return r * (1 / mech.domain_size - q) / (p - q) if attack == "rpa" else (1 - r * q) / (p - q)
    if isinstance(mech, OUE):
        p, q = mech.p, mech.q
        return r * (0.5 - q) / (p - q) if attack == "rpa" else r * (1 - q) / (p - q)
    if isinstance(mech, OLH):
        g = 1 / mech.g
        return 0.0 if attack == "rpa" else r * (1 - g) / (mech.p - g)
    w = mech.m
    scale = w / (w - 1)
    if isinstance(mech, CMS):
        return r * scale * (0.5 - 1 / w) if attack == "rpa" else r * scale * ((mech.c_eps + 1) / 2 - 1 / w)
    return -r / (w - 1) if attack == "rpa" else r * scale * (mech.c_eps - 1 / w)


def genuine_target_frequency(mech, counts, items, targets) -> float:
    """Σ_t (f_t + b_t): the genuine users' expected estimated frequency of the targets (before the attack)."""
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum()
    idx = [list(items).index(t) for t in targets]
    total = counts[idx].sum()
    if isinstance(mech, (CMS, HCMS)):
        total += float(np.sum(mech.bias(counts.astype(np.int64), list(items))[idx]))
    return float(total / n)


def expected_gain(mech, attack: str, targets, counts, items, m: int) -> float:
    """G = β·[Σ_t c(t) − Σ_t (f_t + b_t)] with β = m/(n + m) (module docstring; Cao et al. 2021).

    Parameters
    ----------
    mech : GRR, OUE, OLH, CMS or HCMS
    attack : {"rpa", "ria", "mga"}
    targets : sequence
        Target labels as the oracle sees them (ids, or tokens for sketches).
    counts, items : arrays
        Genuine true counts and the labels they belong to (``targets`` ⊂ ``items``).
    m : int ≥ 0
        Number of fake users.

    Returns
    -------
    float
        Expected frequency gain summed over the targets.
    """
    n = float(np.sum(counts))
    beta = m / (n + m)
    return beta * (fake_contribution(mech, attack, targets, m) - genuine_target_frequency(mech, counts, items, targets))


def paper_gain(kind: str, attack: str, epsilon: float, d: int, r: int, beta: float, f_t: float) -> float:
    """Cao et al.'s closed forms for kRR ("grr"), OUE and OLH written from the paper's parameters
    (ε, d, r, β, f_T), independently of the oracle objects (used by the tests)."""
    e = math.exp(epsilon)
    if kind == "grr":
        p, q = e / (d - 1 + e), 1 / (d - 1 + e)
        c = {"rpa": r * (1 / d - q) / (p - q), "ria": 1.0, "mga": (1 - r * q) / (p - q)}[attack]
    elif kind == "oue":
        p, q = 0.5, 1 / (e + 1)
        c = {"rpa": r * (0.5 - q) / (p - q), "ria": 1.0, "mga": r * (1 - q) / (p - q)}[attack]
    else:
        g = round(e) + 1
        p, q = e / (e + g - 1), 1 / g
        c = {"rpa": 0.0, "ria": 1.0, "mga": r * (1 - q) / (p - q)}[attack]
    return beta * (c - f_t)
