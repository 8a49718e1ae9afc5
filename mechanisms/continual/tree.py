"""The binary tree mechanism (Dwork–Naor–Pitassi–Rothblum 2010; Chan–Shi–Song 2011) — docs/math.md §12.3.

One noisy partial sum ("p-sum") per day e = 1 … T: the sum of the 2^ℓ days ending on day e, with ℓ the
lowest set bit of e. These are the left children of the dyadic tree over the days; a right child is
never part of a prefix, so it is not released. The prefix of the first n days is the sum of the p-sums
ending at n, at n with its lowest set bit cleared, and so on: one per set bit of n.
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

    Row e − 1 of R is the indicator of the 2^ℓ days ending on day e (ℓ = lowest set bit of e); row
    t of L picks the p-sums of the binary expansion of n = t + 1. Day 0 lies in one p-sum per
    level, so the event-level L2 sensitivity is √(⌊log₂ T⌋ + 1), and ‖L_t‖² = popcount(t + 1).

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
    ((90, 90), 7.0)
    >>> f.prefix_variance(1.0)[[0, 29, 89]].tolist()
    [1.0, 4.0, 4.0]
    """
    t = check_int("binary_tree", "days", days, low=1)
    end = np.arange(1, t + 1)                       # p-sum e covers days [e − 2^ℓ, e), ℓ = lsb(e)
    width = end & -end
    day = np.arange(t)
    R = (day[None, :] >= (end - width)[:, None]) & (day[None, :] < end[:, None])
    n = end                                         # prefix lengths 1 … T
    L = ((n[:, None] // width[None, :]) * width[None, :]) == end[None, :]
    return Factorization("binary tree", L.astype(float), R.astype(float))
