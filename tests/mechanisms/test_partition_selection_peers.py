"""Our partition selection against Google's differential-privacy library as the ``pipeline-dp`` package ships
it (its ``pydp`` partition-selection strategies), on a stated grid — docs/math.md §9.13. Skipped where the
package is not installed (``pip install ".[peers]"``).

Grid: ε ∈ {0.1, 1, 5}, δ ∈ {10⁻¹⁰, 10⁻⁶, 10⁻³}, L0 ∈ {1, 3, 10}, counts 0 … 3 000 (every 7th). Checks:

* truncated geometric: keep probabilities equal to 10⁻¹² (absolute);
* Laplace thresholding: the same noise scale and threshold (relative 10⁻¹²), keep probabilities to 10⁻¹²;
* Gaussian thresholding: our σ is the exact analytic-Gaussian σ, theirs a binary search that stops above
  it: ours ≤ theirs and within 0.1 %; given their σ, our threshold and keep probabilities equal theirs.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpsim.mechanisms.aggregation.partition_selection import (NoisyThreshold, partition_selection, per_key_delta,
                                                               threshold_for)

pydp = pytest.importorskip("pydp._pydp", reason="pipeline-dp is not installed (the [peers] extra)")
dp_computations = pytest.importorskip("pipeline_dp.dp_computations")
strategies = pydp._partition_selection

GRID = list(itertools.product((0.1, 1.0, 5.0), (1e-10, 1e-6, 1e-3), (1, 3, 10)))
COUNTS = np.arange(0, 3000, 7)


def _theirs(strategy) -> np.ndarray:
    return np.array([strategy.probability_of_keep(int(c)) for c in COUNTS])


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_truncated_geometric_matches_pydp(eps, delta, l0):
    ours = partition_selection("truncated_geometric", eps, delta, l0).keep_probability(COUNTS)
    theirs = _theirs(strategies.create_truncated_geometric_partition_strategy(eps, delta, l0))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_laplace_thresholding_matches_pydp(eps, delta, l0):
    ours = partition_selection("laplace", eps, delta, l0)
    theirs = strategies.create_laplace_partition_strategy(eps, delta, l0)
    assert ours.threshold == pytest.approx(theirs.threshold, rel=1e-12)
    np.testing.assert_allclose(ours.keep_probability(COUNTS), _theirs(theirs), rtol=0, atol=1e-12)


@pytest.mark.parametrize("eps, delta, l0", GRID)
def test_gaussian_thresholding_matches_pydp(eps, delta, l0):
    ours = partition_selection("gaussian", eps, delta, l0)
    their_sigma = dp_computations.compute_sigma(eps, delta / 2, math.sqrt(l0))
    assert ours.scale <= their_sigma <= ours.scale * 1.001
    same_sigma = NoisyThreshold("gaussian", their_sigma, threshold_for("gaussian", their_sigma,
                                                                       per_key_delta(delta / 2, l0)))
    theirs = strategies.create_gaussian_partition_strategy(eps, delta, l0)
    assert same_sigma.threshold == pytest.approx(theirs.threshold, rel=1e-12)
    np.testing.assert_allclose(same_sigma.keep_probability(COUNTS), _theirs(theirs), rtol=0, atol=1e-12)
