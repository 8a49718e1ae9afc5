"""The square-root factorisation A = L·L (Fichtenberger, Henzinger, Upadhyay, ICML 2023) — docs/math.md §12.3.

L is the lower-triangular Toeplitz matrix of the coefficients f_j of (1 − x)^{−1/2}:
f_0 = 1, f_j = f_{j−1}·(2j − 1)/(2j) = C(2j, j)/4^j; since ((1 − x)^{−1/2})² = (1 − x)^{−1}, L·L is the
all-ones lower triangle A.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import toeplitz

from ldpsim.mechanisms._validation import check_int
from ldpsim.mechanisms.continual.factorization import Factorization


def sqrt_coefficients(days: int) -> np.ndarray:
    """f_0 … f_{T−1}, the coefficients of (1 − x)^{−1/2} (docs/math.md §12.3).

    >>> sqrt_coefficients(4).tolist()
    [1.0, 0.5, 0.375, 0.3125]
    """
    t = check_int("sqrt_coefficients", "days", days, low=1)
    j = np.arange(1, t)
    return np.concatenate([[1.0], np.cumprod((2 * j - 1) / (2 * j))])


def square_root(days: int) -> Factorization:
    """The square-root (Toeplitz) counter over T days: L = R = Toeplitz(f) (docs/math.md §12.3).

    Parameters
    ----------
    days : int
        T ≥ 1.

    Returns
    -------
    Factorization

    Examples
    --------
    >>> f = square_root(90)
    >>> round(f.l2_sensitivity().value ** 2, 4)   # Σ f_j², the first column's squared norm
    2.4977
    """
    f = sqrt_coefficients(days)
    m = toeplitz(f, np.zeros_like(f))
    return Factorization("square root", m, m)
