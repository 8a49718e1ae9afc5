"""The observer of memoized reports (docs/math.md §7.5): a device's identical reports are one value's
memo, weighted by how often one value is typed; never worse than the prior when its model holds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from ldpsim.evaluation.adversary.observer import log_likelihoods, memo_device_log_likelihoods, report_groups
from ldpsim.mechanisms import make
from ldpsim.mechanisms.memo import keyed_perturb
from ldpsim.simulator.memoization import report_keys

D = 12
PI = np.array([12, 10, 9, 8, 7, 6, 5, 4, 3, 2, 2, 1], float) / 69
PRIOR = PI ** 2 / np.sum(PI ** 2)      # favourites more concentrated than the background
RHO = 0.4
TOKENS = np.array([f"e{i}" for i in range(D)], dtype=object)
Z = norm.ppf(1 - 1e-3)                 # one-sided, α = 1e-3 per comparison


def _mech(name: str, epsilon: float):
    if name == "cms":
        return make("cms", epsilon=epsilon, k=16, m=32, seed=3)
    return make(name, epsilon=epsilon, domain_size=D)


def _population(mech, n: int, days: int, seed: int):
    """Favourites from PRIOR; on each day (reported w.p. 0.7, so some days have no report) a value from
    q(·|fav) = ρ·𝟙[fav] + (1 − ρ)·π; the report is the device's keyed memo of that value."""
    rng = np.random.default_rng(seed)
    fav = rng.choice(D, n, p=PRIOR)
    vals = np.where(rng.random((n, days)) < RHO, fav[:, None], rng.choice(D, (n, days), p=PI))
    sent = rng.random((n, days)) < 0.7
    dev = np.repeat(np.arange(n), days)[sent.ravel()]
    v = vals.ravel()[sent.ravel()]
    reports = keyed_perturb(mech, v, report_keys(seed, dev, v), TOKENS[v] if mech.takes_tokens else None)
    rows = np.frombuffer(mech.encode(reports), np.uint8).reshape(v.size, mech.report_bytes)
    return fav, dev, rows


def _memo_observer(mech, dev, rows, n):
    cand = TOKENS if mech.takes_tokens else np.arange(D)
    first, group_dev, counts = report_groups(dev, rows)
    ll = log_likelihoods(mech, mech.decode(rows[first].tobytes()), cand)
    return (np.log(PRIOR) + memo_device_log_likelihoods(ll, group_dev, counts, n, PI, RHO)).argmax(axis=1)


@pytest.mark.parametrize("name", ["grr", "oue", "cms"])
def test_memo_observer_is_at_least_as_good_as_its_prior(name):
    """3 000 devices × 20 days. Paired one-sided test at α = 1e-3 (d = linked correct − prior correct):
    mean(d) ≥ −z·se at ε = 1, and mean(d) > z·se (strictly better) at ε = 4."""
    n = 3000
    for epsilon, better in ((1.0, False), (4.0, True)):
        mech = _mech(name, epsilon)
        fav, dev, rows = _population(mech, n, 20, seed=int(10 * epsilon) + len(name))
        d = (_memo_observer(mech, dev, rows, n) == fav).astype(float) - (np.argmax(PRIOR) == fav)
        se = d.std(ddof=1) / math.sqrt(n)
        assert d.mean() >= -Z * se, (epsilon, d.mean(), se)
        if better:
            assert d.mean() > Z * se, (epsilon, d.mean(), se)


def test_one_group_is_the_one_report_likelihood_weighted_by_q_to_the_c():
    """A device with one group of c identical reports: P = Σ_u q(u|x)^c·P(r|u), by hand."""
    rng = np.random.default_rng(5)
    ll = np.log(rng.random((1, D)))
    for c in (1, 4):
        got = memo_device_log_likelihoods(ll, np.array([0]), np.array([c]), 1, PI, RHO)[0]
        q = RHO * np.eye(D) + (1 - RHO) * PI[None, :]          # q[x, u]
        want = np.log((q ** c) @ np.exp(ll[0]))
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_two_groups_hold_the_favourite_at_most_once():
    """Two groups: P = b₁b₂ + a₁b₂ + b₁a₂ with a_g = q(x|x)^{c_g}P(r_g|x), b_g = Σ_{u≠x} q(u|x)^{c_g}P(r_g|u)."""
    rng = np.random.default_rng(6)
    counts = np.array([3, 1])
    w_zero = rng.random((2, D))
    w_zero[0, 1:] = 0.0            # group 1 can only be item 0: b₁(0) = 0
    for w in (rng.random((2, D)), w_zero):
        with np.errstate(divide="ignore"):
            got = memo_device_log_likelihoods(np.log(w), np.array([0, 0]), counts, 1, PI, RHO)[0]
        want = np.empty(D)
        for x in range(D):
            q = (1 - RHO) * PI.copy()
            q[x] += RHO
            a = [q[x] ** c * w[g, x] for g, c in enumerate(counts)]
            b = [sum(q[u] ** c * w[g, u] for u in range(D) if u != x) for g, c in enumerate(counts)]
            want[x] = math.log(b[0] * b[1] + a[0] * b[1] + b[0] * a[1])
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_groups_and_zero_likelihoods():
    """Identical rows of one device form one group, of different devices not; a zero likelihood is
    handled exactly (the value that cannot have sent a report only enters through the others)."""
    rows = np.array([[1, 2], [1, 2], [1, 3], [1, 2]], np.uint8)
    first, gdev, counts = report_groups(np.array([0, 0, 0, 1]), rows)
    assert sorted(zip(gdev.tolist(), counts.tolist())) == [(0, 1), (0, 2), (1, 1)]
    with np.errstate(divide="ignore"):
        ll = np.log(np.array([[1.0, 0.0, 0.5]]))
        got = memo_device_log_likelihoods(ll, np.array([0]), np.array([2]), 1, np.ones(3), 0.5)[0]
    q = 0.5 * np.eye(3) + 0.5 / 3
    np.testing.assert_allclose(got, np.log((q ** 2) @ np.array([1.0, 0.0, 0.5])), rtol=1e-12)
    with pytest.raises(ValueError, match="rho"):
        memo_device_log_likelihoods(ll, np.array([0]), np.array([2]), 1, np.ones(3), 1.5)
    with pytest.raises(ValueError, match="counts"):
        memo_device_log_likelihoods(ll, np.array([0]), np.array([0]), 1, np.ones(3), 0.5)
