"""SFP's fragment search as one compiled pass — docs/math.md §7.4.1.

:meth:`~ldpsim.mechanisms.discovery.sfp.SFP.fragment_slots` must know, for every slot (hash value r,
position l), its ``per_slot`` valid fragments of largest sum S ≥ least_l and how many reach the
false-discovery bar, over R·b² tokens read under k rows each (7.3·10⁹ (row, token) pairs on a 1 335-symbol
alphabet). :func:`slot_fragments` does it in one loop compiled by numba: per block of tokens, row by row,
each row's column is carried from token to token by one addition (g grows by A_j per key), the cell is read
from the positions' tables packed into one 64-bit word (:func:`~.words._packed`) and added to the
token's running sum; then each token's field of every position is compared with that position's least sum
and merged into its slot's top ``per_slot``. No array of sums is built and no token is ranked twice.

numba is imported on the first search of a process, never by ``import ldpsim``; the compiled loop is
cached in the user's cache folder (:func:`_kernel`), so only the first search on a machine compiles it.
"""

from __future__ import annotations

import functools

import numpy as np

from ldpsim.mechanisms.hashing import HashFamily
from ldpsim.runtime.user_cache import user_cache_dir
from ldpsim.mechanisms.discovery.words import _packed

#: tokens per block: the block's running sums (8 bytes per token and packed word) stay in the L1 cache
#: beside the row being read (m + 1 cells of 8 bytes)
BLOCK = 2048


def slot_fragments(family: HashFamily, tables: np.ndarray, valid: np.ndarray, least: np.ndarray,
                   bar: np.ndarray, per_slot: int, hash_values: int) -> tuple[np.ndarray, int]:
    """(F, dropped) of SFP's fragment search, exactly as ranking every token's sum would give them.

    Parameters
    ----------
    family : HashFamily
        The fragment sketches' family (k rows, m columns); token x is its 64-bit key.
    tables : ndarray of int, shape (P, k, m + 1)
        Position l's sketch at [l] (non-negative integer counts, else ``ValueError``; column m, the row
        sizes, is never read).
    valid : ndarray of bool, shape (P, B)
        valid[l, f]: fragment f (of B = b² fragments) can occur at position l.
    least : ndarray of int, shape (P,)
        Position l's least sum: a fragment is frequent only if its S reaches it.
    bar : ndarray of int, shape (P,)
        Position l's false-discovery bar, as an integer: S ≥ bar[l] reaches it.
    per_slot : int
        J, the fragments a slot keeps.
    hash_values : int
        R: the tokens are r·B + f for r < R, f < B (R·B < 2^63).

    Returns
    -------
    F : ndarray of int64, shape (R, P, J)
        F[r, l] the valid fragments of slot (r, l) with S ≥ least[l], the J largest S first (ties: smaller
        fragment first), −1 where there are fewer.
    dropped : int
        Σ over slots of max(0, #{valid f : S ≥ max(least[l], bar[l])} − J).
    """
    counts = np.asarray(tables)[:, :, :family.m]
    if counts.size and not (np.array_equal(counts, np.rint(counts)) and counts.min() >= 0):
        raise ValueError("slot_fragments: the fragment sketches must hold non-negative integer counts.")
    valid, least, bar = np.asarray(valid, dtype=bool), np.asarray(least, np.int64), np.asarray(bar, np.int64)
    n_pos, b2 = valid.shape  # the compiled loop reads without bounds checks: every shape is checked here
    if (counts.shape[:2] != (n_pos, family.k) or least.shape != (n_pos,) or bar.shape != (n_pos,)
            or not 1 <= per_slot or not 1 <= hash_values <= (2 ** 63 - 1) // max(b2, 1)):
        raise ValueError(f"slot_fragments: {counts.shape[0]} tables of {counts.shape[1]} rows (want {family.k}), "
                         f"valid {valid.shape}, least {least.shape}, bar {bar.shape}, per_slot {per_slot} (want >= 1) "
                         f"and {hash_values} hash values of {b2} fragments (want >= 1 and tokens below 2^63).")
    words, width, fields = _packed(counts.astype(np.int64, copy=False))
    words = np.ascontiguousarray(np.stack(words).astype(np.int64, copy=False))
    out = np.full((hash_values, n_pos, per_slot), -1, dtype=np.int64)
    a, b, c = family.row_params
    m = family.m
    power = m & (m - 1) == 0
    shift = np.uint64(64 - (m.bit_length() - 1))
    dropped = _kernel()(words, int(width), int(fields), a, b, c, int(m), bool(power), shift,
                        np.ascontiguousarray(valid), least, bar, out, int(b2), BLOCK)
    return out, int(dropped)


def _search(words, width, fields, a, b, c, m, power, shift, valid, least, bar, out, b2, block):  # pragma: no cover
    """The loop of :func:`slot_fragments`, compiled by numba (never run as plain Python: far too slow).

    Tokens x = r·b2 + f are taken in blocks of ``block`` that never straddle a multiple of 2^32, so within
    a block the key's high half x₁ is fixed and g_j(x) = A_j·x₀ + (B_j·x₁ + C_j) mod 2^64 grows by A_j per
    key (x₀ the low half); the column is g_j >> shift for m = 2^w, else ⌊(g_j >> 32)·m / 2^32⌋
    (:meth:`HashFamily.evaluate`). Sums of the packed words carry no field into the next (the field width
    holds the largest possible sum), so field p of word p // fields is position p's exact sum.
    """
    u64, s32, m64 = np.uint64, np.uint64(32), np.uint64(m)
    n_words, k = words.shape[0], a.size
    cols = words.shape[1] // k
    n_hash, n_pos, cap = out.shape
    mask = (np.int64(1) << np.int64(width)) - np.int64(1) if fields > 1 else np.int64(-1)
    word_of = np.arange(n_pos) // fields  # position p's field: bits [shift_of[p], + width) of word word_of[p]
    shift_of = width * (np.arange(n_pos) % fields)
    acc = np.zeros((n_words, block), dtype=np.int64)
    top_s = np.empty((n_pos, cap), dtype=np.int64)
    top_f = np.empty((n_pos, cap), dtype=np.int64)
    kept = np.zeros(n_pos, dtype=np.int64)
    reach = np.zeros(n_pos, dtype=np.int64)
    dropped = 0
    for r in range(n_hash):
        kept[:] = 0
        reach[:] = 0
        f0 = 0
        while f0 < b2:
            x0 = r * b2 + f0
            nn = min(block, b2 - f0, (1 << 32) - (x0 & 0xFFFFFFFF))
            lo, hi = u64(x0 & 0xFFFFFFFF), u64(x0 >> 32)
            acc[:, :nn] = 0
            for j in range(k):
                step = a[j]
                g0 = step * lo + b[j] * hi + c[j]
                for w in range(n_words):
                    row = words[w][j * cols:(j + 1) * cols]  # a contiguous view (a 2-D slice would be strided)
                    sums = acc[w]
                    g = g0
                    if power:
                        for i in range(nn):
                            sums[i] += row[g >> shift]  # an unsigned index: no wrap-around test
                            g += step
                    else:
                        for i in range(nn):
                            sums[i] += row[((g >> s32) * m64) >> s32]
                            g += step
            for p in range(n_pos):  # position by position: a tight loop over the block, rarely leaving it
                sums, shift_p, least_p, bar_p = acc[word_of[p]], shift_of[p], least[p], bar[p]
                for i in range(nn):
                    s = (sums[i] >> shift_p) & mask
                    if s < least_p or not valid[p, f0 + i]:
                        continue
                    if s >= bar_p:
                        reach[p] += 1
                    n = kept[p]
                    if n == cap and s <= top_s[p, cap - 1]:
                        continue  # equal sums rank by fragment, and this one is larger than every kept one
                    q = n if n < cap else cap - 1
                    while q > 0 and top_s[p, q - 1] < s:
                        top_s[p, q] = top_s[p, q - 1]
                        top_f[p, q] = top_f[p, q - 1]
                        q -= 1
                    top_s[p, q] = s
                    top_f[p, q] = f0 + i
                    if n < cap:
                        kept[p] = n + 1
            f0 += nn
        for p in range(n_pos):
            for q in range(kept[p]):
                out[r, p, q] = top_f[p, q]
            if reach[p] > cap:
                dropped += reach[p] - cap
    return dropped


@functools.cache
def _kernel():
    """:func:`_search` compiled by numba, imported here: only a fragment search pays for the import. The
    machine code is cached in :func:`~ldpsim.runtime.user_cache.user_cache_dir` ``("numba")`` — or in
    ``NUMBA_CACHE_DIR`` when the user set one — never beside the source, so a process after the first
    loads it instead of compiling (numba recompiles when this file or the machine changes)."""
    import numba
    own = not numba.config.CACHE_DIR
    if own:  # numba's cache locator reads the folder when the function is wrapped: set it for this one only
        numba.config.CACHE_DIR = str(user_cache_dir("numba"))
    try:
        return numba.njit(nogil=True, cache=True)(_search)
    finally:
        if own:
            numba.config.CACHE_DIR = ""
