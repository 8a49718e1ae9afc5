"""CMS (docs/math.md §1.5) beyond the contract suite: client bit law, privacy boundary, γ theory over families,
exact counting, the sketch matrix M, the large-sketch direct sampler, wire errors."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

import ldpsim.mechanisms.binomial as binomial_module
from ldpsim.mechanisms import CMS
from ldpsim.mechanisms.binomial import binomial_rows
from ldpsim.mechanisms.sketches.cms import grouped_column_counts
from tests.stats import assert_chisquare_gof, assert_same_distribution, assert_variance, assert_z

ITEMS = ("the", "of", "and", "to", "a", "in")
COUNTS = np.array([300, 200, 100, 50, 30, 20])


@pytest.mark.parametrize("params, exc, name", [
    ({"k": 0}, ValueError, "k"), ({"k": 2.5}, TypeError, "k"), ({"m": 1}, ValueError, "m"),
    ({"m": 1 << 17}, ValueError, "m"), ({"seed": -1}, ValueError, "seed")])
def test_parameters_validated(params, exc, name):
    with pytest.raises(exc, match=f"'{name}' parameter of CMS"):
        CMS(**{"epsilon": 1.0, "k": 4, "m": 8, **params})


def test_items_required():
    cms = CMS(1.0, 4, 8)
    agg = cms.sample_aggregate(COUNTS, 0, ITEMS)
    with pytest.raises(ValueError, match="'items' is required"):
        cms.estimate(agg)
    with pytest.raises(ValueError, match="'items' is required"):
        cms.variance(COUNTS)


@pytest.mark.parametrize("n, groups, bits", [(3000, 3, 20), (5000, 900, 13), (0, 4, 8)])
def test_grouped_column_counts_matches_naive(n, groups, bits):
    rng = np.random.default_rng(1)
    dense = rng.random((n, bits)) < 0.3
    g = rng.integers(0, groups, n)
    expected = np.zeros((groups, bits), dtype=np.int64)
    np.add.at(expected, g, dense.astype(np.int64))
    np.testing.assert_array_equal(grouped_column_counts(np.packbits(dense, axis=1), g, groups, bits), expected)


def _bit_law(cms: CMS, n: int, seed: int):
    """Counts of +1 on the target bit h_j(d) and on all other bits, for n users holding the same item."""
    reports = cms.perturb(np.full(n, "the", dtype=object), seed)
    v = np.unpackbits(reports.bits, axis=1, count=cms.m).astype(bool)
    target = cms.family.hash_values(reports.row, np.full(n, "the", dtype=object))
    on = v[np.arange(n), target]
    return on.sum(), n - on.sum(), v.sum() - on.sum(), n * (cms.m - 1) - (v.sum() - on.sum())


def _check_bit_law(cms: CMS, n: int = 20_000, seed: int = 3):
    half = math.exp(cms.epsilon / 2)  # docs/math.md §1.5 from ε, independent of the mechanism's constants
    keep = half / (1 + half)
    on1, on0, off1, off0 = _bit_law(cms, n, seed)
    assert_chisquare_gof([on1, on0], [keep, 1 - keep], alpha=1e-4 / 2, what="target bit")
    assert_chisquare_gof([off1, off0], [1 - keep, keep], alpha=1e-4 / 2, what="other bits")


@pytest.mark.parametrize("eps, m", [(1.0, 16), (4.0, 10)])
def test_client_bit_probabilities(eps, m):
    """Target bit +1 w.p. 1 − f, every other bit +1 w.p. f = 1/(1+e^{ε/2}) (chi-square, α = 1e-4)."""
    _check_bit_law(CMS(eps, 5, m))


def test_bit_law_test_detects_a_wrong_flip_probability():
    cms = CMS(1.0, 5, 16)
    object.__setattr__(cms, "flip", 1.0 / (1.0 + math.exp(0.55)))  # planted bug: e^{0.55} for e^{0.5}
    with pytest.raises(AssertionError):
        _check_bit_law(cms)


@pytest.mark.parametrize("eps", [0.5, 2.0, 6.0])
def test_privacy_boundary_exact(eps):
    """Max over all reports of P[ṽ, j | d] / P[ṽ, j | d'] from the exact per-bit probabilities is e^ε,
    attained, for h_j(d) ≠ h_j(d') (when they collide in row j the ratio is 1)."""
    m = 6
    cms = CMS(eps, 3, m)
    p_on, p_off = cms.bit_probabilities()

    def likelihood(v, target):  # ∏_c P[bit c | one-hot at target]; the row has probability 1/k for both
        one_hot = np.arange(m) == target
        return np.prod(np.where(one_hot, np.where(v, p_on, 1 - p_on), np.where(v, p_off, 1 - p_off)))

    reports = np.array(list(itertools.product([False, True], repeat=m)))
    ratios = [likelihood(v, 0) / likelihood(v, 1) for v in reports]
    assert math.isclose(max(ratios), math.exp(eps), rel_tol=1e-12)
    assert math.isclose(min(ratios), math.exp(-eps), rel_tol=1e-12)
    assert math.isclose((p_on / p_off) ** 2, math.exp(eps), rel_tol=1e-12)  # ((1−f)/f)² = e^ε


def test_estimate_equals_spec_formula_on_the_matrix():
    """f̂(d) = m/(m−1)·((1/k)Σ_l M[l, h_l(d)] − n/m), M accumulated from the reports as in docs/math.md §1.5."""
    cms = CMS(2.0, 4, 10, seed=5)
    rng = np.random.default_rng(0)
    values = np.repeat(np.array(ITEMS, dtype=object), COUNTS)
    reports = cms.perturb(values, rng)
    v = 2.0 * np.unpackbits(reports.bits, axis=1, count=cms.m) - 1  # ±1
    M = np.zeros((cms.k, cms.m))
    np.add.at(M, reports.row, cms.k * (cms.c_eps / 2 * v + 0.5))
    agg = cms.aggregate(reports)
    np.testing.assert_allclose(cms.sketch_matrix(agg), M, rtol=1e-12)
    H = cms.family.hash(ITEMS)
    spec = cms.m / (cms.m - 1) * (M[np.arange(cms.k)[:, None], H].sum(axis=0) / cms.k - values.size / cms.m)
    np.testing.assert_allclose(cms.estimate(agg, ITEMS), spec, rtol=1e-9)


def test_bias_averages_to_zero_over_families():
    """Over 2000 independent families (seeds) the mean of the exact bias is 0 within a z-bound
    (α = 1e-4; sd from Var_family(bias) = (m/(m−1))²·Σ_{d'≠d} f(d')²·(m−1)/(m²k)), and its variance
    matches that formula (χ², α = 1e-4)."""
    k, m, seeds = 4, 8, 2000
    biases = np.array([CMS(1.0, k, m, seed=s).bias(COUNTS, ITEMS) for s in range(seeds)])
    sq_others = (COUNTS ** 2).sum() - COUNTS ** 2
    var = (m / (m - 1)) ** 2 * sq_others * (m - 1) / (m ** 2 * k)
    assert_z(biases.mean(axis=0), 0.0, np.sqrt(var / seeds), what="mean bias over families")
    assert_variance(biases, 0.0, var, what="bias variance over families")


@pytest.mark.slow
def test_family_averaged_variance_is_mean_mse_over_families():
    k, m, seeds = 4, 8, 2000
    mse = np.array([CMS(1.0, k, m, seed=s).mse(COUNTS, ITEMS) for s in range(seeds)])
    expected = CMS(1.0, k, m).family_averaged_variance(COUNTS, ITEMS)
    assert_z(mse.mean(axis=0), expected, mse.std(axis=0, ddof=1) / np.sqrt(seeds),
             what="mean MSE over families")


def test_direct_sampler_on_guide_tables_matches_reports_path(monkeypatch):
    """With guide tables forced on for every row size (normally only sizes with ≥ 2^12 + n cells use
    them, so the contract suite's small sketches never do), the direct sampler has the law of the
    aggregated reports."""
    monkeypatch.setattr(binomial_module, "_TABLE_MIN_CELLS", -(1 << 30))
    cms = CMS(2.0, 3, 10, seed=1)
    users = np.repeat(np.array(ITEMS, dtype=object), COUNTS)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(8).spawn(400)]
    direct = [cms.sample_aggregate(COUNTS, r, ITEMS).data.ravel() for r in rngs[:200]]
    reports = [cms.aggregate(cms.perturb(users, r)).data.ravel() for r in rngs[200:]]
    assert_same_distribution(np.array(direct), np.array(reports), what="guide-table sampler vs reports")


@pytest.mark.parametrize("m", [16, pytest.param(4096, marks=pytest.mark.slow)])  # occupied cells by bincount (k·m ≤ 2n); by sort, on guide tables
def test_direct_sampler_total_of_ones(m):
    """Every bit is an independent Bernoulli (1 − f at the user's cell, f elsewhere), so the sketch's
    total of ones has mean n(1 − f + (m−1)f) and variance n·m·f(1−f) however the cells are occupied.
    300 one-user tokens and one popular token over k = 64 rows (N_j ≈ 9, so a cell's law shows in
    the total) give cells with T = 0, 1 and many; z on the mean and χ² on the variance over 2000 draws."""
    tokens = [f"t{i}" for i in range(300)] + ["the"]
    counts = np.r_[np.ones(300, dtype=int), 300]
    cms = CMS(2.0, 64, m, seed=3)
    n, f = counts.sum(), cms.flip
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(9).spawn(2000)]
    totals = np.array([cms.sample_aggregate(counts, r, tokens).data[:, :m].sum() for r in rngs])
    mean, var = n * (1 - f + (m - 1) * f), n * m * f * (1 - f)
    assert_z(totals.mean(), mean, np.sqrt(var / totals.size), what="total of ones")
    assert_variance(totals[:, None], mean, var, what="total of ones")


@pytest.mark.parametrize("p, n_row, cols", [
    (0.119, [0, 3, 40, 3000], 40_000), (0.5, [0, 3, 40, 3000], 40_000),
    (0.3, [0] + [3] * 40 + [40] * 40 + [3000] * 40, 100)])
def test_binomial_rows_law(p, n_row, cols):
    """Each row size of binomial_rows gives Binomial(n_j, p): chi-square on the draws of each size (tails
    merged), including a large n where many guide-table intervals are ambiguous (Bonferroni over 3
    sizes); the last case has 4 000 < 2^12 + n cells per size, so it takes the rng.binomial path."""
    n_row = np.array(n_row)
    out = np.empty((n_row.size, cols), dtype=np.int64)
    binomial_rows(out, n_row, p, np.random.default_rng(6))
    assert np.all(out[n_row == 0] == 0)
    for n in (3, 40, 3000):
        draws = out[n_row == n].ravel()
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        keep = np.flatnonzero(pmf * draws.size >= 5)  # merge both tails into the edge categories
        edges = np.r_[keep[0], keep[1:], n + 1]
        obs = np.histogram(draws, bins=np.r_[0, edges[1:-1], n + 1])[0]
        exp = np.add.reduceat(pmf, np.r_[0, edges[1:-1]])
        assert_chisquare_gof(obs, exp / exp.sum(), alpha=1e-4 / 3, what=f"Binomial({n}, {p}) row")


class _RecordingBits:
    """A bit generator stand-in that keeps every ``random_raw`` draw, to replay binomial_rows' uniforms."""

    def __init__(self, seed):
        self.bits, self.draws = np.random.PCG64(seed), []

    def random_raw(self, size):
        self.draws.append(self.bits.random_raw(size))
        return self.draws[-1]


@pytest.mark.parametrize("n, p", [(3000, 0.3), (15, 0.119), (40_000, 0.5)])
def test_binomial_rows_is_the_inverse_cdf_of_its_uniforms(n, p):
    """Exactness, not just in law: every draw equals searchsorted(CDF, U, 'right') for the 53-bit U
    made of the 16 table bits and, in ambiguous intervals, the 37 bits drawn after them; in the other
    intervals both ends of the interval give the table's answer."""
    out = np.empty((2, 40_000), dtype=np.int64)
    bits = _RecordingBits(7)
    binomial_rows(out, np.array([n, n]), p, SimpleNamespace(bit_generator=bits))
    top = bits.draws[0].view(np.uint16)[:out.size].astype(np.uint64)
    cdf = stats.binom.cdf(np.arange(n + 1), n, p)
    cdf[-1] = 1.0
    lowest, highest = (top << np.uint64(37)) * 2.0 ** -53, ((top + np.uint64(1)) << np.uint64(37)) - np.uint64(1)
    at_lowest = np.searchsorted(cdf, lowest, side="right")
    ambiguous = at_lowest != np.searchsorted(cdf, highest * 2.0 ** -53, side="right")
    assert len(bits.draws) == 2 and 0 < ambiguous.sum() < 0.02 * top.size
    expected = at_lowest
    u = ((top[ambiguous] << np.uint64(37)) | (bits.draws[1] >> np.uint64(27))) * 2.0 ** -53
    expected[ambiguous] = np.searchsorted(cdf, u, side="right")
    np.testing.assert_array_equal(out.ravel(), expected)


def test_wire_errors():
    cms = CMS(1.0, 3, 10)
    reports = cms.perturb(np.array(ITEMS, dtype=object), 0)
    assert cms.report_bytes == 2 + 1
    payload = bytearray(cms.encode(reports))
    with pytest.raises(ValueError, match="not a whole number"):
        cms.decode(bytes(payload[:-1]))
    bad_row = bytearray(payload)
    bad_row[2] = 7  # row 7 ≥ k = 3
    with pytest.raises(ValueError, match="row indices"):
        cms.decode(bytes(bad_row))
    bad_pad = bytearray(payload)
    bad_pad[1] |= 0x01  # a padding bit beyond bit m − 1 = 9
    with pytest.raises(ValueError, match="padding bits"):
        cms.decode(bytes(bad_pad))
    with pytest.raises(ValueError, match="bits must be uint8"):
        cms.aggregate((reports.bits[:, :1], reports.row))
    empty = cms.perturb(np.array([], dtype=object), 0)
    assert cms.encode(empty) == b"" and cms.aggregate(cms.decode(b"")).n == 0
