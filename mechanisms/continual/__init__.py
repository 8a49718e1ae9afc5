"""Continual counting: every day's prefix sum and daily count of a stream, by factorisations A = L·R.

docs/math.md §12. Counters: :func:`binary_tree`, :func:`square_root`, :func:`fresh_daily`.
"""

from ldpsim.mechanisms.continual.factorization import Factorization, Sensitivity, fresh_daily, noise_variance
from ldpsim.mechanisms.continual.toeplitz import sqrt_coefficients, square_root
from ldpsim.mechanisms.continual.tree import binary_tree, tree_levels

#: every continual counter by name
COUNTERS = {"fresh_daily": fresh_daily, "binary_tree": binary_tree, "square_root": square_root}

__all__ = ["COUNTERS", "Factorization", "Sensitivity", "binary_tree", "fresh_daily", "noise_variance",
           "sqrt_coefficients", "square_root", "tree_levels"]
