"""Bayesian adversary on CMS, HCMS, OUE and OLH reports: empirical attack accuracy against exact
expectations computed independently (enumeration for the sketches, closed forms for OUE/OLH)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpsim.evaluation.adversary.sketch import empirical_sketch_accuracy, sketch_guesses, support
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import CMS, GRR, HCMS, OLH, OUE
from ldpsim.mechanisms.sketches.hcms import hadamard_sign
from tests.stats import assert_z

N = 20_000


def _cms_exact(mech: CMS, items) -> np.ndarray:
    """P(correct | x), uniform prior: enumerate the row j and the bits at the candidates' positions."""
    H = mech.family.hash(items)  # k × D
    d, f = len(items), mech.flip
    acc = np.zeros(d)
    for x in range(d):
        for j in range(mech.k):
            used = sorted(set(H[j].tolist()))
            for bits in itertools.product((0, 1), repeat=len(used)):
                on = dict(zip(used, bits))
                prob = math.prod((1 - f if u == H[j, x] else f) if on[u] else (f if u == H[j, x] else 1 - f)
                                 for u in used)
                s = np.array([on[H[j, c]] for c in range(d)])
                acc[x] += prob / mech.k * (s[x] / s.sum() if s.sum() else 1 / d)
    return acc


def _hcms_exact(mech: HCMS, items) -> np.ndarray:
    """Enumerate (j, l, flipped or not): the support set is {d : H_m[l, h_j(d)] = w̃}."""
    H = mech.family.hash(items)
    d, f = len(items), mech.flip
    acc = np.zeros(d)
    for x in range(d):
        for j in range(mech.k):
            for l in range(mech.m):
                signs = hadamard_sign(np.full(d, l), H[j])
                for w, prob in ((signs[x], 1 - f), (-signs[x], f)):
                    s = signs == w
                    acc[x] += prob / (mech.k * mech.m) * (s[x] / s.sum() if s.sum() else 1 / d)
    return acc


def _oue_exact(mech: OUE) -> float:
    """B_x = 1 (w.p. ½): uniform among 1 + Bin(D−1, q) set bits, E[1/(1+K)] = (1−(1−q)^D)/(Dq);
    B_x = 0 and no bit set: uniform over all D."""
    d, q = mech.domain_size, mech.q
    return 0.5 * (1 - (1 - q) ** d) / (d * q) + 0.5 * (1 - q) ** (d - 1) / d


def _olh_exact(mech: OLH) -> float:
    """Ideal hash: y = H_s(x) w.p. p, then x shares its bucket with Bin(D−1, 1/g) others."""
    d, g, p = mech.domain_size, mech.g, mech.p
    return p * (1 - (1 - 1 / g) ** d) * g / d + (1 - p) * (1 - 1 / g) ** (d - 1) / d


def _attack(mech, workload, prior=None, seed=0):
    rng = np.random.default_rng(seed)
    x = workload.values(rng)
    items = np.array([f"w{i}" for i in range(workload.domain_size)], dtype=object) if mech.takes_tokens \
        else np.arange(workload.domain_size)
    y = mech.perturb(items[x], rng)
    return x, items, empirical_sketch_accuracy(mech, x, y, items, prior=prior, rng=rng)


def _check(out, expected):
    assert_z(out["overall"], expected, math.sqrt(expected * (1 - expected) / out["n"]), what="attack accuracy")


@pytest.mark.parametrize("mech", [CMS(2.0, k=3, m=4, seed=5), CMS(1.0, k=2, m=8, seed=1)], ids=["cms-4", "cms-8"])
def test_cms_matches_enumeration(mech):
    w = make_workload("harmonic", N, domain_size=6)
    x, items, out = _attack(mech, w)
    _check(out, _cms_exact(mech, items)[x].mean())


def test_hcms_matches_enumeration():
    mech = HCMS(1.5, k=3, m=4, seed=2)
    w = make_workload("harmonic", N, domain_size=6)
    x, items, out = _attack(mech, w)
    _check(out, _hcms_exact(mech, items)[x].mean())


@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_oue_and_olh_match_closed_forms(eps):
    w = make_workload("even", N, domain_size=40)
    _check(_attack(OUE(eps, 40), w)[2], _oue_exact(OUE(eps, 40)))
    _check(_attack(OLH(eps, 40), w)[2], _olh_exact(OLH(eps, 40)))


def test_support_of_the_true_item_has_the_right_rate():
    """CMS: the true item's coordinate is +1 w.p. 1 − f (and the gap λ is ε)."""
    mech = CMS(1.0, k=8, m=16)
    items = np.array(["a", "b", "c"], dtype=object)
    y = mech.perturb(np.array(["a"] * N, dtype=object), rng=3)
    s, lam = support(mech, y, items)
    assert lam == pytest.approx(1.0)
    assert_z(s[:, 0].mean(), 1 - mech.flip, math.sqrt(mech.flip * (1 - mech.flip) / N), what="support rate")


def test_prior_dominates_when_certain():
    """An adversary certain that everyone holds item 2 guesses 2 for every report."""
    mech = OUE(2.0, 5)
    y = mech.perturb(np.zeros(100, dtype=np.int64), rng=0)
    np.testing.assert_array_equal(sketch_guesses(mech, y, np.arange(5), prior=[0, 0, 1, 0, 0], rng=1), 2)


def test_unsupported_mechanism():
    with pytest.raises(TypeError, match="No support rule for GRR"):
        support(GRR(1.0, 3), np.array([0]), np.arange(3))
