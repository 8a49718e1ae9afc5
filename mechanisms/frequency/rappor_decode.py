"""RAPPOR's decoding of a candidate list: LASSO selection, least squares, standard errors and a
Bonferroni cut-off — docs/math.md §7.2; Erlingsson, Pihur, Korolova, CCS 2014, §4 ("Decoding").

The paper regresses the per-(cohort, bit) estimates t (:meth:`RAPPOR.bit_estimates`) on the
candidates' Bloom bits X: first a LASSO fit to select the candidates with non-zero coefficients, then
ordinary least squares on those, then the regression's standard errors and a one-sided test of
"count > 0" per candidate at level α/M (Bonferroni over the M candidates).

Implementation choices (numpy/scipy only, no scikit-learn: one small solver is not worth a new
dependency and its extra import time):

* LASSO: minimise ½‖t − Xβ‖² + λ‖β‖₁ by cyclic coordinate descent on the Gram matrix XᵀX (K × K).
  Default λ = σ·‖X_j‖·z_{1−α/(2M)} with σ² the per-row noise variance of t under no signal,
  N̄_c·p*(1−p*)/(q* − p*)²: then a candidate with count zero is selected by noise alone with probability
  about α/M (the KKT condition |X_jᵀ(t − Xβ)| ≤ λ), the same family-wise rate as the final cut-off.
* Standard errors: the OLS ones, σ̂²·diag((X_SᵀX_S)⁻¹) with σ̂² = RSS/(rows − |S|), as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ldpsim.mechanisms._validation import check_real


@dataclass(frozen=True)
class RAPPORDecoding:
    """Per candidate: selected by LASSO, count estimate (0 if not selected), standard error, z, one-sided
    p-value, and whether it passes the Bonferroni cut-off ``p < alpha / len(candidates)``."""

    candidates: tuple
    selected: np.ndarray
    counts: np.ndarray
    std_errors: np.ndarray
    z: np.ndarray
    p_values: np.ndarray
    significant: np.ndarray
    alpha: float
    lasso_penalty: float

    def found(self) -> list:
        """The significant candidates, largest estimated count first."""
        idx = np.flatnonzero(self.significant)
        return [self.candidates[i] for i in idx[np.argsort(-self.counts[idx], kind="stable")]]


def lasso(gram: np.ndarray, xty: np.ndarray, penalty: float, tol: float = 1e-9, max_sweeps: int = 1000) -> np.ndarray:
    """argmin ½‖t − Xβ‖² + penalty·‖β‖₁ from G = XᵀX and Xᵀt (cyclic coordinate descent, soft threshold)."""
    k = xty.size
    beta = np.zeros(k)
    diag = np.diag(gram).copy()
    grad = xty.copy()                                  # Xᵀ(t − Xβ)
    for _ in range(max_sweeps):
        biggest = 0.0
        for j in range(k):
            if diag[j] <= 0:
                continue
            rho = grad[j] + diag[j] * beta[j]
            new = np.sign(rho) * max(abs(rho) - penalty, 0.0) / diag[j]
            delta = new - beta[j]
            if delta:
                grad -= gram[:, j] * delta
                beta[j] = new
                biggest = max(biggest, abs(delta) * np.sqrt(diag[j]))
        if biggest <= tol * max(1.0, np.sqrt(np.abs(xty).max())):
            break
    return beta


def decode(mech, agg, candidates, alpha: float = 0.05, lasso_penalty: float | None = None) -> RAPPORDecoding:
    """The paper's regression decoding of ``candidates`` from a RAPPOR aggregate (module docstring)."""
    alpha = check_real("RAPPOR.decode", "alpha", alpha, 0.0, 1.0)
    cands = tuple(candidates.tolist() if isinstance(candidates, np.ndarray) else candidates)
    X = mech.bloom_matrix(cands)
    t = mech.bit_estimates(agg)
    m = len(cands)
    qs, ps = mech.bit_probabilities()
    col_norm = np.sqrt((X ** 2).sum(axis=0))
    sigma = np.sqrt(max(agg.n, 1) / mech.cohorts * ps * (1 - ps)) / (qs - ps)
    z_cut = stats.norm.isf(alpha / (2 * m))
    penalty = float(sigma * col_norm.max() * z_cut) if lasso_penalty is None else \
        check_real("RAPPOR.decode", "lasso_penalty", lasso_penalty, 0.0, low_open=False)
    gram, xty = X.T @ X, X.T @ t
    beta = lasso(gram, xty, penalty)
    selected = beta > 0
    counts = np.zeros(m)
    se = np.full(m, np.inf)
    sel = np.flatnonzero(selected)
    if sel.size:
        inv = np.linalg.pinv(gram[np.ix_(sel, sel)])          # (X_SᵀX_S)⁻¹: small, |S| × |S|
        coef = inv @ xty[sel]                                  # least squares on the selected columns
        dof = max(X.shape[0] - sel.size, 1)
        rss = float(((t - X[:, sel] @ coef) ** 2).sum())
        counts[sel] = mech.cohorts * coef
        se[sel] = mech.cohorts * np.sqrt(np.maximum(np.diag(inv) * rss / dof, 0.0))
    z = np.where(np.isfinite(se) & (se > 0), counts / np.where(se > 0, se, 1.0), 0.0)
    p = stats.norm.sf(z)
    return RAPPORDecoding(cands, selected, counts, se, z, p, selected & (p < alpha / m), alpha, penalty)
