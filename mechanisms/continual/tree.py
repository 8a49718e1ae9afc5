"""The binary tree mechanism (Dwork–Naor–Pitassi–Rothblum 2010; Chan–Shi–Song 2011) — docs/math.md §12.3.

One noisy count per dyadic interval [j·2^ℓ, (j + 1)·2^ℓ) of days, levels ℓ = 0 … ⌊log₂ T⌋; the prefix
of days 0 … t is the sum of the nodes of the binary expansion of t + 1, at most one node per level.
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms._validation import check_int
from ldpsim.mechanisms.continual.factorization import Factorization


def tree_levels(days: int) -> int:
    """Number of levels ⌊log₂ T⌋ + 1 of the tree over T days (leaves are level 0; docs/math.md §12.3).

    A prefix of n ≤ T days uses the levels of the set bits of n, so the top level is the highest bit
    of T; a higher level would only add noise to nodes no prefix uses.

    >>> tree_levels(90), tree_levels(64), tree_levels(63), tree_levels(1)
    (7, 7, 6, 1)
    """
    t = check_int("tree_levels", "days", days, low=1)
    return t.bit_length()


def binary_tree(days: int) -> Factorization:
    """The binary tree counter over T days as a factorisation A = L·R (docs/math.md §12.3).

    R has one row per dyadic node that starts before day T (its 0/1 indicator of days); row t of L
    picks the nodes of the binary expansion of t + 1. A day lies in one node per level, so the
    event-level L2 sensitivity is √(⌊log₂ T⌋ + 1), and ‖L_t‖² = popcount(t + 1).

    Parameters
    ----------
    days : int
        T ≥ 1.

    Returns
    -------
    Factorization

    Examples
    --------
    >>> f = binary_tree(90)
    >>> f.R.shape, round(f.l2_sensitivity().value ** 2, 9)
    ((181, 90), 7.0)
    >>> f.prefix_variance(1.0)[[0, 29, 89]].tolist()
    [1.0, 4.0, 4.0]
    """
    t = check_int("binary_tree", "days", days, low=1)
    day = np.arange(t)
    starts, levels, rows = [], [], []
    for level in range(tree_levels(t)):
        width = 1 << level
        first = np.arange(0, t, width)
        starts.append(first)
        levels.append(np.full(first.size, level))
        rows.append((day[None, :] // width) == (first[:, None] // width))
    start, level, R = np.concatenate(starts), np.concatenate(levels), np.vstack(rows).astype(float)
    # prefix 0..t: for each set bit ℓ of t + 1 (high to low) the node at level ℓ starting at the running offset
    length = day + 1
    bits = (length[:, None] >> level[None, :]) & 1
    offset = (length[:, None] >> (level[None, :] + 1)) << (level[None, :] + 1)
    L = (bits == 1) & (start[None, :] == offset)
    return Factorization("binary tree", L.astype(float), R)
