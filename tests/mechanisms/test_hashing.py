"""The seeded mmh3 hash family of the sketches (docs/math.md §1.5): determinism, uniformity, collisions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms.hashing import HashFamily, factorize
from tests.stats import assert_chisquare_gof, assert_z

WORDS = np.array([f"token-{i}" for i in range(20_000)], dtype=object)


def test_shape_range_and_evaluate_agree():
    fam = HashFamily(k=5, m=10, seed=3)
    H = fam.hash(WORDS[:100])
    assert H.shape == (5, 100) and H.dtype == np.int64
    assert H.min() >= 0 and H.max() < 10
    rows = np.arange(100) % 5
    np.testing.assert_array_equal(fam.hash_values(rows, WORDS[:100]), H[rows, np.arange(100)])


def test_deterministic_per_seed_and_seeds_differ():
    a, b, c = HashFamily(8, 64, seed=1), HashFamily(8, 64, seed=1), HashFamily(8, 64, seed=2)
    np.testing.assert_array_equal(a.hash(WORDS[:500]), b.hash(WORDS[:500]))
    same = (a.hash(WORDS[:2000]) == c.hash(WORDS[:2000])).sum()
    # independent functions agree w.p. 1/64 per (row, item): Binomial(16000, 1/64) ≈ 250 ± 16
    assert_z(same, 16_000 / 64, np.sqrt(16_000 / 64 * 63 / 64), what="agreements between seeds")


def test_token_encoding():
    fam = HashFamily(4, 1 << 16)
    H = fam.hash([42, "42", np.int64(42), b"42", "é"])
    np.testing.assert_array_equal(H[:, 0], H[:, 1])  # ints hash as their decimal string
    np.testing.assert_array_equal(H[:, 0], H[:, 2])
    np.testing.assert_array_equal(H[:, 0], H[:, 3])  # bytes as is; str as UTF-8
    assert not np.array_equal(H[:, 0], H[:, 4])


@pytest.mark.parametrize("bad", [1.5, None, True, ("a",)])
def test_rejects_other_item_types(bad):
    with pytest.raises(TypeError, match=f"got {bad!r}".replace("(", r"\(").replace(")", r"\)")):
        HashFamily(2, 4).hash(["ok", bad])


@pytest.mark.parametrize("params, exc", [({"k": 0, "m": 4}, ValueError), ({"k": 2, "m": 1}, ValueError),
                                         ({"k": 2, "m": 4, "seed": -1}, ValueError),
                                         ({"k": 2.0, "m": 4}, TypeError)])
def test_parameters_validated(params, exc):
    with pytest.raises(exc, match="parameter of HashFamily"):
        HashFamily(**params)


def test_factorize():
    vals = np.array(["b", "a", "b", "c", "a"], dtype=object)
    uniq, inv = factorize(vals)
    np.testing.assert_array_equal(uniq[inv], vals)
    uniq, inv = factorize(np.array([5, 3, 5]))
    np.testing.assert_array_equal(uniq[inv], [5, 3, 5])
    with pytest.raises(ValueError, match="1-D"):
        factorize(np.zeros((2, 2), dtype=object))


@pytest.mark.parametrize("values", [np.array([5, 3, 5, 0, 9, 3]), np.array([7], dtype=np.uint16),
                                    np.array([2**40, 3, 2**40]), np.array([-4, 2, -4, 0])])
def test_factorize_integers_equals_sorted_unique(values):
    """Small non-negative ids take a presence table, others a sort: both give np.unique's answer."""
    uniq, inv = factorize(values)
    expect_uniq, expect_inv = np.unique(values, return_inverse=True)
    assert uniq.dtype == object and uniq.tolist() == expect_uniq.tolist()
    np.testing.assert_array_equal(inv, expect_inv)
    assert inv.dtype == np.intp


@pytest.mark.parametrize("m", [10, 64])
def test_uniform_over_cells(m):
    """Chi-square of the values of each row over [m], 20 000 items (Bonferroni over rows)."""
    fam = HashFamily(k=4, m=m, seed=5)
    for row in fam.hash(WORDS):
        assert_chisquare_gof(np.bincount(row, minlength=m), np.full(m, 1 / m), alpha=1e-4 / 4,
                             what=f"row values over [{m}]")


def test_collisions_of_a_pair_are_binomial_over_rows():
    """Independent rows: the number of rows where two items collide is Binomial(k, 1/m).

    Disjoint pairs are independent, so the histogram of collision counts over 2 000 pairs is
    chi-square tested against Binomial(k, 1/m) (tail merged). Kirsch–Mitzenmacher double hashing
    fails this (a pair collides in ⌈k/m⌉ rows or in none; see hashing's docstring).
    """
    k, m = 64, 8
    fam = HashFamily(k=k, m=m, seed=11)
    H = fam.hash(WORDS[:4000])
    counts = (H[:, 0::2] == H[:, 1::2]).sum(axis=0)
    pmf = stats.binom.pmf(np.arange(k + 1), k, 1 / m)
    top = 18  # merge the tail (expected count < 5 beyond)
    obs = np.r_[np.bincount(counts, minlength=k + 1)[:top], (counts >= top).sum()]
    assert_chisquare_gof(obs, np.r_[pmf[:top], pmf[top:].sum()], what="collision rows per pair")


def test_gamma_mean_is_one_over_m_and_summary():
    fam = HashFamily(k=16, m=32, seed=2)
    g = fam.gamma(WORDS[:3001], WORDS[0])
    assert g[0] == 1.0
    # γ over 3000 other items: mean of 48 000 independent Bernoulli(1/m) collisions
    assert_z(g[1:].mean(), 1 / 32, np.sqrt(31 / 32 ** 2 / 48_000), what="mean γ")
    s = fam.collision_summary(WORDS[:300])
    assert s["pairs"] == 300 * 299 // 2
    G = fam.collision_counts(WORDS[:300])
    np.testing.assert_array_equal(G, G.T)
    np.testing.assert_array_equal(np.diag(G), 16)
    np.testing.assert_allclose(G[0] / 16, fam.gamma(WORDS[:300], WORDS[0]))


@pytest.mark.parametrize("m", [2, 1024, 1 << 16, 1000])
def test_evaluate_is_the_multiply_shift_formula(m):
    """h_l(d) = ⌊(((A·x₀ + B·x₁ + C) mod 2^64) >> 32)·m / 2^32⌋ in exact integers — also for m = 2^w, where
    the code takes one shift by 64 − w instead."""
    fam = HashFamily(k=5, m=m, seed=3)
    keys = fam.keys(["a", "bb", "ccc", 7, 12345])
    rows = np.array([0, 4, 2, 1, 3])
    A, B, C = (fam.row_params[t].tolist() for t in range(3))
    expect = [((((A[r] * (int(x) & 0xFFFFFFFF) + B[r] * (int(x) >> 32) + C[r]) % 2 ** 64) >> 32) * m) >> 32
              for r, x in zip(rows.tolist(), keys.tolist())]
    assert fam.evaluate(rows, keys).tolist() == expect
