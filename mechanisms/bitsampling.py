"""Bit-level workhorses: exact Bernoulli(q) bits sixteen at a time, and column counts of packed bits.

A 16-bit word of independent Bernoulli(q) bits has the product distribution
P(w) = q^k (1−q)^(16−k), k = popcount(w), over 65,536 categories. :func:`bernoulli_words` samples
whole words from that distribution with Walker's alias method (Vose's construction): one 32-bit
random number per word (16 bits choose the bin, 16 compare with the bin's threshold; on a tie, which
happens with probability 2^-16, 32 more bits settle the comparison exactly).

Exactness: the table is built in integer arithmetic from the exact product probabilities of the
float ``q`` rounded to multiples of 2^-64, so the sampled word distribution is within total-variation
distance 2^-48 of the exact product distribution (far below float64 resolution of the probabilities
themselves). Bits within a word and across words are independent up to that rounding.
Because P(w) depends only on popcount(w), any fixed permutation of the 16 bit positions (e.g. byte
order) leaves the distribution unchanged.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from math import comb

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real

WORD_BITS = 16
_N_BINS = 1 << WORD_BITS
_UNIT_BITS = 64                     # probabilities are integers in units of 2^-64
_CAP = 1 << (_UNIT_BITS - WORD_BITS)  # mass of one alias bin: 2^48 units
_CHUNK = 1 << 16                    # words per vectorized step (temporaries stay in L2)
_GROUP = 255                        # rows summed in uint8 lanes before widening (255 ones fit)
_UNPACKED_BYTES = 1 << 21           # unpacked bits per counting step (~2 MiB)


def word_weights(q: float) -> list[int]:
    """Integer weights (units of 2^-64, summing to exactly 2^64) of the 65,536 16-bit words.

    Each weight is the exact product probability q^k (1−q)^(16−k) of the float ``q``, rounded to the
    nearest unit; the rounding remainder (at most 2^15 units) goes to the most likely word.
    """
    qf = Fraction(q)
    scale = 1 << _UNIT_BITS
    by_popcount = [round(qf ** k * (1 - qf) ** (WORD_BITS - k) * scale) for k in range(WORD_BITS + 1)]
    popcount = np.unpackbits(np.arange(_N_BINS, dtype=">u2").view(np.uint8)).reshape(-1, WORD_BITS).sum(1)
    weights = [by_popcount[k] for k in popcount.tolist()]
    total = sum(by_popcount[k] * comb(WORD_BITS, k) for k in range(WORD_BITS + 1))
    top = max(range(_N_BINS), key=weights.__getitem__)
    weights[top] += scale - total
    return weights


@functools.lru_cache(maxsize=64)
def alias_table(q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Alias table of the 16-bit word distribution, built exactly in integers (Vose's method).

    Returns ``(thresholds, aliases, packed)``: bin i keeps word i with probability
    thresholds[i] / 2^48 and otherwise yields aliases[i]; ``packed[i] = (thresholds[i] >> 32) << 16 |
    aliases[i]`` (uint32) is what the sampler reads. Bins that always keep their word have alias i.
    """
    w = word_weights(q)
    thresholds = [_CAP] * _N_BINS
    aliases = list(range(_N_BINS))
    small = [i for i in range(_N_BINS) if w[i] < _CAP]
    large = [i for i in range(_N_BINS) if w[i] >= _CAP]
    while small and large:
        s, g = small.pop(), large.pop()
        thresholds[s], aliases[s] = w[s], g
        w[g] -= _CAP - w[s]
        (small if w[g] < _CAP else large).append(g)
    # integer arithmetic: whatever is left has exactly _CAP and keeps its own word
    thr = np.array(thresholds, dtype=np.uint64)
    alias = np.array(aliases, dtype=np.uint64)
    thr_hi = np.minimum(thr >> np.uint64(32), np.uint64(0xFFFF))  # a full bin (2^48) has alias == itself
    packed = ((thr_hi << np.uint64(16)) | alias).astype(np.uint32)
    return thr, alias, packed


def bernoulli_words(q: float, n_words: int, rng=None) -> np.ndarray:
    """``n_words`` uint16 words whose 16·n_words bits are independent Bernoulli(q) (docs/math.md §1.7).

    Parameters
    ----------
    q : float
        Probability of a 1 bit, in [0, 1].
    n_words : int
        Number of 16-bit words, ≥ 0.
    rng : numpy.random.Generator, int or None
        Source of randomness (one 32-bit draw per word, rarely 32 more).

    Returns
    -------
    numpy.ndarray of uint16, shape (n_words,)

    Examples
    --------
    >>> w = bernoulli_words(0.25, 4096, rng=0)
    >>> bits = np.unpackbits(w.view(np.uint8))
    >>> bits.size, bool(abs(bits.mean() - 0.25) < 0.01)
    (65536, True)
    """
    q = check_real("bernoulli_words", "q", q, 0.0, 1.0, low_open=False, high_open=False)
    n_words = check_int("bernoulli_words", "n_words", n_words, low=0)
    rng = as_generator(rng)
    thr, _, packed = alias_table(q)
    out = np.empty(n_words, dtype=np.uint16)
    for start in range(0, n_words, _CHUNK):
        m = min(_CHUNK, n_words - start)
        r = rng.bit_generator.random_raw((m + 1) // 2).view(np.uint32)[:m]
        idx = r >> 16
        entry = packed.take(idx)
        margin = (entry >> 16).view(np.int32) - (r & 0xFFFF).view(np.int32)  # threshold − 16 random bits
        keep = margin > 0
        tie = np.flatnonzero(margin == 0)
        if tie.size:  # probability 2^-16 per word: compare 32 more random bits with the threshold's rest
            extra = rng.bit_generator.random_raw(tie.size) & np.uint64(0xFFFFFFFF)
            keep[tie] = extra < (thr[idx[tie]] & np.uint64(0xFFFFFFFF))
        block = out[start:start + m]
        np.copyto(block, entry, casting="unsafe")  # low 16 bits = alias
        np.copyto(block, idx, casting="unsafe", where=keep)
    return out


def packed_column_counts(rows: np.ndarray, n_bits: int) -> np.ndarray:
    """Number of ones in each of the first ``n_bits`` bit columns of bit-packed rows (``np.packbits``
    big-endian order: bit j of a row is bit 7 − j % 8 of byte j // 8), as an int64 array of length
    ``n_bits``; ``rows`` is a uint8 array of shape (n, ≥ ⌈n_bits/8⌉).

    Unpacks a few thousand rows at a time and sums groups of 255 rows in uint8 lanes before widening
    to int64, so the cost is about one pass over the unpacked bits and memory stays ~2 MiB.
    """
    counts = np.zeros(n_bits, dtype=np.int64)
    step = _GROUP * max(1, _UNPACKED_BYTES // (_GROUP * max(n_bits, 1)))
    for start in range(0, rows.shape[0], step):
        bits = np.unpackbits(rows[start:start + step], axis=1, count=n_bits)
        full = bits.shape[0] - bits.shape[0] % _GROUP
        if full:
            lanes = np.add.reduce(bits[:full].reshape(-1, _GROUP, n_bits), axis=1, dtype=np.uint8)
            counts += lanes.sum(axis=0, dtype=np.int64)
        counts += bits[full:].sum(axis=0, dtype=np.int64)
    return counts
