"""Exact Binomial(n, p) draws for many cells at once, fast: CMS's direct sampler draws its sketch
with them. Inverse CDF with a cached 2^16-entry guide table per (n, p); see :func:`binomial_rows`.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats

_GUIDE_BITS = 16
_GUIDE = 1 << _GUIDE_BITS
_LOW_BITS = 53 - _GUIDE_BITS  # the rest of a 53-bit uniform, drawn for ambiguous cells only
_BLOCK_CELLS = 1 << 20  # binomial_rows: cells per step
_TABLE_MIN_CELLS = 1 << 12  # binomial_rows: a guide table costs about this many + n binomial draws


@functools.lru_cache(maxsize=512)
def _guide_table(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """(cdf, table) of Binomial(n, p) for :func:`binomial_rows`: the float64 CDF (last value set to 1)
    and, per interval [b, b+1)/2^16 of U, the draw shared by every U in it, or −1 where a CDF value
    falls inside the interval (cached: a sweep meets the same row sizes every repeat)."""
    cdf = stats.binom.cdf(np.arange(n + 1), n, p)
    cdf[-1] = 1.0
    edges = np.arange(_GUIDE + 1) / _GUIDE
    lo = np.searchsorted(cdf, edges[:-1], side="right")
    hi = np.searchsorted(cdf, edges[1:] - 2.0 ** -53, side="right")  # largest U of the interval
    table = np.where(lo == hi, lo, -1).astype(np.int16 if n < 2 ** 15 else np.int32)
    for a in (cdf, table):
        a.setflags(write=False)  # shared by the cache
    return cdf, table


def binomial_rows(out: np.ndarray, n_row: np.ndarray, p: float, rng) -> None:
    """Fill ``out[j, :]`` with independent Binomial(n_row[j], p) draws (docs/math.md §1.7).

    Parameters
    ----------
    out : numpy.ndarray of int, shape (rows, cols)
        Written in place.
    n_row : numpy.ndarray of non-negative int, shape (rows,)
        Number of trials of each row.
    p : float
        Success probability, in [0, 1].
    rng : numpy.random.Generator
        Source of randomness.

    Notes
    -----

    Exact inverse CDF of the float64 CDF (the rounding class of numpy's own binomial) at a uniform
    U on the 2^-53 grid, drawn in two parts: the top 16 bits for every cell (raw bit-generator output,
    four cells per 64-bit word) pick an interval whose answer a guide table holds; only cells in
    intervals that contain a CDF value (a fraction ≤ (n+1)/2^16) draw the other 37 bits and
    binary-search the CDF. Rows are handled by size; a table
    costs about as much as 2^12 + n binomial draws to build, so sizes with fewer cells than that use
    ``rng.binomial`` (the tables are cached, so repeats of a sweep cell mostly reuse them).
    """
    order = np.argsort(n_row, kind="stable")
    sizes, starts = np.unique(n_row[order], return_index=True)
    cols = out.shape[1]
    step = max(1, _BLOCK_CELLS // max(cols, 1))
    for size, rows in zip(sizes.tolist(), np.split(order, starts[1:])):
        if rows.size * cols < _TABLE_MIN_CELLS + size:
            out[rows] = rng.binomial(size, p, size=(rows.size, cols))
            continue
        cdf, table = _guide_table(size, p)
        for r0 in range(0, rows.size, step):
            block = rows[r0:r0 + step]
            words = rng.bit_generator.random_raw(-(-block.size * cols // 4))  # 4 uniform 16-bit lanes each
            top = words.view(np.uint16)[:block.size * cols].reshape(block.size, cols)
            x = table.take(top)
            amb = np.flatnonzero(x < 0)
            if amb.size:
                low = rng.bit_generator.random_raw(amb.size) >> np.uint64(64 - _LOW_BITS)
                u = ((top.ravel()[amb].astype(np.uint64) << np.uint64(_LOW_BITS)) | low) * 2.0 ** -53
                x.ravel()[amb] = np.searchsorted(cdf, u, side="right")
            out[block] = x
