"""OLH beyond the contract suite: parameters, the hash family, privacy at its boundary, wire form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import OLH, OLHReports, make
from ldpsim.mechanisms.frequency.olh import MAX_G
from tests.stats import assert_chisquare_gof, assert_z

_MASK = (1 << 64) - 1


def _reference_hash(seed: int, item: int, g: int) -> int:
    """H_s(x) = ⌊g · mix64(s·2^32 + x) / 2^64⌋ with SplitMix64's finalizer, in Python integers."""
    z = (seed << 32) | item
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (g * z) >> 64


# parameters ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon, g", [(0.5, 3), (1.0, 4), (2.0, 8), (4.0, 56)])
def test_default_g_is_rounded_e_to_the_epsilon_plus_one(epsilon, g):
    mech = OLH(epsilon=epsilon, domain_size=10)
    assert mech.g == g == round(math.exp(epsilon)) + 1
    assert repr(mech) == f"OLH(epsilon={epsilon}, domain_size=10, g={g})"
    assert mech == make("olh", epsilon=epsilon, domain_size=10, g=g)


@pytest.mark.parametrize("bad, exc", [(1, ValueError), (MAX_G + 1, ValueError), (4.0, TypeError),
                                      ("4", TypeError), (True, TypeError)])
def test_bad_g(bad, exc):
    with pytest.raises(exc, match=rf"'g' parameter of OLH must be an int in the range \[2, {MAX_G}\]"):
        OLH(epsilon=1.0, domain_size=10, g=bad)


def test_default_g_capped_at_the_hash_range_for_huge_epsilon():
    # round(e^23) + 1 > 2^32 − 1: every ε up to the supported 50 builds, with g at the largest hash range
    assert OLH(epsilon=23.0, domain_size=10).g == OLH(epsilon=50.0, domain_size=10).g == MAX_G
    assert OLH(epsilon=23.0, domain_size=10, g=1000).g == 1000


@pytest.mark.parametrize("bad, exc", [(1, ValueError), ((1 << 32) + 1, ValueError), (6.0, TypeError)])
def test_bad_domain_size(bad, exc):
    msg = r"'domain_size' parameter of OLH must be an int in the range \[2, 4294967296\]"
    with pytest.raises(exc, match=msg):
        OLH(epsilon=1.0, domain_size=bad)


def test_bad_values_and_reports():
    mech = OLH(epsilon=1.0, domain_size=6)
    with pytest.raises(ValueError, match=r"item ids in \[0, 6\); got 6 at index 1"):
        mech.perturb([0, 6])
    with pytest.raises(TypeError, match="OLHReports"):
        mech.aggregate(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"'y' must hold item ids in \[0, 4\); got 4 at index 0"):
        mech.aggregate(OLHReports(np.zeros(1, np.uint32), np.array([4])))
    with pytest.raises(ValueError, match="'seed' must hold item ids"):
        mech.aggregate(OLHReports(np.array([-1]), np.array([0])))
    with pytest.raises(ValueError, match="same shape"):
        mech.aggregate(OLHReports(np.zeros(2, np.uint32), np.array([0])))


# the hash family ----------------------------------------------------------------------------------
def test_hash_matches_a_pure_python_reference():
    rng = np.random.default_rng(0)
    seeds = rng.integers(0, 1 << 32, 200, dtype=np.uint32)
    items = rng.integers(0, 1 << 32, 200, dtype=np.uint64)
    for g in (2, 4, 57, MAX_G):
        mech = OLH(epsilon=1.0, domain_size=1 << 32, g=g)
        got = mech.hash_items(seeds, items)
        expect = [_reference_hash(int(s), int(x), g) for s, x in zip(seeds, items)]
        assert got.tolist() == expect


def test_support_counts_match_brute_force_hashing():
    """The server's interval test (no division) counts exactly the users with H_seed(x) = y."""
    for g in (3, 7, 300, MAX_G):
        mech = OLH(epsilon=2.0, domain_size=50, g=g)
        rng = np.random.default_rng(g)
        reports = mech.perturb(rng.integers(0, 50, 700), rng)
        brute = mech.hash_items(reports.seed[:, None], np.arange(50)[None, :]) == reports.y[:, None]
        np.testing.assert_array_equal(mech.aggregate(reports).data, brute.sum(axis=0))


def test_hash_is_uniform_and_pairwise_collisions_have_rate_one_over_g():
    mech = OLH(epsilon=1.0, domain_size=100, g=5)
    seeds = np.random.default_rng(1).integers(0, 1 << 32, 200_000, dtype=np.uint32)
    h0, h1 = mech.hash_items(seeds, 0), mech.hash_items(seeds, 1)
    assert_chisquare_gof(np.bincount(h0, minlength=5), np.full(5, 0.2), alpha=1e-4 / 2, what="H_s(0)")
    n, r = seeds.size, 1 / mech.g
    assert_z(np.sum(h0 == h1), n * r, math.sqrt(n * r * (1 - r)), alpha=1e-4 / 2, what="collisions")


# privacy ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon, g", [(1.0, None), (3.0, None), (1.0, 9)])
def test_exact_privacy_boundary(epsilon, g):
    """GRR over [g]: rows sum to one, the largest ratio is exactly p/q = e^ε; the per-report
    likelihoods (seed, y) of two inputs reach that ratio and never exceed it."""
    mech = OLH(epsilon=epsilon, domain_size=10, g=g)
    P = mech.hashed_transition_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert math.isclose((P[:, None, :] / P[None, :, :]).max(), math.exp(epsilon), rel_tol=1e-12)
    seed, y = np.meshgrid(np.arange(64, dtype=np.uint32), np.arange(mech.g))
    reports = OLHReports(seed.ravel(), y.ravel())
    ratio = np.exp(mech.log_likelihood(reports, np.zeros(y.size, np.int64))
                   - mech.log_likelihood(reports, np.full(y.size, 3)))
    assert math.isclose(ratio.max(), math.exp(epsilon), rel_tol=1e-12)
    assert math.isclose(ratio.min(), math.exp(-epsilon), rel_tol=1e-12)


def test_client_keeps_the_hash_with_probability_p():
    """Empirical neighbour test on the client code, inputs 0 and 1: (y − H_s(x)) mod g is 0 w.p. p and
    each other value w.p. q (GRR over [g]); for the neighbour x', y = H_s(x') w.p. 1/g."""
    mech = OLH(epsilon=1.0, domain_size=6)
    rng = np.random.default_rng(5)
    n = 200_000
    for x, other in ((0, 1), (1, 0)):
        seed, y = mech.perturb(np.full(n, x), rng)
        shift = (y - mech.hash_items(seed, x).astype(np.int64)) % mech.g
        assert_chisquare_gof(np.bincount(shift, minlength=mech.g), mech.hashed_transition_matrix()[0],
                             alpha=1e-4 / 4, what=f"OLH y − H(x) for input {x}")
        r = 1 / mech.g
        assert_z(np.sum(mech.hash_items(seed, other) == y), n * r, math.sqrt(n * r * (1 - r)),
                 alpha=1e-4 / 4, what=f"OLH y = H(x') for input {x}")


# wire form -------------------------------------------------------------------------------------------
def test_wire_round_trip_and_malformed_payloads():
    mech = OLH(epsilon=1.0, domain_size=1000, g=300)
    assert mech.report_bytes == 4 + 2
    reports = mech.perturb(np.arange(1000), rng=2)
    payload = mech.encode(reports)
    assert len(payload) == 1000 * 6
    back = mech.decode(payload)
    np.testing.assert_array_equal(back.seed, reports.seed)
    np.testing.assert_array_equal(back.y, reports.y)
    assert back.seed.dtype == np.uint32
    with pytest.raises(ValueError, match="not a whole number of 6-byte reports"):
        mech.decode(payload[:-2])
    bad = bytearray(payload)
    bad[4:6] = (300).to_bytes(2, "little")  # report 0 says y = 300, outside [0, 300)
    with pytest.raises(ValueError, match=r"'y' must hold item ids in \[0, 300\); got 300 at index 0"):
        mech.decode(bytes(bad))
