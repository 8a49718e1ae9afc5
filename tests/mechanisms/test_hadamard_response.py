"""Hadamard Response beyond the contract suite: the transform, the closed-form variance against the
exact linear theory, the block layout of the large-ε variant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import hadamard

from ldpsim.mechanisms import HR, make
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.hadamard import fwht
from ldpsim.mechanisms.frequency.hadamard_response import layout, paper_blocks
from ldpsim.mechanisms.linear_theory import linear_estimator_variance


def test_fwht_is_the_sylvester_hadamard_product():
    a = np.random.default_rng(0).integers(0, 50, size=(3, 16))
    np.testing.assert_allclose(fwht(a), a @ hadamard(16).T)


def _estimator_matrix(m: HR) -> np.ndarray:
    eye = np.eye(m.n_outputs, dtype=np.int64)
    return np.array([m.estimate(Aggregate(0, eye[o], m.kind)) for o in range(m.n_outputs)]).T


@pytest.mark.parametrize("eps, d, blocks", [(0.5, 7, None), (1.0, 12, 1), (3.0, 20, 4), (6.0, 9, None)])
def test_closed_form_variance_equals_exact_linear_theory(eps, d, blocks):
    m = HR(epsilon=eps, domain_size=d, blocks=blocks)
    P = m.transition_matrix()
    A = _estimator_matrix(m)
    np.testing.assert_allclose(A @ P.T, np.eye(d), atol=1e-9)  # unbiased for every input
    counts = np.random.default_rng(1).integers(0, 100, d)
    np.testing.assert_allclose(m.variance(counts), linear_estimator_variance(P, A, counts), rtol=1e-9)


def test_set_sizes_and_exact_privacy_for_large_epsilon():
    m = HR(epsilon=5.0, domain_size=40)
    assert m.blocks > 1  # the large-ε variant
    P = m.transition_matrix()
    in_set = np.isclose(P, P.max())
    assert np.all(in_set.sum(axis=1) == m.block_size // 2)
    assert math.isclose((P[:, None] / P[None]).max(), math.exp(5.0), rel_tol=1e-12)


def test_layout_and_default_blocks():
    assert layout(1000, 1) == (1, 1024)
    assert layout(100, 32) == (15, 8)
    assert layout(100, 64) == (34, 4)
    assert paper_blocks(0.5, 1000) == 1 and paper_blocks(1.0, 1000) == 1  # small ε: one Hadamard block
    assert paper_blocks(4.0, 2000) == 32 and paper_blocks(9.0, 100) == 128  # 2^⌊log2 min(e^ε, 2D)⌋
    for B in (1, 5, 34):  # a layout's own block count reproduces it
        used, b = layout(100, B)
        assert layout(100, used) == (used, b)
    assert make("hr", epsilon=1.0, domain_size=5).blocks == 1


def test_bad_blocks():
    with pytest.raises(ValueError, match="'blocks' parameter of HR"):
        HR(epsilon=1.0, domain_size=5, blocks=11)


def test_direct_sampler_placement_branch_matches_theory():
    """Few in-set users for many cells (D = 100, ε = 1: s = 64): the sampler places users one by one;
    the estimates' mean and variance are still the theory's (α = 1e-4)."""
    from tests.stats import assert_mean, assert_variance
    m = HR(epsilon=1.0, domain_size=100)
    counts = np.random.default_rng(3).integers(0, 20, 100)
    est = np.array([m.estimate(m.sample_aggregate(counts, np.random.default_rng(s))) for s in range(3000)])
    assert_mean(est, counts, m.variance(counts), what="HR placement mean")
    assert_variance(est, counts, m.variance(counts), what="HR placement variance")
