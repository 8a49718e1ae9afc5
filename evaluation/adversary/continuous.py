"""The Bayesian adversary against numeric mechanisms (PM, SDPM) — docs/math.md §3.

The adversary discretises the input domain [−1, 1] into ``n_cells`` equal cells with midpoints g
and prior masses m(g) (uniform by default, or the workload's histogram: a stronger adversary).
Seeing a report y it guesses the MAP input:

* the continuous part of the posterior puts mass ∝ m(g)·f(y|g) near each grid point (f the
  mechanism's ``output_density``); tied maximisers are chosen uniformly at random;
* SDPM's point mass (a low input x is reported exactly w.p. p') makes x = y itself a candidate with
  posterior mass ∝ (m(cell of y)/Δ)·P(x* = y | x = y) — a positive mass, where the grid points hold
  only density × Δ, so it wins whenever it is possible.

Likelihoods are taken at the cell midpoints, so a PM report within about one cell of ±C (whose
window preimage [(2y−C+1)/(C+1), 1] holds no midpoint) gives an all-tie, i.e. a uniform guess.
A guess counts as correct when it is within ``tol`` of the true value (default 0.1, i.e. 5 % of
the input range). Class inference — is the user's value high or low sensitivity? — is the MAP over
the two classes: low weight Σ_{g∈X_L} m(g)f(y|g) + (m/Δ)·P(x*=y|x=y), high weight Σ_{g∈X_H} m(g)f(y|g).
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_finite_in, check_int, check_real

from ldpsim.evaluation.adversary.bayes import TIE_RTOL, binomial_rate, normalized_prior

DEFAULT_CELLS = 200
DEFAULT_TOL = 0.1
_BATCH = 10_000  # reports decided at once (memory ~ _BATCH × n_cells floats)


def input_grid(n_cells: int = DEFAULT_CELLS) -> np.ndarray:
    """Midpoints of ``n_cells`` equal cells of [−1, 1]."""
    n_cells = check_int("input_grid", "n_cells", n_cells, low=2)
    return -1.0 + (np.arange(n_cells) + 0.5) * 2.0 / n_cells


def prior_from_values(values, n_cells: int = DEFAULT_CELLS) -> np.ndarray:
    """The workload's prior over the cells: a histogram of the true values (the stronger adversary)."""
    x = check_finite_in("prior_from_values", values, -1.0, 1.0)
    return np.histogram(x, bins=n_cells, range=(-1.0, 1.0))[0] / x.size


def _is_low(mechanism, x) -> np.ndarray:
    fn = getattr(mechanism, "is_low", None)
    return np.zeros(np.shape(x), dtype=bool) if fn is None else np.asarray(fn(x), dtype=bool)


def grid_density(mechanism, grid, y) -> np.ndarray:
    """f(y_i | g_j) for every report and grid point (len(y) × len(grid)).

    Same law as ``mechanism.output_density`` (tested equal), but the piecewise law of each grid
    point (``output_pieces``, see :mod:`ldpsim.mechanisms.numeric.interface`) is computed once instead of once per report.
    """
    edges, dens, _ = mechanism.output_pieces(grid)
    yy = y[:, None]
    piece = (yy >= edges[None, :, 1]).astype(np.intp) + (yy > edges[None, :, 2])
    out = np.take_along_axis(np.broadcast_to(dens, (y.size,) + dens.shape), piece[:, :, None], axis=2)[:, :, 0]
    return np.where(np.abs(yy) > mechanism.C, 0.0, out)


def decide(mechanism, y, masses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adversary's decision for reports ``y`` (1-D) given prior cell ``masses``.

    Returns ``tied`` (len(y) × cells: the MAP grid points), ``atom_wins`` (guess y itself) and
    ``p_low`` (probability of guessing the low class: 1, 0 or ½ on a tie).
    """
    n_cells = masses.size
    grid, width = input_grid(n_cells), 2.0 / n_cells
    w = masses * grid_density(mechanism, grid, y)
    inside = np.abs(y) <= 1.0
    y_in = np.clip(y, -1.0, 1.0)
    cell = np.clip(((y_in + 1.0) / width).astype(np.int64), 0, n_cells - 1)
    atom_w = np.where(inside, masses[cell] / width * mechanism.point_mass(y_in), 0.0)
    w_max = w.max(axis=1)
    tied = w >= (w_max * (1 - TIE_RTOL))[:, None]
    low = _is_low(mechanism, grid)
    w_low = (w * low).sum(axis=1) + atom_w
    w_high = (w * ~low).sum(axis=1)
    p_low = np.where(np.isclose(w_low, w_high, rtol=TIE_RTOL, atol=0.0), 0.5, (w_low > w_high).astype(float))
    return tied, atom_w > w_max, p_low


def numeric_guesses(mechanism, reports, n_cells: int = DEFAULT_CELLS, prior=None, rng=None):
    """(value guesses, guessed-low flags) for every report; ties broken independently per report."""
    y = check_finite_in("numeric_guesses", reports, -mechanism.C, mechanism.C, "reports")
    masses = normalized_prior(prior, check_int("numeric_guesses", "n_cells", n_cells, low=2), "prior")
    grid = input_grid(masses.size)
    rng = as_generator(rng)
    guess, low = np.empty(y.size), np.empty(y.size, dtype=bool)
    for s in range(0, y.size, _BATCH):
        yb = y[s:s + _BATCH]
        tied, atom_wins, p_low = decide(mechanism, yb, masses)
        pick = np.where(tied, rng.random(tied.shape), -1.0).argmax(axis=1)
        guess[s:s + _BATCH] = np.where(atom_wins, yb, grid[pick])
        low[s:s + _BATCH] = rng.random(yb.size) < p_low
    return guess, low


def expected_numeric_accuracy(mechanism, x, tol: float = DEFAULT_TOL, n_cells: int = DEFAULT_CELLS,
                              prior=None, n_y: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """Per input x: (P(|guess − x| ≤ tol), P(class guessed right)).

    E[hit | x] = P(x*=x|x)·hit(y=x) + Σ_j P(x* ∈ bin j, continuous part | x)·hit(mid_j): exact bin
    masses (``bin_probabilities`` less the atom) on ``n_y`` equal bins of [−C, C], the decision taken
    at each bin's midpoint; the error comes only from bins where the decision changes (the MAP set
    gains or loses a grid point: about 2·n_cells of them), each off by at most its mass.
    """
    x = check_finite_in("expected_numeric_accuracy", np.atleast_1d(x), -1.0, 1.0, "x")
    tol = check_real("expected_numeric_accuracy", "tol", tol, 0.0, np.inf)
    masses = normalized_prior(prior, check_int("expected_numeric_accuracy", "n_cells", n_cells, low=2), "prior")
    grid = input_grid(masses.size)
    edges = np.linspace(-mechanism.C, mechanism.C, n_y + 1)
    ys = (edges[:-1] + edges[1:]) / 2
    atom = mechanism.point_mass(x)
    mass = mechanism.bin_probabilities(x, edges)  # inputs × y-bins, the atom in the bin holding x
    holds_x = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, n_y - 1)
    mass[np.arange(x.size), holds_x] -= atom
    close = np.abs(grid[:, None] - x[None, :]) <= tol  # cells × inputs
    x_low = _is_low(mechanism, x)
    val, cls = np.zeros(x.size), np.zeros(x.size)
    for s in range(0, n_y, _BATCH):
        yb = ys[s:s + _BATCH]
        tied, atom_wins, p_low = decide(mechanism, yb, masses)
        hit = (tied.astype(float) @ close) / tied.sum(axis=1)[:, None]
        hit = np.where(atom_wins[:, None], np.abs(yb[:, None] - x[None, :]) <= tol, hit)
        f = mass[:, s:s + _BATCH].T  # y × inputs
        val += (f * hit).sum(axis=0)
        cls += (f * np.where(x_low[None, :], p_low[:, None], 1 - p_low[:, None])).sum(axis=0)
    _, atom_wins_at_x, p_low_at_x = decide(mechanism, x, masses)
    val += atom * np.where(atom_wins_at_x, 1.0, 0.0)  # the atom's report is x itself: |x − x| = 0
    cls += atom * np.where(x_low, p_low_at_x, 1 - p_low_at_x)
    return val, cls


def empirical_numeric_accuracy(mechanism, values, reports, tol: float = DEFAULT_TOL,
                               n_cells: int = DEFAULT_CELLS, prior=None, rng=None) -> dict:
    """Attack every report: ``overall`` / ``high`` accuracy within ``tol`` and ``class`` inference
    (nan without a low class; ``class_high`` / ``class_low`` per true class), each with a binomial
    ``*_se``; ``tol`` and ``n_cells`` echoed."""
    x = check_finite_in("empirical_numeric_accuracy", values, -1.0, 1.0)
    tol = check_real("empirical_numeric_accuracy", "tol", tol, 0.0, np.inf)
    guess, guessed_low = numeric_guesses(mechanism, reports, n_cells, prior, rng)
    if guess.size != x.size:
        raise ValueError(f"empirical_numeric_accuracy: 'values' and 'reports' differ in length "
                         f"({x.size} vs {guess.size}).")
    hits = np.abs(guess - x) <= tol
    low = _is_low(mechanism, x)
    out = {"n": int(x.size), "n_high": int((~low).sum()), "tol": tol, "n_cells": n_cells}
    out["overall"], out["overall_se"] = binomial_rate(hits)
    out["high"], out["high_se"] = binomial_rate(hits[~low])
    has_classes = bool(_is_low(mechanism, input_grid(n_cells)).any())
    right = guessed_low == low
    out["class"], out["class_se"] = binomial_rate(right) if has_classes else (float("nan"),) * 2
    out["class_high"] = binomial_rate(right[~low])[0] if has_classes else float("nan")
    out["class_low"] = binomial_rate(right[low])[0] if has_classes else float("nan")
    return out
