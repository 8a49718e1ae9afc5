"""Personalized SDLDP: users choose their own high/low partition; groups combined by inverse variance.

SPEC §2.4 (paper section 4.5, eq. (19)).
"""

from __future__ import annotations

import numpy as np


def combine_inverse_variance(estimates, variances):
    """Combine per-group estimates by inverse-variance weighting — SPEC §2.4, paper eq. (19).

    ``ṽ = Σ_g (ṽ_g / Var_g) / Σ_g (1 / Var_g)`` and ``Var[ṽ] = 1 / Σ_g (1 / Var_g)``, entry by entry.

    Parameters
    ----------
    estimates, variances : array_like, shape (G, ...)
        Axis 0 indexes the groups; the remaining axes (items, coordinates, ...) are combined entry
        by entry. Variances must lie in (0, inf]. A group with zero users carries no information:
        give it variance ``inf`` (its estimate may then be anything, NaN included) and it is skipped.

    Returns
    -------
    est, var : ndarray, shape (...)
        The combined estimate and its variance. The variance is exact when the variances are the
        true ones and the weights do not depend on the data; with plug-in variances it is the usual
        first-order approximation. Entries where every group is skipped are NaN with variance inf.

    >>> est, var = combine_inverse_variance([[1.0], [3.0]], [[1.0], [3.0]])
    >>> est.tolist(), var.tolist()
    ([1.5], [0.75])
    """
    est = np.asarray(estimates, dtype=np.float64)
    var = np.asarray(variances, dtype=np.float64)
    if est.ndim < 1 or est.shape != var.shape:
        raise ValueError("combine_inverse_variance: 'estimates' and 'variances' must have the same shape "
                         f"(G, ...) with G ≥ 1 groups on axis 0; got {est.shape} and {var.shape}.")
    if est.shape[0] == 0:
        raise ValueError("combine_inverse_variance: need at least one group on axis 0; got 0.")
    bad = np.isnan(var) | (var <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError("combine_inverse_variance: 'variances' must lie in (0, inf] (inf marks a group "
                         f"with no users); got {float(var.flat[i])!r} at flat index {i}.")
    used = np.isfinite(var)
    if np.any(used & ~np.isfinite(est)):
        raise ValueError("combine_inverse_variance: a group with finite variance has a non-finite estimate.")
    weight = np.where(used, 1.0 / np.where(used, var, 1.0), 0.0)
    total = weight.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = (weight * np.where(used, est, 0.0)).sum(axis=0) / total  # paper eq. (19)
        combined_var = 1.0 / total
    return combined, combined_var
