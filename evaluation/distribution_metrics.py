"""Errors of estimated distributions, ranges, quantiles and heat maps: pure functions ``metric(true, est)``.

Definitions: docs/math.md §4.2. Distributions are histograms over equal bins of an interval (or a grid);
true and estimated arrays have the same shape. Estimates may be any real numbers where the metric is
linear in them (range MSE, heat-map errors); the Wasserstein distance needs non-negative masses
(project a signed estimate first, e.g. :func:`ldpsim.mechanisms.project_simplex_l1`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ldpsim.runtime.errors import InputError


def _pair(owner: str, true, est, ndim: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    t, e = np.asarray(true, np.float64), np.asarray(est, np.float64)
    if t.shape != e.shape or t.size == 0 or (ndim is not None and t.ndim != ndim):
        want = f"{ndim}-D arrays of one shape" if ndim else "non-empty arrays of one shape"
        raise InputError(f"{owner}: 'true' and 'est' must be {want}; got shapes {t.shape} and {e.shape}.")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(e))):
        raise InputError(f"{owner}: 'true' and 'est' must be finite.")
    return t, e


def _distribution(owner: str, name: str, masses: np.ndarray) -> np.ndarray:
    total = masses.sum(axis=-1, keepdims=True)
    if np.any(masses < 0) or np.any(total <= 0):
        raise InputError(f"{owner}: {name!r} must hold non-negative masses with a positive total "
                         f"(project a signed estimate onto the simplex first).")
    return masses / total


def wasserstein1(true, est, low: float = -1.0, high: float = 1.0) -> float:
    """W₁ between two histograms over equal bins of [low, high], each uniform inside its bins.

    W₁ = ∫ |F(t) − G(t)| dt (docs/math.md §4.2); both CDFs are linear inside a bin, so each bin adds
    width·(|a| + |b|)/2 when the difference keeps its sign between the bin's ends a, b, else
    width·(a² + b²)/(2(|a| + |b|)). Both histograms are normalized to mass one.

    Parameters
    ----------
    true, est : array_like, shape (d,)
        Non-negative masses (counts or shares) over d equal bins.
    low, high : float
        The interval the bins cover (low < high).

    Returns
    -------
    float
        In the units of the interval.

    Examples
    --------
    >>> wasserstein1([1, 0, 0, 0], [0, 0, 0, 1])  # a whole bin moved 3 bin widths of 0.5
    1.5
    """
    t, e = _pair("wasserstein1", true, est, ndim=1)
    if not high > low:
        raise InputError(f"wasserstein1: 'high' must exceed 'low'; got low={low!r}, high={high!r}.")
    diff = np.concatenate([[0.0], np.cumsum(_distribution("wasserstein1", "true", t)
                                            - _distribution("wasserstein1", "est", e))])
    a, b = diff[:-1], diff[1:]
    same = a * b >= 0
    denom = np.where(same, 1.0, np.abs(a) + np.abs(b))
    per_bin = np.where(same, (np.abs(a) + np.abs(b)) / 2, (a * a + b * b) / (2 * denom))
    return float(per_bin.sum() * (high - low) / t.size)


def range_query_mse(true, est, sizes) -> np.ndarray:
    """Mean squared error of range shares over every range of each size (docs/math.md §4.2).

    For a size s (in bins), the ranges are all [i, i + s), i = 0 … d − s; a range's share is its mass over
    the true total n (the estimate's ranges are divided by the same n, so a signed estimate is fine).

    Parameters
    ----------
    true, est : array_like, shape (d,)
        True counts (non-negative, positive total) and estimated counts over d bins.
    sizes : array_like of int
        Range sizes in bins, each in [1, d].

    Returns
    -------
    numpy.ndarray, shape (len(sizes),)
        The MSE for each size.

    Examples
    --------
    >>> range_query_mse([10, 10, 10, 10], [12, 10, 10, 8], [1, 2, 4])
    array([0.00125   , 0.00166667, 0.        ])
    """
    t, e = _pair("range_query_mse", true, est, ndim=1)
    n = t.sum()
    if np.any(t < 0) or n <= 0:
        raise InputError("range_query_mse: 'true' must hold non-negative counts with a positive total.")
    s = np.atleast_1d(np.asarray(sizes))
    if s.size == 0 or not np.issubdtype(s.dtype, np.integer) or s.min() < 1 or s.max() > t.size:
        raise InputError(f"range_query_mse: 'sizes' must be integers in [1, {t.size}]; got {s.tolist()}.")
    prefix = np.concatenate([[0.0], np.cumsum((e - t) / n)])
    return np.array([np.mean((prefix[k:] - prefix[:-k]) ** 2) for k in s.tolist()])


def quantile_error(true_quantiles, est_quantiles) -> np.ndarray:
    """|q̂_α − q_α| for each α (same units as the reading); quantiles from, e.g.,
    :func:`ldpsim.mechanisms.numeric.tree_histogram.quantile_from_cdf` on the true CDF."""
    t, e = _pair("quantile_error", np.atleast_1d(true_quantiles), np.atleast_1d(est_quantiles))
    return np.abs(e - t)


class HeatMapError(NamedTuple):
    """Per key: ``l1`` = Σ_cells |p̂ − p| of the maps normalized by the *true* total (twice the total
    variation when p̂ sums to one), ``l2sq`` = Σ_cells (p̂ − p)², ``max_abs`` = the largest cell error."""

    l1: np.ndarray
    l2sq: np.ndarray
    max_abs: np.ndarray


def heatmap_error(true, est) -> HeatMapError:
    """Errors of per-key heat maps (docs/math.md §4.2).

    Parameters
    ----------
    true, est : array_like, shape (keys, rows, cols)
        True tap counts (non-negative, positive total per key) and estimated counts per cell.

    Returns
    -------
    HeatMapError
        Arrays of length ``keys``; shares are counts over the key's true total, so an unbiased count
        estimate gives E[l2sq] = Σ_cells Var(count)/n².

    Examples
    --------
    >>> err = heatmap_error([[[2, 2], [0, 0]]], [[[3, 1], [0, 0]]])
    >>> err.l1.tolist(), err.l2sq.tolist(), err.max_abs.tolist()
    ([0.5], [0.125], [0.25])
    """
    t, e = _pair("heatmap_error", true, est, ndim=3)
    n = t.reshape(t.shape[0], -1).sum(axis=1)
    if np.any(t < 0) or np.any(n <= 0):
        raise InputError("heatmap_error: 'true' must hold non-negative counts with a positive total per key.")
    d = (e - t).reshape(t.shape[0], -1) / n[:, None]
    return HeatMapError(np.abs(d).sum(axis=1), (d ** 2).sum(axis=1), np.abs(d).max(axis=1))
