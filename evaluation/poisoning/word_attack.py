"""Fake reports that push a made-up word into a discovery protocol's top list — docs/math.md §7.5.

The maximal gain attack (Cao, Jia, Gong 2021) carried over to discovery (derived here): a discovery
protocol splits its users into rounds (PEM's groups, TreeHist's levels, SFP's fragment positions) and
estimates, in each round, prefixes or fragments of candidate words with a linear estimator. Fake report
number j goes to round j mod R (R rounds: the fakes are spread evenly) and is the report that supports
the target's piece of that round with no noise:

* PEM: group i, any hash index s (uniform), bucket y = H_s(prefix_i(target));
* TreeHist: level ℓ, a CMS report with +1 exactly at h_row(prefix_ℓ(target)) (uniform row);
* SFP: the word CMS report of the target's code (the word sketch holds every report), and position
  l's fragment CMS report with +1 exactly at h_row of the target's token at l (only position l's
  fragment sketch counts it, docs/math.md §7.4.1).

Each such report adds exactly ``c`` (:func:`contribution`) to its round's estimate of the target's
piece: PEM (1 − 1/g)/(p − 1/g) (a supporting report adds 1 to S_x and to n_i), the sketches
w/(w−1)·((c_ε + 1)/2 − 1/w) per supported token (the CMS maximal report, §7.5). Other candidates: in
PEM a fake hits their bucket w.p. γ (1/g over pools), which the n_i/g term takes back — mean zero; a
sketch's maximal report has no flips, so it *lowers* every other candidate of its sketch by
w/(w−1)·((c_ε − 1)/2 + 1/w − c_ε·γ) (γ ≈ 1/w the chance their columns coincide), which only helps the
target's rank. So, given the genuine aggregate A, the target's round-i estimate with m_i fakes in
round i is est_i(A) + m_i·c, and in PEM the target survives round i when that exceeds the round's
cut-off — the survivors-th largest estimate of the other candidates — and, in the last round, when
its support also reaches the count bar of the discovery's false-discovery rate (docs/math.md §10.10),
which holds a word back on the first nights (:func:`pem_fakes_needed`).
"""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.poisoning.attacks import fake_reports
from ldpsim.evaluation.poisoning.gains import fake_contribution
from ldpsim.mechanisms import PEM, SFP, TreeHist
from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.discovery.false_discoveries import DEFAULT_FALSE_DISCOVERIES
from ldpsim.mechanisms.discovery.pem import PEMReports
from ldpsim.mechanisms.discovery.sfp import SFPReports
from ldpsim.mechanisms.discovery.treehist import TreeHistReports
from ldpsim.mechanisms.discovery.words import top

PROTOCOLS = (PEM, TreeHist, SFP)


def _check(mech) -> None:
    if not isinstance(mech, PROTOCOLS):
        raise ValueError(f"The word attack is modelled for {[c.__name__ for c in PROTOCOLS]}; "
                         f"got {type(mech).__name__}.")


def rounds(mech) -> int:
    """R: PEM's groups, TreeHist's levels, SFP's fragment positions."""
    _check(mech)
    return mech.groups if isinstance(mech, PEM) else mech.levels if isinstance(mech, TreeHist) else mech.positions


def contribution(mech) -> float:
    """c: what one fake report adds to the count estimate of the target's piece in its round (module
    docstring; SFP: the word sketch's, :func:`sfp_contributions` gives both sketches')."""
    _check(mech)
    if isinstance(mech, PEM):
        return (1 - 1 / mech.g) / (mech.p - 1 / mech.g)
    if isinstance(mech, TreeHist):
        return fake_contribution(mech.cms, "mga", [0])
    return sfp_contributions(mech)[0]


def sfp_contributions(mech: SFP) -> tuple[float, float]:
    """(c of the word sketch, c of the fragment sketch per target token) of one SFP maximal report."""
    return fake_contribution(mech.word_cms, "mga", [0]), fake_contribution(mech.fragment_cms, "mga", [0])


def word_mga_reports(mech, target: str, n: int, rng=None):
    """``n`` maximal reports for the word ``target`` (report j in round j mod R; module docstring)."""
    _check(mech)
    n = check_int("word_mga_reports", "n", n, low=0)
    rng = as_generator(rng)
    rows = mech.codec.symbols([target])[0]
    where = np.arange(n) % rounds(mech)
    if isinstance(mech, PEM):
        code = mech.group_prefix_codes(rows)[0][where]
        seed = rng.integers(0, mech.pool, size=n)
        return PEMReports(where, seed, mech.hash_codes(seed, code))
    if isinstance(mech, TreeHist):
        codes = np.array([mech.codec.prefix_codes(rows, l + 1)[0] for l in range(mech.levels)])
        bits, row = _sketch_reports(mech.cms, codes[where], rng)
        return TreeHistReports(where, bits, row)
    code, tokens = mech.word_tokens(rows)
    word = fake_reports(mech.word_cms, "mga", [int(code[0])], n, rng)
    return SFPReports(*word, *_sketch_reports(mech.fragment_cms, tokens[0][where], rng), where)


def _sketch_reports(cms, codes: np.ndarray, rng):
    """CMS maximal reports, report u supporting codes[u] (one attack call per distinct code)."""
    bits = np.zeros((codes.size, -(-cms.m // 8)), dtype=np.uint8)
    row = np.zeros(codes.size, dtype=np.int64)
    for code in np.unique(codes):
        sel = np.flatnonzero(codes == code)
        bits[sel], row[sel] = fake_reports(cms, "mga", [int(code)], sel.size, rng)
    return bits, row


def round_sizes(mech, agg: Aggregate) -> np.ndarray:
    """n_i: reports per round of an aggregate (PEM groups, TreeHist levels, SFP fragment positions)."""
    _check(mech)
    if isinstance(mech, PEM):
        return agg.data[:, :, mech.g].sum(axis=1)
    if isinstance(mech, TreeHist):
        return np.array([mech.level_aggregate(agg, l).n for l in range(mech.levels)])
    return np.array([frag.n for frag in mech.parts(agg)[1]])


def fakes_per_round(mech, accepted: np.ndarray, days: int = 1) -> np.ndarray:
    """m_i: fake reports in each round over ``days`` days, from a day's accepted report indices."""
    return days * np.bincount(np.asarray(accepted, dtype=np.int64) % rounds(mech), minlength=rounds(mech))


def expected_count(mech, n_total: int, n_round: np.ndarray, m_round: np.ndarray) -> float:
    """Expected estimated count of a word no genuine user holds (collision bias aside: zero on average
    over hash families), given the reports: ``n_total`` in all, ``n_round`` per round (fakes included),
    ``m_round`` fakes per round. PEM and TreeHist scale the last round's estimate, (N/n_R)·m_R·c; SFP's
    word sketch covers every report, Σ_i m_i·c_word."""
    _check(mech)
    m_round = np.asarray(m_round, dtype=np.float64)
    if isinstance(mech, SFP):
        return float(m_round.sum() * sfp_contributions(mech)[0])
    return float(n_total / max(int(n_round[-1]), 1) * m_round[-1] * contribution(mech))


def pem_fakes_needed(mech: PEM, genuine: Aggregate, target: str, top_k: int, survivors: int | None = None,
                     false_discoveries: float = DEFAULT_FALSE_DISCOVERIES) -> dict:
    """Fakes each PEM group needs so that ``target`` survives every round of ``discover`` on ``genuine``
    plus the fakes (docs/math.md §7.5): round i < R keeps the ``survivors`` largest candidates; the
    target's piece x_i survives when est_i(x_i) + m_i·c exceeds the cut-off κ_i, the ``survivors``-th
    largest genuine estimate among the other candidates — the walk keeps x_i and the survivors − 1 best
    others, as the attacked walk does when x_i passes. The last group's m_R* is the smallest m with the
    target kept by its final test (:meth:`PEM.final_test`: support at least the count bar t(n_R + m) of
    the ``false_discoveries`` rate once the kept words' collision excess is off, then the ``top_k``
    largest) on n_R + m reports, the target's estimate est_R(x_R) + m·c and the others' genuine estimates
    plus the fakes' mean hits on them under the pool.

    Returns
    -------
    dict
        ``need`` (m_i* = max(0, (κ_i − est_i(x_i))/c) per group i < R, the last group's smallest m),
        ``cutoff`` κ_i (the last group: the ``top_k``-th largest other estimate), ``target_estimate``
        est_i(x_i), ``n_group`` (genuine reports per group).
    """
    if not isinstance(mech, PEM):
        raise ValueError(f"pem_fakes_needed: the mechanism must be PEM; got {type(mech).__name__}.")
    survivors = 2 * top_k if survivors is None else survivors
    x = mech.group_prefix_codes(mech.codec.symbols([target])[0])[0]
    c = contribution(mech)
    alive = np.zeros(0, dtype=np.int64)
    for l in range(mech.start - 1):
        alive = mech.codec.extend(alive, l)
    out = {"need": [], "cutoff": [], "target_estimate": [], "n_group": []}
    for i in range(mech.groups):
        last = i == mech.groups - 1
        keep = top_k if last else survivors
        cand = mech.codec.extend(alive, mech.start - 1 + i)
        cand = cand[cand != x[i]]
        est, n_i = mech.group_estimate(genuine, i, np.r_[cand, x[i]])
        est, own = est[:-1], float(est[-1])
        order = np.sort(est)[::-1]
        cut = float(order[keep - 1]) if order.size >= keep else -np.inf
        if last:
            need = _final_need(mech, np.r_[cand, x[i]], np.r_[est, own], n_i, top_k, false_discoveries)
        else:
            need = max(0.0, (cut - own) / c)
        out["need"].append(need)
        out["cutoff"].append(cut)
        out["target_estimate"].append(own)
        out["n_group"].append(n_i)
        alive = np.r_[top(cand, est, keep - 1)[0], x[i]]
    return {k: np.asarray(v) for k, v in out.items()}


def pem_fake_drift(mech: PEM, codes: np.ndarray, target_code: int) -> np.ndarray:
    """Mean move of a PEM group's count estimate of each prefix in ``codes`` per maximal report for the
    prefix ``target_code`` (docs/math.md §7.5): (γ_v − 1/g)/(p − 1/g), γ_v the share of the pool under
    which v and the target hash alike (the fake's hash index is uniform, its bucket the target's);
    c for the target itself (γ = 1). Zero on average over pools, not for one pool."""
    codes = np.asarray(codes, dtype=np.int64)
    h = mech.hash_codes(np.arange(mech.pool)[:, None], np.r_[codes, target_code][None, :])
    return ((h[:, :-1] == h[:, -1:]).mean(axis=0) - 1.0 / mech.g) / (mech.p - 1.0 / mech.g)


def _final_need(mech: PEM, cand: np.ndarray, est: np.ndarray, n_i: int, top_k: int, rate: float) -> float:
    """The smallest m ≥ 0 with the last candidate of ``cand`` (the target) kept by :meth:`PEM.final_test`
    once m fakes join the group (docs/math.md §7.5): each adds a report and moves candidate v's estimate
    by (1[H_s(v) = H_s(x)] − 1/g)/(p − 1/g), of mean (γ_v − 1/g)/(p − 1/g) over its uniform hash index s,
    γ_v the share of the pool where v and the target x collide (γ_x = 1: the target gains c). The
    target's support gains 1 a fake and the count bar at most 1, so being kept grows with m (up to the
    drift of the kept words' collision excess, a fraction of a fake): a doubling search and a bisection
    find m; inf if 2^40 fakes do not. The fakes' hits scatter around these means (the prediction's
    error, about a fake)."""
    drift = pem_fake_drift(mech, cand, int(cand[-1]))

    def kept(m: int) -> bool:
        return bool((mech.final_test(cand, est + m * drift, n_i + m, top_k, rate)[0] == cand[-1]).any())

    if kept(0):
        return 0.0
    low, high = 0, 1
    while not kept(high):
        if high >= 1 << 40:
            return np.inf
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if kept(mid) else (mid, high)
    return float(high)
