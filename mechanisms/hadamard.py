"""The fast Walsh–Hadamard transform the Hadamard oracles share (HCMS, Hadamard response) — docs/math.md §1.6.

>>> fwht(np.array([1, 0, 0, 0])).tolist()
[1, 1, 1, 1]
"""

from __future__ import annotations

import numpy as np


def fwht(a: np.ndarray) -> np.ndarray:
    """a · H_m along the last axis (m a power of two), unnormalised: out[..., r] = Σ_y (−1)^popcount(r & y)·a[..., y].

    O(m log m) per row, on a copy of ``a`` in its own dtype (exact for integers; pass floats for a float result).

    >>> fwht(np.array([[1.0, 2.0]])).tolist()
    [[3.0, -1.0]]
    """
    a = np.array(a)
    m = a.shape[-1]
    h = 1
    while h < m:
        v = a.reshape(*a.shape[:-1], m // (2 * h), 2, h)
        x, y = v[..., 0, :].copy(), v[..., 1, :]
        v[..., 0, :] += y
        v[..., 1, :] = x - y
        h *= 2
    return a
