"""Discovery protocols SFP, PEM, TreeHist (docs/math.md §7.4): parameters, words and padding, wire form,
mergeable aggregates, the privacy boundary from each protocol's own probabilities, direct ≡ per-user
in distribution (aggregates and discovery results), unbiased estimates of discovered words."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms import make
from ldpsim.mechanisms.discovery.pem import PEM
from ldpsim.mechanisms.discovery.sfp import SFP
from ldpsim.mechanisms.discovery.treehist import TreeHist
from ldpsim.mechanisms.discovery.words import DEFAULT_ALPHABET, WordCodec
from tests.stats import assert_mean, assert_same_distribution, assert_variance, assert_z

#: tiny configurations: every cell of the aggregate is hit often, collisions matter
SMALL = {
    "sfp": dict(epsilon=4.0, length=4, alphabet="abc", hash_bits=2, word_k=4, word_m=8, fragment_k=4, fragment_m=8),
    "pem": dict(epsilon=2.0, length=4, alphabet="abc", start=1, pool=8),
    "treehist": dict(epsilon=2.0, length=3, alphabet="abc", k=4, m=8),
}
WORDS = ("ab", "cab", "a", "bca", "cc")
COUNTS = (400, 250, 150, 100, 50)


def users(rng, counts=COUNTS, words=WORDS):
    vals = np.repeat(np.array(words, dtype=object), counts)
    return vals[rng.permutation(vals.size)]


@pytest.mark.parametrize("name,cls", [("sfp", SFP), ("pem", PEM), ("treehist", TreeHist)])
def test_registered(name, cls):
    assert isinstance(make(name, epsilon=1.0), cls)


@pytest.mark.parametrize("name,params,exc,text", [
    ("sfp", {"epsilon": -1.0}, ValueError, "'epsilon' parameter of SFP"),
    ("sfp", {"epsilon": 1.0, "word_share": 1.0}, ValueError, "'word_share'"),
    ("sfp", {"epsilon": 1.0, "length": 7}, ValueError, "even"),
    ("sfp", {"epsilon": 1.0, "hash_bits": 0}, ValueError, "'hash_bits'"),
    ("pem", {"epsilon": 1.0, "start": 0}, ValueError, "'start'"),
    ("pem", {"epsilon": 1.0, "pool": 2.0}, TypeError, "'pool'"),
    ("pem", {"epsilon": 1.0, "g": 1}, ValueError, "'g'"),
    ("treehist", {"epsilon": 1.0, "length": 40}, ValueError, "'length'"),
    ("treehist", {"epsilon": 1.0, "alphabet": "aa"}, ValueError, "'alphabet'"),
    ("treehist", {"epsilon": 1.0, "m": 1}, ValueError, "'m'"),
])
def test_parameters_validated(name, params, exc, text):
    with pytest.raises(exc, match=text):
        make(name, **params)


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("word,text", [("abd", "not in the alphabet"), ("abcab", "1 to"), ("", "1 to")])
def test_words_validated(name, word, text):
    with pytest.raises(ValueError, match=text):
        make(name, **SMALL[name]).perturb(["ab", word], rng=0)


def test_codec_padding_and_codes():
    codec = WordCodec(DEFAULT_ALPHABET, 8)
    words = ["the", "rizz😂", "niño", "a"]
    codes, inv = codec.word_codes(words)
    assert codec.decode(codes[inv], 8).tolist() == words
    rows, _ = codec.symbols(["ab"])
    assert rows.tolist() == [[1, 2, 0, 0, 0, 0, 0, 0]]  # padded with ∅ = 0
    ext = codec.extend(codec.prefix_codes(rows, 3), 3)  # "ab∅" extends only by ∅
    assert codec.decode(ext, 4).tolist() == ["ab"]
    assert codec.extend(np.zeros(0, dtype=np.int64), 0).size == codec.base - 1  # no word starts with ∅


@pytest.mark.parametrize("name", sorted(SMALL))
def test_wire_round_trip_and_errors(name):
    mech = make(name, **SMALL[name])
    reports = mech.perturb(users(np.random.default_rng(1)), rng=2)
    payload = mech.encode(reports)
    assert len(payload) == sum(COUNTS) * mech.report_bytes
    back = mech.decode(payload)
    assert all(np.array_equal(a, b) for a, b in zip(reports, back))
    with pytest.raises(ValueError, match="whole number"):
        mech.decode(payload[:-1])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_aggregates_merge(name):
    mech = make(name, **SMALL[name])
    vals = users(np.random.default_rng(3))
    r1, r2 = mech.perturb(vals[:500], rng=4), mech.perturb(vals[500:], rng=5)
    both = type(r1)(*(np.concatenate([a, b]) for a, b in zip(r1, r2)))
    merged = mech.aggregate(r1) + mech.aggregate(r2)
    whole = mech.aggregate(both)
    assert merged.n == whole.n == vals.size
    assert np.array_equal(merged.data, whole.data)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_privacy_boundary_exact(name):
    """max over reports and neighbours of log P[r|x] − log P[r|x'] is exactly ε (attained, never
    exceeded), computed from the protocol's own probabilities; the parts compose to ε."""
    mech = make(name, **SMALL[name])
    assert math.isclose(sum(mech.privacy_parts().values()), mech.epsilon, rel_tol=1e-12)
    x = "cab"
    reports = mech.perturb(np.array([x] * 20000, dtype=object), rng=6)
    ll_x = mech.log_likelihood(reports, np.array([x] * 20000, dtype=object))
    worst = -np.inf
    for other in WORDS:
        ll_o = mech.log_likelihood(reports, np.array([other] * 20000, dtype=object))
        worst = max(worst, float((ll_x - ll_o).max()))
    assert math.isclose(worst, mech.epsilon, rel_tol=1e-9), (worst, mech.epsilon)


def _discovery_vector(mech, agg, top_k=3):
    """Per word: its estimate if discovered, else 0 (the whole result as numbers)."""
    res = mech.discover(agg, top_k=top_k)
    found = dict(zip(res.words.tolist(), res.counts.tolist()))
    return [found.get(w, 0.0) for w in WORDS]


@pytest.mark.filterwarnings("ignore:ks_2samp. Exact calculation unsuccessful")  # scipy then uses asymp
@pytest.mark.parametrize("name", sorted(SMALL))
def test_direct_equals_reports_in_distribution(name):
    """The drawn aggregate has the per-user path's law cell by cell, and so has discovery on it."""
    mech = make(name, **SMALL[name])
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(7).spawn(600)]
    direct = [mech.sample_aggregate(COUNTS, r, WORDS) for r in rngs[:300]]
    per_user = [mech.aggregate(mech.perturb(users(r), r)) for r in rngs[300:]]
    assert_same_distribution(np.array([a.data.ravel() for a in direct]),
                             np.array([a.data.ravel() for a in per_user]), what=f"{name} aggregate")
    assert_same_distribution(np.array([_discovery_vector(mech, a) for a in direct]),
                             np.array([_discovery_vector(mech, a) for a in per_user]), what=f"{name} discovery")


#: realistic sizes: heavy words are discovered every time, so selection does not bias their estimates
#: (SFP's word share pinned at 0.3, its default: at 0.2 one per-user run missed the 4th heavy word in its top 5)
LARGE = {
    "sfp": dict(epsilon=4.0, length=4, alphabet="abcdefgh", hash_bits=4, word_share=0.3, word_k=64, word_m=256,
                fragment_k=16, fragment_m=256),
    "pem": dict(epsilon=4.0, length=4, alphabet="abcdefgh", start=1, pool=256),
    "treehist": dict(epsilon=4.0, length=4, alphabet="abcdefgh", k=64, m=256),
}
LARGE_WORDS = ("bad", "cafe", "head", "fac", "edge", "age", "bee", "dead", "ace", "he")
LARGE_COUNTS = (30000, 24000, 18000, 12000, 8000, 3000, 2000, 1500, 1000, 500)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LARGE))
def test_discovered_estimates_unbiased(name):
    """Over random hash families (a new seed per repeat) the estimates of always-discovered heavy
    words average to their true counts (z-test with the repeats' own s.d., Bonferroni over words)."""
    reps, heavy = 200, 5
    estimates = []
    for rep, rng in enumerate(np.random.SeedSequence(11).spawn(reps)):
        mech = make(name, **LARGE[name], seed=rep)
        res = mech.discover(mech.sample_aggregate(LARGE_COUNTS, np.random.default_rng(rng), LARGE_WORDS), top_k=5)
        found = dict(zip(res.words.tolist(), res.counts.tolist()))
        assert set(LARGE_WORDS[:heavy]) <= set(found), (rep, found)
        estimates.append([found[w] for w in LARGE_WORDS[:heavy]])
    est = np.array(estimates)
    assert_z(est.mean(axis=0), LARGE_COUNTS[:heavy], est.std(axis=0, ddof=1) / math.sqrt(reps),
             what=f"{name} mean estimate of discovered words")
    # and their mean squared error is the family-averaged closed form (z on the mean of the squared
    # errors with their own s.d.: no normality needed; α = 1e-3, Bonferroni over words)
    sq = (est - np.asarray(LARGE_COUNTS[:heavy], float)) ** 2
    assert_z(sq.mean(axis=0), make(name, **LARGE[name]).family_averaged_mse(LARGE_COUNTS, LARGE_WORDS)[:heavy],
             sq.std(axis=0, ddof=1) / math.sqrt(reps), alpha=1e-3, what=f"{name} family-averaged MSE")


def _discovered(mech, agg, heavy, top_k=5):
    res = mech.discover(agg, top_k=top_k)
    found = dict(zip(res.words.tolist(), res.counts.tolist()))
    assert set(LARGE_WORDS[:heavy]) <= set(found), found  # selection cannot bias these words
    return [found[w] for w in LARGE_WORDS[:heavy]]


def _check_moments(mech, estimates, counts, heavy, what):
    """Mean by z against truth + bias, variance by χ² against the closed form (α = 1e-3 each,
    Bonferroni over the words inside tests/stats)."""
    bias, var = mech.bias(counts, LARGE_WORDS)[:heavy], mech.variance(counts, LARGE_WORDS)[:heavy]
    mean = np.asarray(counts[:heavy], float) + bias
    assert_mean(estimates, mean, var, alpha=1e-3, what=f"{what} mean")
    assert_variance(estimates, mean, var, alpha=1e-3, what=f"{what} variance")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LARGE))
def test_discovered_estimates_match_closed_form_direct(name):
    """For one fixed hash family, the estimates of always-discovered words over 400 direct draws have
    the closed-form mean (truth + collision bias) and variance (split + scaling included, §7.4.1)."""
    mech = make(name, **LARGE[name])
    est = [_discovered(mech, mech.sample_aggregate(LARGE_COUNTS, np.random.default_rng(s), LARGE_WORDS), 5)
           for s in np.random.SeedSequence(12).spawn(400)]
    _check_moments(mech, np.array(est), LARGE_COUNTS, 5, f"{name} direct")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LARGE))
def test_discovered_estimates_match_closed_form_per_user(name):
    """The same closed forms on the per-user path (300 runs of 10⁴ users each; the 4 heaviest words)."""
    mech = make(name, **LARGE[name])
    counts = tuple(c // 10 for c in LARGE_COUNTS)
    est = []
    for s in np.random.SeedSequence(13).spawn(300):
        rng = np.random.default_rng(s)
        est.append(_discovered(mech, mech.aggregate(mech.perturb(users(rng, counts, LARGE_WORDS), rng)), 4))
    _check_moments(mech, np.array(est), counts, 4, f"{name} per-user")


def test_split_moments_reduce_to_the_oracle():
    """One group (no split, no scaling): the variance is the oracle's own Σ_j counts[j]·τ[i, j] and the
    family-averaged MSE the sketch's own; the split's E[1/N] matches a direct sum."""
    from scipy import stats

    from ldpsim.mechanisms.discovery.theory import expected_inverse, split_moments
    rng = np.random.default_rng(0)
    counts = np.array([50.0, 30.0, 20.0])
    w, tau = rng.uniform(0, 0.2, (3, 3)), rng.uniform(0.5, 1.0, (3, 3))
    np.fill_diagonal(w, 1.0)
    bias, var = split_moments(counts, w, tau, 1)
    assert np.allclose(var, tau @ counts) and np.allclose(bias, w @ counts - counts)
    sfp = make("sfp", **LARGE["sfp"])  # SFP: one group, so the word sketch's own family-averaged variance
    codes = sfp.codec.word_codes(list(LARGE_WORDS))[0]
    assert np.allclose(sfp.family_averaged_mse(LARGE_COUNTS, LARGE_WORDS),
                       sfp.word_cms.family_averaged_variance(LARGE_COUNTS, codes), rtol=1e-12)
    k = np.arange(1, 101)
    assert expected_inverse(100, 0.25) == pytest.approx((stats.binom.pmf(k, 100, 0.25) / k).sum()
                                                        / (1 - 0.75 ** 100), rel=1e-12)


def test_theory_rejects_bad_input():
    mech = make("pem", **LARGE["pem"])
    with pytest.raises(ValueError, match="'items'"):
        mech.variance([1, 2])
    with pytest.raises(ValueError, match="at least one user"):
        mech.variance([0, 0], ["ab", "ba"])


@pytest.mark.parametrize("m, high", [(1024, 2 ** 32), (1024, 2 ** 62), (57, 2 ** 32), (57, 2 ** 62)])
def test_sketch_sums_match_the_hash_family(m, high):
    """The 32-bit-key shortcut (m a power of two) and the general path give Σ_l table[l, h_l(key)],
    for one table and for each of a stack of tables (SFP's per-position sketches)."""
    from ldpsim.mechanisms.hashing import HashFamily
    from ldpsim.mechanisms.discovery.words import sketch_sums

    fam = HashFamily(37, m, 5)
    rng = np.random.default_rng(0)
    tables = rng.integers(0, 100, (3, 37, m + 1))
    keys = rng.integers(0, high, 3000, dtype=np.uint64)
    cells = fam.evaluate(np.arange(37)[:, None], keys[None, :])
    expected = np.array([t[np.arange(37)[:, None], cells].sum(axis=0) for t in tables])
    assert np.array_equal(sketch_sums(fam, tables[0], keys), expected[0])
    assert np.array_equal(sketch_sums(fam, tables, keys), expected)


def _slot_by_slot_fragments(mech, agg, threshold, per_slot):
    """SFP's frequent fragments the plain way: per (hash r, position l) estimate every valid fragment
    (r, fragment) through CMS.estimate on position l's own aggregate, stable sort, keep the
    ``per_slot`` largest that reach threshold·σ_l (σ_l the noise s.d. of n_l users)."""
    _, frag_aggs = mech.parts(agg)
    cms, b = mech.fragment_cms, mech.codec.base
    out = np.full((1 << mech.hash_bits, mech.positions, per_slot), -1, dtype=np.int64)
    for r in range(1 << mech.hash_bits):
        for pos, frag_agg in enumerate(frag_aggs):
            n = frag_agg.n
            sigma = cms.m / (cms.m - 1) * math.sqrt(n * (cms.c_eps ** 2 - 1) / 4 + n / cms.m)
            frags = [s * b + t for s in range(b) for t in range(b)
                     if not (s == 0 and t != 0) and not (pos == 0 and s == 0)]
            est = cms.estimate(frag_agg, [r * b * b + f for f in frags])
            order = np.argsort(-est, kind="stable")[:per_slot]
            kept = [frags[i] for i in order if est[i] >= threshold * sigma]
            out[r, pos, :len(kept)] = kept
    return out


@pytest.mark.parametrize("per_slot", [1, 3, 16])
def test_sfp_fragments_match_slot_by_slot_reference(per_slot):
    """The vectorized server (one query over all tokens, integer ranks, argpartition) picks exactly the
    fragments of the slot-by-slot definition, ties (frequent with these small integer sketches) included."""
    mech = make("sfp", **SMALL["sfp"])
    for seed in range(5):
        agg = mech.sample_aggregate(COUNTS, np.random.default_rng(seed), WORDS)
        for threshold in (0.0, 1.5):
            assert np.array_equal(mech.frequent_fragments(agg, threshold, per_slot),
                                  _slot_by_slot_fragments(mech, agg, threshold, per_slot)), (seed, threshold)


def test_sfp_position_sketches_hold_their_own_users():
    """Per-user aggregate: position l's fragment sketch holds exactly the reports that sent l (n_l of
    them, its rows' sizes N_{l,j}); the n_l add up to n; the word sketch holds all n."""
    mech = make("sfp", **SMALL["sfp"])
    reports = mech.perturb(users(np.random.default_rng(21)), rng=22)
    word, frags = mech.parts(mech.aggregate(reports))
    assert word.n == sum(COUNTS) and len(frags) == mech.positions
    for pos, frag in enumerate(frags):
        mine = reports.position == pos
        assert frag.n == mine.sum() and frag.data[:, -1].sum() == frag.n
        assert np.array_equal(frag.data, mech.fragment_cms.aggregate(
            (reports.fragment_bits[mine], reports.fragment_row[mine])).data)


@pytest.mark.slow
def test_sfp_fragment_estimate_has_per_position_variance():
    """A fragment's estimate in position l's sketch is Σ over l's users of their CMS terms, each user in
    l w.p. 2/L: mean Σ_u w_u·2/L, variance Σ_u [(τ_u + w_u²)·2/L − w_u²·(2/L)²], (w_u, τ_u) the CMS
    per-user moments of the queried token and u's token at l (docs/math.md §7.4.1) — the noise of the
    n_l ≈ 2n/L users of l, not of all n. Over 1000 direct draws of 10⁴ users, z on the mean and χ² on
    the variance (α = 1e-3 each, Bonferroni over the tokens); a small word sketch, which plays no part."""
    mech = make("sfp", **{**LARGE["sfp"], "word_k": 2, "word_m": 8})
    true = tuple(c // 10 for c in LARGE_COUNTS)
    rows, inv = mech.codec.symbols(LARGE_WORDS)
    counts = np.bincount(inv, weights=true, minlength=rows.shape[0])
    _, tokens = mech.word_tokens(rows)
    share = 1.0 / mech.positions
    mean, var = [], []
    for pos in range(mech.positions):
        w, tau = mech.fragment_cms.user_model().moments(tokens[:, pos])  # [i, j]: query i, users of word j
        mean.append(share * w @ counts)
        var.append(((tau + w * w) * share - w * w * share ** 2) @ counts)
    est = []
    for s in np.random.SeedSequence(23).spawn(1000):
        _, frags = mech.parts(mech.sample_aggregate(true, np.random.default_rng(s), LARGE_WORDS))
        est.append(np.concatenate([mech.fragment_cms.estimate(a, tokens[:, pos]) for pos, a in enumerate(frags)]))
    est, mean, var = np.array(est), np.concatenate(mean), np.concatenate(var)
    assert_mean(est, mean, var, alpha=1e-3, what="SFP fragment estimate mean")
    assert_variance(est, mean, var, alpha=1e-3, what="SFP fragment estimate variance")


@pytest.mark.parametrize("params,n", [(dict(epsilon=8.0, length=4, alphabet="abc", pool=16), 40),  # sparse writes
                                      (dict(epsilon=1.0, length=4, alphabet="abc", pool=4), 3000)])  # bincount
def test_pem_aggregate_equals_the_dense_count_table(params, n):
    """PEM's aggregate (sparse writes into a zeroed table, or one bincount) equals the dense table built
    cell by cell: T[i, s, y] = reports (i, s, y), T[i, s, g] = reports (i, s) — and merges by addition."""
    mech = PEM(**params)
    words = np.array(["ab", "cab", "a", "bbbb", "c"])[np.random.default_rng(4).integers(0, 5, n)]
    reports = mech.perturb(words, rng=5)
    expect = np.zeros((mech.groups, mech.pool, mech.g + 1), dtype=np.int64)
    for i, s, y in zip(*reports):
        expect[i, s, y] += 1
        expect[i, s, mech.g] += 1
    agg = mech.aggregate(reports)
    np.testing.assert_array_equal(agg.data, expect)
    assert agg.data.dtype == np.int64 and agg.n == n
    half = n // 2
    parts = [mech.aggregate(type(reports)(*(a[sl] for a in reports))) for sl in (slice(0, half), slice(half, n))]
    np.testing.assert_array_equal(sum(parts).data, expect)


def test_packed_tables_sum_without_carries_at_their_largest_sums():
    """Stacked tables share one int64 word per cell in fields of w bits, w the bits of the largest
    possible sum; keys that hit every row's largest cell reach sums of 2^w − 1 in every table, and each
    table's sums still come out exactly."""
    from ldpsim.mechanisms.hashing import HashFamily
    from ldpsim.mechanisms.discovery.words import sketch_sums

    fam = HashFamily(8, 64, 3)
    keys = np.arange(4000, dtype=np.uint64)
    cells = fam.evaluate(np.arange(8)[:, None], keys[None, :])
    tables = np.zeros((5, 8, 65), dtype=np.int64)
    tables[:, np.arange(8), cells[:, 0]] = [1023] * 7 + [2 ** 13 - 1 - 7 * 1023]  # row maxima sum to 2^13 − 1
    assert tables[0].max(axis=1).sum() == 2 ** 13 - 1
    expected = np.array([t[np.arange(8)[:, None], cells].sum(axis=0) for t in tables])
    got = sketch_sums(fam, tables, keys)
    assert got[:, 0].tolist() == [2 ** 13 - 1] * 5 and np.array_equal(got, expected)


def test_pem_start_follows_the_alphabet():
    """Default start: the longest first prefix whose (b − 1)·b^(s−1) candidates stay within 2^16
    (docs/math.md §7.4.1); an explicit start is kept."""
    from ldpsim.mechanisms.discovery.pem import START_CANDIDATES, default_start

    for symbols, length, want in [(42, 8, 2), (26, 8, 3), (3, 2, 2), (255, 6, 2), (256, 6, 1), (1335, 6, 1)]:
        base = symbols + 1
        start = default_start(base, length)
        assert start == want, (symbols, length)
        assert (base - 1) * base ** (start - 1) <= START_CANDIDATES
        assert start == min(3, length) or (base - 1) * base ** start > START_CANDIDATES
    assert make("pem", epsilon=1.0, length=4, alphabet="abc").start == 3
    assert make("pem", epsilon=1.0, length=4, alphabet="abc", start=1).start == 1
