"""Continual counting by a factorisation A = L·R of the prefix-sum matrix — docs/math.md §12.1–12.3.

A stream x ∈ ℝ^T of daily counts (one row per item) is released as y = R·x + z, z i.i.d. noise per
coordinate of R·x; every day's prefix sum is estimated by L·y, whose mean is A·x because L·R = A. The
estimate of any window Σ_{a ≤ s ≤ b} x_s is (e_b − e_{a−1})ᵀ·L·y, with exact variance
v·‖L_b − L_{a−1}‖² (v the noise variance of one coordinate, L_{−1} = 0). The binary tree
(:mod:`.tree`), the square-root factorisation (:mod:`.toeplitz`) and fresh daily collection
(:func:`fresh_daily`) are instances.

Privacy (§12.4): a person changes x by a vector u with 0 ≤ u_s ≤ c on at most k days; R has
non-negative entries, so the L1 sensitivity max ‖R·u‖₁ is c times the sum of the k largest column
L1 norms, and the L2 sensitivity max ‖R·u‖₂ is c times the largest column norm (k = 1) or ‖R·1‖
(k = T); in between :meth:`Factorization.l2_sensitivity` returns a stated upper bound. Gaussian noise
of sd σ is then ρ-zCDP with ρ = Δ₂²/(2σ²) over the whole run; Laplace noise of scale b is
(Δ₁/b)-DP.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.runtime.errors import InputError

NOISES = ("gaussian", "laplace")


@dataclass(frozen=True)
class Sensitivity:
    """One person's sensitivity of R·x under a contribution bound (docs/math.md §12.4).

    Parameters
    ----------
    value : float
        The sensitivity (L1 or L2), or an upper bound on it when ``exact`` is False.
    exact : bool
        Whether ``value`` is attained by some admissible contribution.
    neighbour : str
        The neighbouring relation it holds for, in words.

    Examples
    --------
    >>> Sensitivity(2.0, True, "one person adds at most 1 to each of at most 1 day").value
    2.0
    """

    value: float
    exact: bool
    neighbour: str


def _neighbour(per_day: float, days: int) -> str:
    return f"one person adds at most {per_day:g} to each of at most {days} day(s) of one item's stream"


@dataclass(frozen=True, eq=False)
class Factorization:
    """A continual counter A = L·R over T days (docs/math.md §12.1).

    Parameters
    ----------
    name : str
        The counter's name.
    L : ndarray, shape (T, m)
        Decoder: prefix estimates are L·y.
    R : ndarray, shape (m, T), non-negative
        Encoder: noise is added to R·x (m noisy coordinates).

    Examples
    --------
    >>> f = fresh_daily(3)
    >>> f.prefix_variance(1.0).tolist()
    [1.0, 2.0, 3.0]
    >>> round(f.l2_sensitivity(per_day=1.0, days=3).value ** 2, 9)
    3.0
    """

    name: str
    L: np.ndarray
    R: np.ndarray

    def __post_init__(self):
        L = np.asarray(self.L, dtype=float)
        R = np.asarray(self.R, dtype=float)
        t = L.shape[0]
        if L.ndim != 2 or R.ndim != 2 or R.shape != (L.shape[1], t):
            raise InputError(f"Factorization {self.name!r}: 'L' must be T × m and 'R' m × T; "
                             f"got {L.shape} and {R.shape}.")
        if not np.allclose(L @ R, np.tril(np.ones((t, t))), atol=1e-9):
            raise InputError(f"Factorization {self.name!r}: L·R must equal the prefix-sum matrix A.")
        if R.min() < 0:
            raise InputError(f"Factorization {self.name!r}: 'R' must be non-negative (§12.4).")
        L.setflags(write=False)
        R.setflags(write=False)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "R", R)

    @property
    def days(self) -> int:
        """T, the length of the stream."""
        return self.L.shape[0]

    # ----- accuracy (§12.2) -----
    def window_weights(self, start, end) -> np.ndarray:
        """Rows w = L_end − L_{start−1} (w·y estimates Σ_{start ≤ s ≤ end} x_s; 0-based, inclusive).

        Parameters
        ----------
        start, end : int or array of int
            First and last day of each window, 0 ≤ start ≤ end < T (broadcast together).

        Returns
        -------
        ndarray, shape broadcast(start, end) + (m,)
        """
        start, end = np.broadcast_arrays(np.asarray(start), np.asarray(end))
        if start.size and (not np.issubdtype(start.dtype, np.integer) or not np.issubdtype(end.dtype, np.integer)
                           or start.min() < 0 or end.max() >= self.days or np.any(start > end)):
            raise InputError(f"{self.name}: windows must be whole days with 0 <= start <= end < {self.days}; "
                             f"got start={start.tolist()!r}, end={end.tolist()!r}.")
        padded = np.vstack([np.zeros((1, self.L.shape[1])), self.L])
        return padded[end + 1] - padded[start]

    def window_variance(self, noise_variance: float, start, end) -> np.ndarray:
        """Exact variance v·‖L_end − L_{start−1}‖² of each window's estimate (docs/math.md §12.2).

        Parameters
        ----------
        noise_variance : float
            v, the variance of the noise of one coordinate of R·x (σ², or 2b² for Laplace).
        start, end : int or array of int
            Windows as in :meth:`window_weights`.

        Returns
        -------
        ndarray
        """
        w = self.window_weights(start, end)
        return noise_variance * np.einsum("...m,...m->...", w, w)

    def prefix_variance(self, noise_variance: float) -> np.ndarray:
        """Variance v·‖L_t‖² of every day's prefix-sum estimate, shape (T,) (docs/math.md §12.2)."""
        return noise_variance * np.einsum("tm,tm->t", self.L, self.L)

    def daily_variance(self, noise_variance: float) -> np.ndarray:
        """Variance v·‖L_t − L_{t−1}‖² of every day's count estimate, shape (T,) (docs/math.md §12.2)."""
        t = np.arange(self.days)
        return self.window_variance(noise_variance, t, t)

    # ----- privacy (§12.4) -----
    def l1_sensitivity(self, per_day: float = 1.0, days: int = 1) -> Sensitivity:
        """max ‖R·u‖₁ over 0 ≤ u ≤ ``per_day`` on at most ``days`` days: exact (R ≥ 0; §12.4).

        Parameters
        ----------
        per_day : float
            c, the most one person adds to one day's count (> 0).
        days : int
            k, the most days one person contributes to (1 ≤ k ≤ T).

        Returns
        -------
        Sensitivity
        """
        c, k = self._bound(per_day, days)
        cols = np.sort(self.R.sum(axis=0))[::-1]
        return Sensitivity(float(c * cols[:k].sum()), True, _neighbour(c, k))

    def l2_sensitivity(self, per_day: float = 1.0, days: int = 1) -> Sensitivity:
        """max ‖R·u‖₂ over 0 ≤ u ≤ ``per_day`` on at most ``days`` days (docs/math.md §12.4).

        Exact for k = 1 (c·max column norm) and k = T (c·‖R·1‖); for 1 < k < T an upper bound,
        c·√(Σ of the k largest r_i), r_i the sum of the k largest entries of row i of G = RᵀR
        (capped by the k = T value), with ``exact`` False.

        Parameters
        ----------
        per_day : float
            c, the most one person adds to one day's count (> 0).
        days : int
            k, the most days one person contributes to (1 ≤ k ≤ T).

        Returns
        -------
        Sensitivity
        """
        c, k = self._bound(per_day, days)
        gram = self.R.T @ self.R
        if k == 1:
            return Sensitivity(float(c * np.sqrt(np.diag(gram).max())), True, _neighbour(c, k))
        everything = float(np.sqrt(gram.sum()))
        if k == self.days:
            return Sensitivity(c * everything, True, _neighbour(c, k))
        rows = np.sort(np.sort(gram, axis=1)[:, ::-1][:, :k].sum(axis=1))[::-1]
        return Sensitivity(float(c * min(np.sqrt(rows[:k].sum()), everything)), False, _neighbour(c, k))

    def rho(self, sigma: float, per_day: float = 1.0, days: int = 1) -> float:
        """ρ = Δ₂²/(2σ²): the ρ-zCDP of the whole T-day release with Gaussian noise (docs/math.md §12.4).

        An upper bound on the best ρ when the sensitivity is (1 < k < T); per person, per item stream.
        """
        sigma = check_real(self.name, "sigma", sigma, 0.0)
        return self.l2_sensitivity(per_day, days).value ** 2 / (2 * sigma ** 2)

    def _bound(self, per_day, days) -> tuple[float, int]:
        return (check_real(self.name, "per_day", per_day, 0.0),
                check_int(self.name, "days", days, low=1, high=self.days))

    # ----- release (§12.1) -----
    def release(self, counts, noise: str, scale: float, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """Release every day's prefix sum and daily count of every item: L·(R·x + z).

        Parameters
        ----------
        counts : array_like, shape (items, T) or (T,)
            True daily counts x (real, finite).
        noise : {"gaussian", "laplace"}
            Law of z: N(0, σ²) with σ = ``scale``, or Laplace(0, b) with b = ``scale``.
        scale : float
            σ or b (> 0).
        rng : None, int, SeedSequence or Generator
            Source of the noise.

        Returns
        -------
        prefix, daily : ndarray, same shape as ``counts``
            Estimates of A·x and of x (daily = successive differences of prefix).
        """
        x = np.asarray(counts, dtype=float)
        if x.ndim not in (1, 2) or x.shape[-1] != self.days or not np.all(np.isfinite(x)):
            raise InputError(f"{self.name}: 'counts' must be finite, shape (items, {self.days}) or "
                             f"({self.days},); got shape {x.shape}.")
        scale = check_real(self.name, "scale", scale, 0.0)
        rng = as_generator(rng)
        shape = x.shape[:-1] + (self.R.shape[0],)
        if noise == "gaussian":
            z = rng.normal(0.0, scale, size=shape)
        elif noise == "laplace":
            z = rng.laplace(0.0, scale, size=shape)
        else:
            raise InputError(f"The 'noise' parameter of {self.name} must be one of {NOISES}. Got {noise!r} instead.")
        prefix = (x @ self.R.T + z) @ self.L.T
        daily = np.diff(prefix, axis=-1, prepend=0.0)
        return prefix, daily


def noise_variance(noise: str, scale: float) -> float:
    """Variance of one noise coordinate: σ² (Gaussian) or 2b² (Laplace) (docs/math.md §12.2).

    >>> noise_variance("laplace", 2.0)
    8.0
    """
    scale = check_real("noise_variance", "scale", scale, 0.0)
    if noise not in NOISES:
        raise InputError(f"The 'noise' parameter of noise_variance must be one of {NOISES}. Got {noise!r} instead.")
    return scale ** 2 if noise == "gaussian" else 2 * scale ** 2


def fresh_daily(days: int) -> Factorization:
    """Fresh daily collection: R = I, L = A — noise on each day's count, prefixes by summing (§12.3).

    Parameters
    ----------
    days : int
        T ≥ 1.

    Returns
    -------
    Factorization

    Examples
    --------
    >>> fresh_daily(2).L.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    t = check_int("fresh_daily", "days", days, low=1)
    return Factorization("fresh daily", np.tril(np.ones((t, t))), np.eye(t))
