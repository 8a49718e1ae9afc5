"""Central-DP histogram release on a trusted server — docs/math.md §6, seed 002.

The server holds exact counts, adds Laplace noise to the normalized histogram, projects the noisy
vector back onto valid histograms, and can draw synthetic data from the release.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_int
from ldpsim.mechanisms.base import Guarantee


@dataclass(frozen=True)
class LaplaceHistogram:
    """ε-DP release of a normalized histogram by a trusted server (seed 002; docs/math.md §6).

    z_j = θ_j + Lap(Δ/ε) with θ = counts/n. The L1 sensitivity Δ of θ is 2/n when one record is
    *replaced* (``neighbour="replace"``, the seed's formula 2/(nα)) and 1/n when one is added or
    removed (``neighbour="add-remove"``). Post-processing (projection, sampling) keeps ε-DP.

    Privacy: ε-DP (central, not local) for the chosen neighbouring relation (Laplace mechanism).
    Note: n itself is treated as public, as in the seed.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    neighbour : {"replace", "add-remove"}, default "replace"
        Neighbouring relation, which fixes the sensitivity Δ (2/n or 1/n).

    Examples
    --------
    >>> h = LaplaceHistogram(epsilon=1.0)
    >>> h.noise_scale(100)
    0.02
    >>> z = h.release([50, 30, 20], rng=0)
    >>> bool(np.all(z >= 0)), round(float(z.sum()), 9)
    (True, 1.0)
    >>> float(h.release([50, 30, 20], rng=0, lattice=True).sum())
    1.0
    """

    epsilon: float
    neighbour: str = "replace"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon("LaplaceHistogram", self.epsilon))
        if self.neighbour not in ("replace", "add-remove"):
            raise ValueError("The 'neighbour' parameter of LaplaceHistogram must be 'replace' or "
                             f"'add-remove'. Got {self.neighbour!r} instead.")

    @property
    def guarantee(self) -> Guarantee:
        """ε-DP of the release by a trusted server (central, δ = 0); docs/math.md §8.1."""
        return Guarantee("central", self.epsilon)

    def sensitivity(self, n: int) -> float:
        """L1 sensitivity of the normalized histogram: 2/n (replace) or 1/n (add/remove)."""
        return (2.0 if self.neighbour == "replace" else 1.0) / n

    def noise_scale(self, n: int) -> float:
        """Laplace scale b = Δ/ε; each bin's noise has variance 2b²."""
        return self.sensitivity(n) / self.epsilon

    def noisy(self, counts, rng=None) -> np.ndarray:
        """The raw noisy normalized histogram z (may be negative, need not sum to 1).

        Parameters
        ----------
        counts : array_like of non-negative ints
            Exact counts per bin (at least one record).
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        numpy.ndarray of float
        """
        c = check_counts("LaplaceHistogram", counts, name="counts")
        n = int(c.sum())
        if n == 0:
            raise ValueError("LaplaceHistogram: 'counts' must hold at least one record.")
        rng = as_generator(rng)
        return c / n + rng.laplace(0.0, self.noise_scale(n), size=c.size)

    def release(self, counts, rng=None, lattice: bool = False) -> np.ndarray:
        """Noisy histogram projected onto valid histograms.

        Parameters
        ----------
        counts : array_like of non-negative ints
            Exact counts per bin (at least one record).
        rng : numpy.random.Generator, int or None
            Source of randomness.
        lattice : bool, default False
            Project onto multiples of 1/n (:func:`project_lattice`) instead of the simplex
            (:func:`project_simplex_l1`).

        Returns
        -------
        numpy.ndarray of float
            Non-negative, summing to 1.
        """
        c = check_counts("LaplaceHistogram", counts, name="counts")
        z = self.noisy(c, rng)
        return project_lattice(z, int(c.sum())) / c.sum() if lattice else project_simplex_l1(z)


def project_simplex_l1(z) -> np.ndarray:
    """A minimum-L1-distance projection of ``z`` onto the probability simplex.

    The L1 projection is not unique; this returns the one that is also closest in L2 among them:
    clip negatives to 0 (unavoidable cost), then the Euclidean simplex projection of the clipped
    vector, which only removes mass from entries (when the clipped sum exceeds 1) or adds it evenly
    (when it falls short) — both of which cost exactly |1 − Σ z⁺| in L1, the minimum (docs/math.md §6).

    Parameters
    ----------
    z : array_like of float
        The noisy histogram.

    Returns
    -------
    numpy.ndarray of float
        Non-negative, summing to 1.

    >>> project_simplex_l1([0.7, -0.1, 0.6]).round(6).tolist()
    [0.55, 0.0, 0.45]
    """
    z = np.clip(np.asarray(z, dtype=float), 0.0, None)
    total = z.sum()
    if total < 1.0:
        return z + (1.0 - total) / z.size
    # Euclidean projection onto the simplex (sort-based; Duchi et al. 2008)
    u = np.sort(z)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.flatnonzero(u - css / np.arange(1, z.size + 1) > 0)[-1]
    tau = css[rho] / (rho + 1)
    return np.clip(z - tau, 0.0, None)


def project_lattice(z, n: int) -> np.ndarray:
    """Integer counts c ≥ 0 with Σc = n minimizing Σ|z·n − c| (the 1/n lattice of seed 002).

    Each coordinate's cost is convex piecewise linear in c_j, so greedy unit steps are optimal: start
    at ⌊max(z·n, 0)⌋. To add r units, take the largest fractional parts first (each costs 1 − 2·frac);
    any further unit costs +1 wherever it goes (spread evenly, the rest on the largest targets). To
    remove units, any c ≤ z·n summing to n reaches the lower bound Σz·n − n; we scale down
    proportionally and round by largest remainder, which stays ≤ the floor counts (docs/math.md §6).

    Parameters
    ----------
    z : array_like of float
        The noisy normalized histogram.
    n : int
        Number of records, ≥ 1.

    Returns
    -------
    numpy.ndarray of int64
        Counts c ≥ 0 with Σc = n (divide by n for the histogram).

    >>> project_lattice([0.52, -0.1, 0.55], 10).tolist()
    [5, 0, 5]
    """
    n = check_int("project_lattice", "n", n, low=1)
    u = np.clip(np.asarray(z, dtype=float) * n, 0.0, None)
    c = np.floor(u).astype(np.int64)
    r = n - int(c.sum())
    if r > 0:
        take = min(r, c.size)
        c[np.argsort(-(u - c), kind="stable")[:take]] += 1
        r -= take
        c += r // c.size
        c[np.argsort(-u, kind="stable")[: r % c.size]] += 1
    elif r < 0:
        x = c * (n / c.sum())
        c = np.floor(x).astype(np.int64)
        c[np.argsort(-(x - c), kind="stable")[: n - int(c.sum())]] += 1
    return c


def synthetic_data(histogram, n_records: int, rng=None, labels=None) -> np.ndarray:
    """Draw ``n_records`` synthetic records from a released histogram (post-processing).

    Parameters
    ----------
    histogram : array_like of float
        A valid release (non-negative, summing to 1).
    n_records : int
        Number of records, ≥ 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.
    labels : array_like, optional
        Label of each bin; default: the bin indices.

    Returns
    -------
    numpy.ndarray
        ``n_records`` bin indices (or labels).
    """
    p = np.asarray(histogram, dtype=float)
    if p.ndim != 1 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError("synthetic_data: 'histogram' must be a valid released histogram "
                         "(non-negative, summing to 1); project it first.")
    n_records = check_int("synthetic_data", "n_records", n_records, low=0)
    idx = as_generator(rng).choice(p.size, size=n_records, p=p / p.sum())
    return idx if labels is None else np.asarray(labels)[idx]
