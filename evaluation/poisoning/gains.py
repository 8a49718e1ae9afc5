"""Expected frequency gain of data-poisoning attacks, in closed form — docs/math.md §7.5.

Cao, Jia, Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols", USENIX Security 2021.
m fake users join n genuine ones (β = m/(n+m)) and promote r target items T. The frequency gain is
G = Σ_{t∈T} (E f̃_t after − E f̃_t before), f̃ = estimated count / number of users. Every oracle here has
a count estimator that is a sum of per-report contributions, so with c(t) the expected contribution of
one fake report to the count estimate of t and E_gen(t) = f_t + b_t the genuine users' expected
estimated frequency (b_t the oracle's bias: the sketches', FLH's for its fixed pool, RAPPOR's when its
design is rank-deficient; zero otherwise):

    G = β · [Σ_t c(t) − Σ_t (f_t + b_t)]                                  (docs/math.md §7.5)

Σ_t c(t) per oracle (p, q support probabilities, g hash range, w sketch width, k′ FLH pool, d and
t = e^{ε/2} dBitFlip's, B SHE's cap; the paper's for GRR, OUE, OLH, derived here otherwise):

| oracle | RPA (uniform random report) | MGA (maximal gain) |
|---|---|---|
| GRR, URR, SDGRR, HR | mean_y w_y | max_y w_y  (w_y = Σ_t A[t, y]: :func:`.crafted.output_weights`) |
| OUE, SUE, THE | r(1/2 − q)/(p − q) | r(1 − q)/(p − q) |
| OLH, BLH | 0 | (s̄ − r/g)/(p − 1/g), s̄ = support of the seed pool (r when found) |
| FLH | 0 | (N* − r/g)/(p − 1/g), N* = most targets sharing one pool cell |
| CMS | r·w/(w−1)·(1/2 − 1/w) | r·w/(w−1)·((c_ε+1)/2 − 1/w) |
| HCMS | −r/(w − 1) | r·w/(w−1)·(c′_ε − 1/w) |
| dBitFlip | r/2 | min(d, r)·(k/d)·t/(t − 1) |
| SHE | r/2 (uniform on [−B, 1+B]^D) | r(1 + B) |
| RAPPOR (least squares) | (1/C)Σ_{c,i} W_ci(1/2 − p*) | max_c Σ_i max(W_ci(1 − p*), −W_ci p*) |

RIA (honest reports of a uniform target): Σ_t c(t) = 1 + Σ_t b_t(fakes)/m — the fakes' expected estimate
under the oracle's own bias, linear in the counts (m/r per target). RAPPOR's LASSO decoder is not linear:
no closed form (the sweep measures it as a separate estimator).
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.evaluation.poisoning.crafted import (flh_best_cells, olh_seed_pool, output_weights, rappor_best,
                                                 rappor_weights, she_cap, target_indices)
from ldpsim.mechanisms import CMS, FLH, HCMS, HR, OLH, RAPPOR, SHE, DBitFlip
from ldpsim.mechanisms.frequency.mixture import KeepOrUniform
from ldpsim.mechanisms.frequency.unary import UnaryEncoding

ATTACKS = ("rpa", "ria", "mga")
#: the oracles with modelled attacks (KeepOrUniform: GRR, RR, URR, SDGRR; UnaryEncoding: OUE, SUE, THE;
#: OLH includes BLH). Personalized SDGRR is not modelled: its plug-in inverse-variance weights make the
#: estimator non-linear and its client takes a user-chosen partition.
ORACLES = (KeepOrUniform, HR, UnaryEncoding, OLH, FLH, CMS, HCMS, DBitFlip, SHE, RAPPOR)


def check_attack(attack: str) -> str:
    if attack not in ATTACKS:
        raise ValueError(f"The 'attack' parameter must be one of {ATTACKS}. Got {attack!r} instead.")
    return attack


def check_oracle(mech) -> None:
    if not isinstance(mech, ORACLES):
        raise ValueError(f"Poisoning is modelled for {[c.__name__ for c in ORACLES]}; got {type(mech).__name__}.")


def default_items(mech, targets, items=None) -> list:
    """The server's item list: ``items`` if given, else all ids (oracles on ids) or the targets (tokens)."""
    if items is not None:
        return list(items)
    return list(targets) if mech.takes_tokens else list(range(mech.domain_size))


def _expected_estimates(mech, counts, items) -> np.ndarray:
    """E[ĉ] = counts + bias for a population with ``counts`` of ``items`` (every oracle's own theory)."""
    counts = np.asarray(counts, dtype=np.int64)
    return counts + mech.bias(counts, items if mech.takes_tokens else None)


def fake_contribution(mech, attack: str, targets, items=None) -> float:
    """Σ_t c(t): expected contribution of one fake report to the targets' count estimates (table above).

    ``items`` is the server's item list (needed by RAPPOR, whose estimator depends on its candidates,
    and by the biased oracles' RIA); default :func:`default_items`.
    """
    check_oracle(mech)
    check_attack(attack)
    items = default_items(mech, targets, items)
    idx = target_indices(items, targets)
    r = len(targets)
    if attack == "ria":  # the bias is linear in the counts: m/r fakes per target = (m/r) × one per target
        ones = np.zeros(len(items), dtype=np.int64)
        ones[idx] = 1
        return float(_expected_estimates(mech, ones, items)[idx].sum()) / r
    rpa = attack == "rpa"
    if isinstance(mech, (KeepOrUniform, HR)):
        w = output_weights(mech, targets)
        return float(w.mean() if rpa else w.max())
    if isinstance(mech, UnaryEncoding):
        p, q = mech.p, mech.q
        return r * ((0.5 if rpa else 1.0) - q) / (p - q)
    if isinstance(mech, (OLH, FLH)):
        if rpa:
            return 0.0
        shared = float(olh_seed_pool(mech, tuple(int(t) for t in targets))[2].mean()) if isinstance(mech, OLH) \
            else flh_best_cells(mech, targets)[2]
        return (shared - r / mech.g) / (mech.p - 1 / mech.g)
    if isinstance(mech, DBitFlip):
        t = math.exp(mech.epsilon / 2)
        return r / 2 if rpa else min(mech.d, r) * mech.domain_size / mech.d * t / (t - 1)
    if isinstance(mech, SHE):
        return r / 2 if rpa else r * (1 + she_cap(mech))
    if isinstance(mech, RAPPOR):
        if rpa:
            return float((rappor_weights(mech, targets, items) * (0.5 - mech.bit_probabilities()[1])).sum()) / mech.cohorts
        return rappor_best(mech, targets, items)[2]
    w = mech.m
    scale = w / (w - 1)
    if isinstance(mech, CMS):
        return r * scale * (0.5 - 1 / w) if rpa else r * scale * ((mech.c_eps + 1) / 2 - 1 / w)
    return -r / (w - 1) if rpa else r * scale * (mech.c_eps - 1 / w)


def genuine_target_frequency(mech, counts, items, targets) -> float:
    """Σ_t (f_t + b_t): the genuine users' expected estimated frequency of the targets (before the attack)."""
    items = list(items)
    idx = target_indices(items, targets)
    return float(_expected_estimates(mech, counts, items)[idx].sum() / np.sum(counts))


def expected_gain(mech, attack: str, targets, counts, items, m: int) -> float:
    """G = β·[Σ_t c(t) − Σ_t (f_t + b_t)] with β = m/(n + m) (module docstring; Cao et al. 2021).

    Parameters
    ----------
    mech : an oracle of :data:`ORACLES`
    attack : {"rpa", "ria", "mga"}
    targets : sequence
        Target labels as the oracle sees them (ids, or tokens for sketches and RAPPOR).
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
    return beta * (fake_contribution(mech, attack, targets, items)
                   - genuine_target_frequency(mech, counts, items, targets))


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
