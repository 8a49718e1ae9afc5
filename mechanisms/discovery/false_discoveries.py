"""Invented words: the threshold that bounds how many a discovery run publishes, and the statement of
how many to expect — docs/math.md §10.10.

An *invented* word is one that no device typed. Every discovery protocol of ldpsim decides which
candidates to keep from a count, and for a candidate nobody holds (an *empty* candidate) that count
has an exact null law: each of the n devices raises it independently with one probability q₀, so it
is Bin(n, q₀) — GRR's output count (q₀ = q), OUE's bit count (q₀ = q), a local-hashing support
(q₀ = 1/g, over the hash pool) and a count-mean-sketch sum (q₀ = f + (1 − 2f)/m, over the family).
A test of |C| candidates that keeps those with count ≥ t,

    t = min{ t : |C|·P[Bin(n, q₀) ≥ t] ≤ α },

lets through |C₀|·P[Bin(n, q₀) ≥ t] ≤ α empty candidates on average (|C₀| ≤ |C| the empty ones),
whatever n, ε and |C| (Bonferroni: a union bound, with no assumption on the dependence between
candidates). An invented word is an empty candidate that passed the test of the round that completed
it, so a run whose R tests get α = rate/R each publishes at most ``rate`` invented words on average.
A fixed hash pool or family adds to an empty candidate's count the excess of its collisions with
frequent words; :func:`peel_collisions` takes off that of the words kept before it.

>>> t = count_threshold(1_000_000, 1e-4, 50_000, 0.05)
>>> bool(expected_false(1_000_000, 1e-4, 50_000, t) <= 0.05 < expected_false(1_000_000, 1e-4, 50_000, t - 1))
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ldpsim.mechanisms._validation import check_real

#: expected invented words per run, the default of every discovery protocol (docs/math.md §10.10)
DEFAULT_FALSE_DISCOVERIES = 0.05


def check_rate(name: str, rate) -> float:
    """The ``false_discoveries`` parameter: expected invented words per run, a float in (0, inf)."""
    return check_real(name, "false_discoveries", rate, 0.0, math.inf)


def sketch_null_share(flip: float, m: int) -> float:
    """q₀ of a count-mean sketch: a user whose word is not x sets the bit read for x with probability
    f + (1 − 2f)/m over a random member of the hash family (it lands on x's column w.p. 1/m)."""
    return flip + (1 - 2 * flip) / m


def selection_cut(n: int, q0: float, tested: int, rate: float) -> tuple[int, float]:
    """(t, the expected invented words it lets through) for one-shot discovery's final test of ``tested``
    candidates at ``rate`` invented words per run (module docstring)."""
    t = count_threshold(n, q0, tested, rate)
    return t, expected_false(n, q0, tested, t)


def peel_collisions(sums: np.ndarray, t: int, excess_of, holders, limit: int) -> np.ndarray:
    """Which candidates still reach t once the hash-collision excess of the words kept before them is
    taken off (docs/math.md §10.10). ``sums``: the candidates' counts, in decreasing order;
    ``excess_of(j)``: the j × j matrix whose [a, b] is the expected extra count of candidate a per
    holder of candidate b under the fixed hash pool or family ((p − q)(γ_ab − 1/g) for PEM,
    (1 − 2f)(γ_ab − 1/m) for a count-mean sketch) for the first j; ``holders(s)``: the holders
    estimated from a corrected count s. Returns the positions of the first ``limit`` kept (a greedy
    pass over a prefix of the list keeps what it would keep over the whole list, so the prefix grows
    only until ``limit`` are kept)."""
    size = min(sums.size, 2 * limit + 16)
    while size:
        excess = excess_of(size)
        keep, held = np.zeros(size, dtype=bool), np.zeros(size)
        for i in range(size):  # the candidates above t, largest first: a few dozen
            corrected = sums[i] - excess[i, keep] @ held[keep]
            if corrected >= t:
                keep[i], held[i] = True, holders(corrected)
        if keep.sum() >= limit or size == sums.size:
            return np.flatnonzero(keep)[:limit]
        size = min(sums.size, 2 * size)
    return np.zeros(0, dtype=np.int64)


def reach_level(t: int) -> float:
    """The level a count must reach to count as reaching t: t less a relative 10⁻⁹, for counts recovered
    from estimates (an integer count reaches t iff it is at least ⌈reach_level(t)⌉)."""
    return t - 1e-9 * max(t, 1)


def above(sums: np.ndarray, t: int) -> np.ndarray:
    """Positions of the counts that reach t (up to rounding of counts recovered from estimates),
    largest first."""
    passed = np.flatnonzero(sums >= reach_level(t))
    return passed[np.argsort(-sums[passed], kind="stable")]


def sketch_kept(cms, codes: np.ndarray, est: np.ndarray, n: int, t: int, limit: int) -> np.ndarray:
    """Positions in ``codes`` (estimates ``est`` from the count-mean sketch ``cms`` over n users), largest
    first, of at most ``limit`` whose sketch sum reaches t once the family's collisions with the words
    kept before them are taken off (:func:`peel_collisions`: excess (1 − 2f)(γ − 1/m) per holder, γ the
    share of rows where two codes collide)."""
    m = cms.m
    sums = sketch_counts(cms, est, n)
    order = above(sums, t)
    kept = peel_collisions(sums[order], t, lambda j: (1 - 2 * cms.flip) * (
        cms.collision_fractions(codes[order[:j]]) - 1.0 / m), lambda s: cms.estimates_from_sums(n, s), limit)
    return order[kept]


def sketch_counts(cms, est, n: int) -> np.ndarray:
    """The count-mean sketch sums behind estimates ``est`` over n users (``estimates_from_sums`` inverted)."""
    c, m = cms.c_eps, cms.m
    return (np.asarray(est) * (m - 1) / m + (c - 1) / 2 * n + n / m) / c


def over_cap(counts: np.ndarray, t: int, cap: int) -> int:
    """How many of a round's candidates whose count reaches the false-discovery bar t a cap of ``cap``
    survivors cuts (the cap keeps the largest counts, so the first ``cap`` of those above t stay): the
    *dropped* live prefixes a one-shot result reports (docs/math.md §10.10)."""
    return max(0, above(np.asarray(counts), t).size - cap)


def count_threshold(n: int, q0: float, tested: int, alpha: float) -> int:
    """t: the smallest count with ``tested``·P[Bin(n, q0) ≥ t] ≤ ``alpha`` (module docstring).

    scipy's inverse survival function gives the candidate; the two neighbours are checked against the
    survival function itself, so t is exact even where the inverse's numerical search is off by one.
    """
    if tested <= 0 or alpha >= tested:
        return 0
    level = alpha / tested
    t = int(stats.binom.isf(level, n, q0)) + 1
    while t > 0 and stats.binom.sf(t - 2, n, q0) <= level:
        t -= 1
    while stats.binom.sf(t - 1, n, q0) > level:
        t += 1
    return t


def expected_false(n: int, q0: float, tested: int, t) -> float:
    """``tested``·P[Bin(n, q0) ≥ t]: the expected number of empty candidates among ``tested`` whose
    count reaches t — an upper bound on the invented words the test lets through."""
    return float(tested * stats.binom.sf(t - 1, n, q0)) if tested > 0 else 0.0
