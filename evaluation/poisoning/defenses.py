"""Defenses against poisoning (Cao, Jia, Gong 2021, Section 6) — docs/math.md §7.5.

* :func:`norm_sub` — normalization: the estimated frequencies of the whole domain projected to a
  distribution by Norm-Sub (negatives to zero, then one constant subtracted from the positive ones so
  they sum to one; Wang et al., NDSS 2020), the post-processing the paper evaluates as "normalization".
* :func:`detect_fake_users` — fake-user detection (the paper's frequent-itemset idea, given there for
  OUE and OLH; here for every oracle whose report supports a set of items: the unary encodings OUE,
  SUE, THE; local hashing OLH, BLH, FLH; dBitFlip with its sampled buckets whose bit is 1):
  every MGA fake supports all r targets (dBitFlip: min(d, r)), while a genuine report supports a given
  set of r items only with probability ≈ Π q. The most co-supported pair of items seeds an itemset, grown greedily while
  at least half of its supporters stay; users supporting the whole set (|set| ≥ 2) are flagged — only
  when they are significantly more than independent supports would give (count > E + z·√E with
  E = N·Π_{i∈set} s_i, s_i the share of reports supporting i, z = 5), else nobody is.
  The server then estimates from the unflagged reports.
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms import FLH, OLH, DBitFlip, DBitFlipReports, FLHReports, OLHReports
from ldpsim.mechanisms.frequency.unary import UnaryEncoding

#: oracles whose reports support sets of items (fake-user detection applies)
DETECTABLE = (UnaryEncoding, OLH, FLH, DBitFlip)


def norm_sub(freqs) -> np.ndarray:
    """Project estimated frequencies onto the simplex: max(f − δ, 0) with δ chosen so they sum to one."""
    f = np.asarray(freqs, dtype=np.float64)
    s = np.sort(f)[::-1]
    cum = np.cumsum(s) - 1.0
    k = np.arange(1, f.size + 1)
    rho = np.flatnonzero(s - cum / k > 0)[-1]
    delta = cum[rho] / (rho + 1)
    return np.maximum(f - delta, 0.0)


def normalized_frequencies(mech, agg, items) -> np.ndarray:
    """A ``defense`` for :func:`.measure.measure_gain`: Norm-Sub of the estimates of every item."""
    return norm_sub(mech.estimate(agg, items) / agg.n)


def decoded_frequencies(mech, agg, items) -> np.ndarray:
    """RAPPOR's estimate by the paper's decoder (LASSO selection, least squares, Bonferroni cut-off at
    α = 0.05; unselected candidates count 0) instead of plain least squares, as frequencies. Not a
    linear estimator: no closed-form gain (docs/math.md §7.5)."""
    return mech.decode_candidates(agg, items).counts / agg.n


def support_matrix(mech, reports) -> np.ndarray:
    """Boolean N × D: does report u support item x (unary: bit x set; OLH: H_{s_u}(x) = y_u; FLH:
    H_{j_u}(x) = y_u; dBitFlip: x sampled with bit 1)?"""
    if isinstance(mech, UnaryEncoding):
        return np.unpackbits(np.asarray(reports), axis=1, count=mech.domain_size).astype(bool)
    items = np.arange(mech.domain_size, dtype=np.int64)
    if isinstance(mech, OLH):
        r = OLHReports(*reports)
        return mech.hash_items(r.seed[:, None], items[None, :]).astype(np.int64) == r.y[:, None]
    if isinstance(mech, FLH):
        r = FLHReports(*reports)
        return mech.hash_table()[r.index] == r.y[:, None]
    if isinstance(mech, DBitFlip):
        r = DBitFlipReports(*reports)
        out = np.zeros((r.buckets.shape[0], mech.domain_size), dtype=bool)
        out[np.arange(r.buckets.shape[0])[:, None], r.buckets] = r.bits.astype(bool)
        return out
    raise ValueError(f"Fake-user detection is defined for {[c.__name__ for c in DETECTABLE]} (reports that "
                     f"support sets of items); got {type(mech).__name__}.")


def detect_fake_users(mech, reports, keep: float = 0.5, z: float = 5.0) -> tuple[np.ndarray, tuple]:
    """Flag the users whose reports support a suspiciously co-supported itemset.

    Returns (flagged mask over users, the itemset found); the mask is all False when the itemset's
    support is not significant (see module docstring).
    """
    B = support_matrix(mech, reports)
    Bf = B.astype(np.float32)
    co = Bf.T @ Bf
    np.fill_diagonal(co, -1)
    i, j = np.unravel_index(int(np.argmax(co)), co.shape)
    items = [int(i), int(j)]
    holders = B[:, i] & B[:, j]
    while True:
        counts = (B[holders]).sum(axis=0)
        counts[items] = -1
        k = int(np.argmax(counts))
        if counts[k] < keep * holders.sum():
            break
        items.append(k)
        holders &= B[:, k]
    expected = B.shape[0] * float(np.prod(B[:, items].mean(axis=0)))
    if holders.sum() <= expected + z * np.sqrt(expected):
        holders = np.zeros_like(holders)
    return holders, tuple(sorted(items))
