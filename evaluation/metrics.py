"""Accuracy metrics of frequency estimates — docs/math.md §4 (seed 003's model, made explicit).

Pure functions, truth first: ``metric(true_counts, est)`` with ``true_counts`` of length D and
``est`` either one run (length D) or ``R × D`` repeated runs (``est_runs``), both on the count scale.

Examples
--------
>>> truth = np.array([50, 30, 20])
>>> runs = np.array([[48, 33, 19], [52, 29, 19]])
>>> expectation_bias(truth, runs).round(3).tolist(), rank_deviation(truth, runs).tolist()
([0.0, 0.033, 0.05], [0.0, 0.0, 0.0])
>>> top_k_precision(truth, runs[0], k=2)
1.0

Uncertainty over repeats: every metric is a mean over runs of a per-run statistic, reported as
mean ± standard error (:func:`with_standard_error`, se = s/√R with the sample sd s), except
ΔE, which is a non-linear function of the mean estimate; its se comes from the delta method
(:func:`expectation_bias_with_se`: d|m̄ − a|/dm̄ = ±1, so se(ΔE) = se(m̄)/a).
"""

from __future__ import annotations

import numpy as np

SCALES = ("frequency", "count")


def _truth(true_counts) -> np.ndarray:
    a = np.asarray(true_counts, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"'true_counts' must be a non-empty 1-D array; got shape {a.shape}.")
    return a


def _runs(true: np.ndarray, est_runs) -> np.ndarray:
    e = np.asarray(est_runs, dtype=np.float64)
    if e.ndim == 1:
        e = e[None, :]
    if e.ndim != 2 or e.shape[1] != true.size:
        raise ValueError(f"estimates must be D or R × D with D = {true.size}; got shape {e.shape}.")
    return e


def _per_run(values: np.ndarray, est) -> float | np.ndarray:
    """A per-run statistic: a float for a single run (1-D ``est``), else an array of length R."""
    return float(values[0]) if np.ndim(est) == 1 else values


def with_standard_error(per_run_values, axis: int = 0) -> tuple:
    """(mean, standard error) over runs along ``axis``: se = sd(ddof=1)/√R (nan when R = 1).

    Parameters
    ----------
    per_run_values : array_like
        A per-run statistic (e.g. ``mse(..., per_run=True)``).
    axis : int, default 0
        The runs axis.

    Returns
    -------
    (mean, se) : floats or arrays
    """
    v = np.asarray(per_run_values, dtype=np.float64)
    r = v.shape[axis]
    mean = v.mean(axis=axis)
    se = v.std(axis=axis, ddof=1) / np.sqrt(r) if r > 1 else np.full_like(mean, np.nan)
    return mean, se


def confidence_interval(per_run_values, level: float = 0.95, axis: int = 0) -> tuple:
    """(low, high) Student-t interval mean ± t_{R−1}·se over runs (normal per-run statistics)."""
    from scipy import stats

    mean, se = with_standard_error(per_run_values, axis)
    r = np.shape(per_run_values)[axis]
    half = stats.t.ppf(0.5 + level / 2, r - 1) * se if r > 1 else np.full_like(mean, np.nan)
    return mean - half, mean + half


def ranks_of(counts) -> np.ndarray:
    """Ranks, 1 = largest, ties broken by item order; works row-wise on R × D arrays."""
    c = np.asarray(counts, dtype=np.float64)
    order = np.argsort(-c, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, c.shape[-1] + 1) + np.zeros_like(order), axis=-1)
    return ranks


# ---- per-item metrics over repeated runs (docs/math.md §4) ------------------------------------------------
def expectation_bias(true_counts, est_runs) -> np.ndarray:
    """ΔE(d) = |mean_i ec_i(d) − ac(d)| / ac(d) (nan where ac(d) = 0), docs/math.md §4.

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts ac(d).
    est_runs : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R repeated runs.

    Returns
    -------
    numpy.ndarray, shape (D,)
    """
    return expectation_bias_with_se(true_counts, est_runs)[0]


def expectation_bias_with_se(true_counts, est_runs) -> tuple[np.ndarray, np.ndarray]:
    """(ΔE, se) per item; se by the delta method: sd_i(ec_i(d)) / (√R · ac(d))."""
    a = _truth(true_counts)
    e = _runs(a, est_runs)
    mean, se = with_standard_error(e)
    pos = a > 0
    de = np.divide(np.abs(mean - a), a, out=np.full_like(a, np.nan), where=pos)
    return de, np.divide(se, a, out=np.full_like(a, np.nan), where=pos)


def rank_errors(true_counts, est_runs) -> np.ndarray:
    """R × D per-run rank errors |er_i(d) − ar(d)|."""
    a = _truth(true_counts)
    return np.abs(ranks_of(_runs(a, est_runs)) - ranks_of(a))


def rank_deviation(true_counts, est_runs) -> np.ndarray:
    """ΔR(d) = mean_i |er_i(d) − ar(d)|; ranks 1 = largest, ties broken by item order (docs/math.md §4).

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts ac(d).
    est_runs : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R repeated runs.

    Returns
    -------
    numpy.ndarray, shape (D,)
    """
    return rank_errors(true_counts, est_runs).mean(axis=0)


def squared_errors(true_counts, est_runs, relative: bool = False) -> np.ndarray:
    """R × D per-run squared errors (ec_i(d) − ac(d))², divided by ac(d)² when ``relative``."""
    a = _truth(true_counts)
    sq = (_runs(a, est_runs) - a) ** 2
    if relative:
        return np.divide(sq, a ** 2, out=np.full_like(sq, np.nan), where=a > 0)
    return sq


def squared_deviation(true_counts, est_runs, relative: bool = False) -> np.ndarray:
    """D(d) = mean_i (ec_i(d) − ac(d))² (docs/math.md §4), or that over ac(d)² when ``relative``.

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts ac(d).
    est_runs : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R repeated runs.
    relative : bool, default False
        Divide by ac(d)².

    Returns
    -------
    numpy.ndarray, shape (D,)
    """
    return squared_errors(true_counts, est_runs, relative).mean(axis=0)


def variance_ratio(true_counts, est_runs, theory_variance) -> np.ndarray:
    """Per item: empirical variance of the estimates (ddof = 1) / theoretical variance.

    For normal estimates the ratio is χ²_{R−1}/(R−1) distributed: se ≈ ratio·√(2/(R−1)).
    """
    a = _truth(true_counts)
    e = _runs(a, est_runs)
    if e.shape[0] < 2:
        raise ValueError("variance_ratio needs at least 2 runs.")
    return e.var(axis=0, ddof=1) / np.asarray(theory_variance, dtype=np.float64)


def collision_bias_share(true_counts, est_runs) -> float:
    """Share of the MSE due to a fixed sketch's bias (hash collisions, docs/math.md §1.5) rather than noise.

    Per item, b̂² = (m̄ − a)² − s²/R is unbiased for the squared bias b² (E(m̄ − a)² = b² + σ²/R,
    E s² = σ²) and the MSE is mean_i (ec_i − a)². Returns Σ_d b̂²(d) / Σ_d MSE(d), clipped to [0, 1].
    """
    a = _truth(true_counts)
    e = _runs(a, est_runs)
    r = e.shape[0]
    if r < 2:
        raise ValueError("collision_bias_share needs at least 2 runs.")
    bias2 = (e.mean(axis=0) - a) ** 2 - e.var(axis=0, ddof=1) / r
    total = ((e - a) ** 2).mean(axis=0).sum()
    return float(np.clip(bias2.sum() / total, 0.0, 1.0)) if total > 0 else 0.0


# ---- scalar error metrics --------------------------------------------------------------------
def _error_metric(true_counts, est_runs, scale, per_run, power) -> float | np.ndarray:
    if scale not in SCALES:
        raise ValueError(f"The 'scale' parameter must be one of {SCALES}. Got {scale!r} instead.")
    a = _truth(true_counts)
    err = np.abs(_runs(a, est_runs) - a)
    if scale == "frequency":
        err = err / a.sum()
    runs = (err ** power).mean(axis=1)
    return _per_run(runs, est_runs) if per_run else float(runs.mean())


def mse(true_counts, est_runs, scale: str = "frequency", per_run: bool = False):
    """Mean squared error over items and runs (paper eq. (20)); frequency scale divides errors by n.

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts ac(d).
    est_runs : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R repeated runs.
    scale : {"frequency", "count"}, default "frequency"
        Errors on the frequency scale (divided by n = Σ true_counts) or on the count scale.
    per_run : bool, default False
        One value per run (mean over items), for :func:`with_standard_error`.

    Returns
    -------
    float, or numpy.ndarray of length R with ``per_run``
    """
    return _error_metric(true_counts, est_runs, scale, per_run, 2)


def mae(true_counts, est_runs, scale: str = "frequency", per_run: bool = False):
    """Mean absolute error over items and runs (same conventions as :func:`mse`)."""
    return _error_metric(true_counts, est_runs, scale, per_run, 1)


# ---- top-k metrics (one value per run) --------------------------------------------------------
def _check_k(k, d: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= d:
        raise ValueError(f"The 'k' parameter must be an int in the range [1, {d}]. Got {k!r} instead.")
    return int(k)


def true_top_set(true_counts, k: int) -> np.ndarray:
    """Boolean mask of the true top-k items, ties at the k-th count included (so ≥ k items)."""
    a = _truth(true_counts)
    k = _check_k(k, a.size)
    return a >= np.sort(a)[::-1][k - 1]


def _top_mask(est: np.ndarray, k: int) -> np.ndarray:
    """R × D mask of the k largest estimates per run (ties broken by item order)."""
    return ranks_of(est) <= k


def top_k_precision(true_counts, est, k: int):
    """|Ê_k ∩ T_k| / k: Ê_k the k items with the largest estimates, T_k the true top-k (with ties).

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts.
    est : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R runs.
    k : int
        Size of the top set, in [1, D].

    Returns
    -------
    float or numpy.ndarray
        A float for one run (1-D ``est``), else one value per run (length R).
    """
    a = _truth(true_counts)
    e = _runs(a, est)
    hits = (_top_mask(e, _check_k(k, a.size)) & true_top_set(a, k)).sum(axis=1)
    return _per_run(hits / k, est)


def top_k_recall(true_counts, est, k: int, candidates: int | None = None):
    """|Ê_c ∩ T_k| / |T_k|: how much of the true top-k (with ties) is among the top ``c`` estimates.

    ``c = candidates`` defaults to ``k`` (then precision and recall coincide unless the truth has ties
    at the k-th count).

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts.
    est : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R runs.
    k : int
        Size of the top set, in [1, D].
    candidates : int, optional
        Number c of top estimates searched, in [1, D] (default k).

    Returns
    -------
    float or numpy.ndarray
        A float for one run (1-D ``est``), else one value per run (length R).
    """
    a = _truth(true_counts)
    e = _runs(a, est)
    c = _check_k(k if candidates is None else candidates, a.size)
    t = true_top_set(a, k)
    return _per_run((_top_mask(e, c) & t).sum(axis=1) / t.sum(), est)


def ndcg_at_k(true_counts, est, k: int):
    """NDCG@k with gain = true count: Σ_{i≤k} ac(Ê_(i))/log2(i+1) over the same for the true order.

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts.
    est : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R runs.
    k : int
        Size of the top set, in [1, D].

    Returns
    -------
    float or numpy.ndarray
        A float for one run (1-D ``est``), else one value per run (length R).
    """
    a = _truth(true_counts)
    e = _runs(a, est)
    k = _check_k(k, a.size)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    order = np.argsort(-e, axis=1, kind="stable")[:, :k]
    ideal = (np.sort(a)[::-1][:k] * disc).sum()
    return _per_run((a[order] * disc).sum(axis=1) / ideal, est)


def kendall_tau_top_k(true_counts, est, k: int):
    """Kendall's τ_b between true and estimated counts over the true top-k items (item order for ties).

    τ_b = (C − Dc)/√((P − T_a)(P − T_e)), P = k(k−1)/2 pairs, C/Dc concordant/discordant pairs,
    T_a/T_e pairs tied in the truth/estimate; nan when either side is constant.

    Parameters
    ----------
    true_counts : array_like, shape (D,)
        True counts.
    est : array_like, shape (D,) or (R, D)
        Count estimates of one run or of R runs.
    k : int
        Size of the top set, in [1, D].

    Returns
    -------
    float or numpy.ndarray
        A float for one run (1-D ``est``), else one value per run (length R).
    """
    a = _truth(true_counts)
    e = _runs(a, est)
    k = _check_k(k, a.size)
    top = np.argsort(-a, kind="stable")[:k]
    sa = np.sign(a[top][:, None] - a[top][None, :])
    se = np.sign(e[:, top][:, :, None] - e[:, top][:, None, :])
    iu = np.triu_indices(k, 1)
    sa, se = sa[iu], se[:, iu[0], iu[1]]
    pairs = iu[0].size
    denom = np.sqrt((pairs - (sa == 0).sum()) * (pairs - (se == 0).sum(axis=1)).astype(float))
    tau = np.divide((sa * se).sum(axis=1), denom, out=np.full(e.shape[0], np.nan), where=denom > 0)
    return _per_run(tau, est)
