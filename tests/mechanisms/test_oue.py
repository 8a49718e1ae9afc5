"""OUE beyond the contract suite: parameters, the exact bit sampler, privacy at its boundary, wire form."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms import OUE, make
from ldpsim.mechanisms.bitsampling import alias_table, bernoulli_words, packed_column_counts, word_weights
from tests.stats import assert_chisquare_gof, assert_z


def _all_reports(d: int) -> np.ndarray:
    """Every possible report of an OUE over d items, as packed rows (2^d of them)."""
    bits = (np.arange(1 << d)[:, None] >> np.arange(d)[None, :]) & 1
    return np.packbits(bits.astype(np.uint8), axis=1)


def _report_distribution(mech: OUE, x: int) -> np.ndarray:
    """Exact P[report | x] over ``_all_reports`` (from the mechanism's log-likelihood)."""
    reports = _all_reports(mech.domain_size)
    return np.exp(mech.log_likelihood(reports, np.full(len(reports), x)))


# parameters ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, exc", [(1, ValueError), (0, ValueError), (2.0, TypeError), ("6", TypeError),
                                      (True, TypeError)])
def test_bad_domain_size(bad, exc):
    with pytest.raises(exc, match=r"'domain_size' parameter of OUE must be an int in the range \[2, 4294967296\]"):
        OUE(epsilon=1.0, domain_size=bad)


def test_values_outside_the_domain_are_rejected():
    mech = OUE(epsilon=1.0, domain_size=6)
    with pytest.raises(ValueError, match=r"item ids in \[0, 6\); got 6 at index 1"):
        mech.perturb([0, 6])
    with pytest.raises(ValueError, match=r"got -1 at index 0"):
        mech.perturb_aggregate([-1, 2])
    with pytest.raises(TypeError, match="integer item ids"):
        mech.perturb([0.0, 1.0])


def test_registry_and_probabilities():
    mech = make("oue", epsilon=2.0, domain_size=5)
    assert isinstance(mech, OUE) and repr(mech) == "OUE(epsilon=2.0, domain_size=5)"
    p, q = mech.bit_probabilities()
    assert p == 0.5 and q == 1 / (math.exp(2.0) + 1)


# the bit sampler ---------------------------------------------------------------------------------
@pytest.mark.parametrize("q", [1 / (math.e + 1), 1 / (math.exp(6) + 1), 0.5, 0.0, 1.0])
def test_alias_table_reproduces_the_rounded_product_distribution_exactly(q):
    thr, alias, _ = alias_table(q)
    cap = 1 << 48
    implied = [int(t) for t in thr]
    for i, (t, a) in enumerate(zip(thr.tolist(), alias.tolist())):
        if a != i:
            implied[a] += cap - t
    weights = word_weights(q)
    assert implied == weights and sum(weights) == 1 << 64
    # every weight is the exact product probability rounded to a unit of 2^-64, except that one word
    # absorbs the rounding remainder (at most 2^15 units): total-variation distance ≤ 2^-48
    qf = Fraction(q)
    rounded = [round(qf ** k * (1 - qf) ** (16 - k) * 2 ** 64) for k in range(17)]
    expect = np.array([rounded[bin(w).count("1")] for w in range(1 << 16)], dtype=object)
    off = np.flatnonzero(np.array(weights, dtype=object) != expect)
    assert off.size <= 1 and all(abs(weights[i] - expect[i]) <= 2 ** 15 for i in off)


def test_bernoulli_words_degenerate_probabilities():
    assert not bernoulli_words(0.0, 1000, rng=1).any()
    assert np.all(bernoulli_words(1.0, 1000, rng=1) == 0xFFFF)


@pytest.mark.parametrize("q", [1 / (math.e + 1), 0.02])
def test_bernoulli_words_bit_marginals_and_popcounts(q):
    """Each bit position is Bernoulli(q); popcounts are Binomial(16, q) (independence within a word)."""
    n = 100_000
    words = bernoulli_words(q, n, rng=np.random.default_rng(8))
    bits = np.unpackbits(words.view(np.uint8)).reshape(n, 16)
    ones = bits.sum(axis=0)
    assert_z(ones, n * q, math.sqrt(n * q * (1 - q)), alpha=1e-4 / 2, what="ones per bit position")
    popcount = np.bincount(bits.sum(axis=1), minlength=17)
    assert_chisquare_gof(popcount, stats.binom.pmf(np.arange(17), 16, q), alpha=1e-4 / 2, what="popcounts")


@pytest.mark.parametrize("q", [0.119, 0.5, 1e-5])
def test_bernoulli_words_follow_the_alias_rule_word_by_word(q):
    """Each word from 32 random bits r: bin i = r >> 16 keeps word i iff (r & 0xFFFF) < thresholds[i] >> 32
    (ties settled by 32 more bits), else yields aliases[i] — checked against that rule in plain Python on a
    replayed stream, so vectorization cannot change a single word."""
    thr, alias, _ = alias_table(q)
    n = 3 * (1 << 16) + 5  # several vectorized steps and a ragged last one
    words = bernoulli_words(q, n, rng=np.random.default_rng(11))
    replay = np.random.default_rng(11).bit_generator
    expect, step = [], 1 << 16
    for start in range(0, n, step):
        m = min(step, n - start)
        chunk = replay.random_raw((m + 1) // 2).view(np.uint32)[:m].tolist()
        ties = []
        for r in chunk:
            i, u = r >> 16, r & 0xFFFF
            hi = min(int(thr[i]) >> 32, 0xFFFF)
            expect.append(i if u < hi else int(alias[i]))
            if u == hi:
                ties.append((len(expect) - 1, i))
        extra = replay.random_raw(len(ties)).tolist() if ties else []
        for (pos, i), e in zip(ties, extra):
            expect[pos] = i if (e & 0xFFFFFFFF) < (int(thr[i]) & 0xFFFFFFFF) else int(alias[i])
    np.testing.assert_array_equal(words, np.array(expect, dtype=np.uint16))


def test_packed_column_counts_matches_unpacking():
    rng = np.random.default_rng(3)
    for n_bits, n_rows in [(13, 200_000), (2000, 1_300), (5, 7)]:
        rows = np.packbits(rng.random((n_rows, n_bits)) < 0.3, axis=1)
        expect = np.unpackbits(rows, axis=1, count=n_bits).sum(axis=0)
        np.testing.assert_array_equal(packed_column_counts(rows, n_bits), expect)


# client side ---------------------------------------------------------------------------------------
def test_reports_are_packed_rows_with_zero_padding():
    mech = OUE(epsilon=0.1, domain_size=13)
    reports = mech.perturb(np.arange(13).repeat(50), rng=0)
    assert reports.shape == (650, 2) and reports.dtype == np.uint8
    assert not np.any(reports[:, 1] & 0b00000111)  # items 13..15 do not exist


def test_bit_marginals_across_word_and_byte_boundaries():
    """D = 37 (five bytes, three 16-bit words): the true bit is Bernoulli(p), every other Bernoulli(q)."""
    mech = OUE(epsilon=1.0, domain_size=37)
    n, x = 40_000, 20
    counts = mech.aggregate(mech.perturb(np.full(n, x), rng=np.random.default_rng(12))).data
    prob = np.full(37, mech.q)
    prob[x] = mech.p
    assert_z(counts, n * prob, np.sqrt(n * prob * (1 - prob)), what="OUE per-bit counts")


def test_perturb_aggregate_equals_aggregate_of_perturb():
    mech = OUE(epsilon=1.0, domain_size=2000)  # ~1,000 users per batch: this spans three batches
    values = np.random.default_rng(0).integers(0, 2000, 3_000)
    batched = mech.perturb_aggregate(values, rng=9)
    whole = mech.aggregate(mech.perturb(values, rng=9))
    assert batched.n == whole.n == 3_000
    np.testing.assert_array_equal(batched.data, whole.data)


# privacy ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_exact_privacy_boundary_over_all_reports(epsilon):
    """Enumerate all 2^5 reports: rows sum to one and the largest ratio between inputs is exactly e^ε."""
    mech = OUE(epsilon=epsilon, domain_size=5)
    P = np.array([_report_distribution(mech, x) for x in range(5)])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    ratio = (P[:, None, :] / P[None, :, :]).max()
    p, q = mech.bit_probabilities()
    assert math.isclose(ratio, p * (1 - q) / (q * (1 - p)), rel_tol=1e-12)
    assert math.isclose(ratio, math.exp(epsilon), rel_tol=1e-12)


def test_client_reports_match_the_exact_report_distribution():
    """Empirical neighbour test: whole reports for inputs 0 and 1 against P[report | x] (64 categories)."""
    mech = OUE(epsilon=1.0, domain_size=6)
    rng = np.random.default_rng(5)
    for x in (0, 1):
        reports = mech.perturb(np.full(200_000, x), rng)
        category = np.unpackbits(reports, axis=1, count=6) @ (1 << np.arange(6))  # Σ_j b_j 2^j
        assert_chisquare_gof(np.bincount(category, minlength=64), _report_distribution(mech, x),
                             alpha=1e-4 / 2, what=f"OUE reports for input {x}")


def test_log_likelihood_checks_lengths():
    mech = OUE(epsilon=1.0, domain_size=6)
    with pytest.raises(ValueError, match="3 reports but 2 values"):
        mech.log_likelihood(mech.perturb([0, 1, 2], rng=0), [0, 1])


# wire form -------------------------------------------------------------------------------------------
def test_wire_round_trip_and_malformed_payloads():
    mech = OUE(epsilon=1.0, domain_size=10)
    reports = mech.perturb(np.arange(10), rng=1)
    payload = mech.encode(reports)
    assert len(payload) == 10 * 2
    np.testing.assert_array_equal(mech.decode(payload), reports)
    with pytest.raises(ValueError, match="not a whole number of 2-byte reports"):
        mech.decode(payload[:-1])
    bad = bytearray(payload)
    bad[3] |= 0b00000001  # report 1, a padding bit
    with pytest.raises(ValueError, match="report 1 has padding bits set beyond item 9"):
        mech.decode(bytes(bad))


def test_aggregate_rejects_unpacked_reports():
    mech = OUE(epsilon=1.0, domain_size=10)
    with pytest.raises(ValueError, match=r"uint8 array of shape \(n, 2\)"):
        mech.aggregate(np.zeros((4, 10), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"uint8 array of shape \(n, 2\)"):
        mech.aggregate(np.zeros((4, 2), dtype=np.int64))
