"""HCMS (docs/math.md §1.6) beyond the contract suite: Hadamard helpers, client bit law, privacy boundary,
the matrix M of docs/math.md §1.6, theory over families, wire form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import hadamard

from ldpsim.mechanisms import HCMS
from ldpsim.mechanisms.hadamard import fwht
from ldpsim.mechanisms.sketches.hcms import hadamard_sign
from tests.stats import assert_chisquare_gof, assert_z

ITEMS = ("the", "of", "and", "to", "a", "in")
COUNTS = np.array([300, 200, 100, 50, 30, 20])


@pytest.mark.parametrize("m", [3, 12, 1000])
def test_m_must_be_a_power_of_two(m):
    with pytest.raises(ValueError, match=r"'m' parameter of HCMS must be a power of 2"):
        HCMS(1.0, 4, m)


@pytest.mark.parametrize("m", [2, 8, 64])
def test_hadamard_helpers(m):
    H = hadamard(m)
    rows, cols = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    np.testing.assert_array_equal(hadamard_sign(rows, cols), H)
    a = np.random.default_rng(0).integers(-50, 50, size=(3, m))
    np.testing.assert_array_equal(fwht(a), a @ H.T)


def _check_bit_law(h: HCMS, n: int = 40_000, seed: int = 2):
    """The sent bit equals w = H[l, h_j(d)] w.p. 1 − f' = e^ε/(1+e^ε) (chi-square, α = 1e-4)."""
    values = np.full(n, "of", dtype=object)
    r = h.perturb(values, seed)
    w = hadamard_sign(r.col, h.family.hash_values(r.row, values))
    kept = ((r.bit == 1) == (w > 0)).sum()
    keep = math.exp(h.epsilon) / (1 + math.exp(h.epsilon))  # docs/math.md §1.6, from ε alone
    assert_chisquare_gof([kept, n - kept], [keep, 1 - keep], what="HCMS bit")
    # (j, l) are uniform and carry no information about d
    assert_chisquare_gof(np.bincount(r.row * h.m + r.col, minlength=h.k * h.m),
                         np.full(h.k * h.m, 1 / (h.k * h.m)), what="HCMS (j, l)")


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_client_bit_law(eps):
    _check_bit_law(HCMS(eps, 4, 8))


def test_bit_law_test_detects_a_wrong_flip_probability():
    h = HCMS(0.5, 4, 8)
    object.__setattr__(h, "flip", 1.0 / (1.0 + math.exp(0.45)))  # planted bug
    with pytest.raises(AssertionError):
        _check_bit_law(h)


@pytest.mark.parametrize("eps", [0.5, 2.0, 6.0])
def test_privacy_boundary_exact(eps):
    """P[(b, j, l) | d] = (1/(km))·(1−f' if b = H[l, h_j(d)] else f'): the largest ratio over reports
    and inputs is (1−f')/f' = e^ε, attained where H[l, h_j(d)] ≠ H[l, h_j(d')]."""
    h = HCMS(eps, 2, 8)
    m = h.m
    H = hadamard(m)
    lik = np.where(H[:, :, None] == np.array([-1, 1])[None, None, :], 1 - h.flip, h.flip)  # [l, cell, b]
    ratio = lik[:, :, None, :] / lik[:, None, :, :]  # [l, cell, cell', b]
    assert math.isclose(ratio.max(), math.exp(eps), rel_tol=1e-12)


def test_estimate_equals_spec_formula_on_the_matrix():
    h = HCMS(2.0, 4, 8, seed=3)
    values = np.repeat(np.array(ITEMS, dtype=object), COUNTS)
    r = h.perturb(values, 0)
    M = np.zeros((h.k, h.m))
    np.add.at(M, (r.row, r.col), h.k * h.c_eps * (2.0 * r.bit - 1))  # docs/math.md §1.6
    M = M @ hadamard(h.m).T
    agg = h.aggregate(r)
    np.testing.assert_allclose(h.sketch_matrix(agg), M, rtol=1e-12, atol=1e-9)
    Hd = h.family.hash(ITEMS)
    spec = h.m / (h.m - 1) * (M[np.arange(h.k)[:, None], Hd].sum(axis=0) / h.k - values.size / h.m)
    np.testing.assert_allclose(h.estimate(agg, ITEMS), spec, rtol=1e-9)


@pytest.mark.slow
def test_family_averages():
    """Over 2000 seeds: mean bias 0 and mean MSE = family_averaged_variance (z-bounds, α = 1e-4)."""
    k, m, seeds = 4, 8, 2000
    mechs = [HCMS(1.0, k, m, seed=s) for s in range(seeds)]
    bias = np.array([h.bias(COUNTS, ITEMS) for h in mechs])
    mse = np.array([h.mse(COUNTS, ITEMS) for h in mechs])
    sq_others = (COUNTS ** 2).sum() - COUNTS ** 2
    var_bias = (m / (m - 1)) ** 2 * sq_others * (m - 1) / (m ** 2 * k)
    assert_z(bias.mean(axis=0), 0.0, np.sqrt(var_bias / seeds), what="HCMS mean bias over families")
    assert_z(mse.mean(axis=0), mechs[0].family_averaged_variance(COUNTS, ITEMS),
             mse.std(axis=0, ddof=1) / np.sqrt(seeds), what="HCMS mean MSE over families")


def test_wire_size_and_errors():
    h = HCMS(1.0, 300, 1024)
    assert h.report_bytes == 1 + 2 + 2
    assert h.report_bits == 1 + 9 + 10
    r = h.perturb(np.array(ITEMS, dtype=object), 0)
    payload = bytearray(h.encode(r))
    back = h.decode(bytes(payload))
    for a, b in zip(r, back):
        np.testing.assert_array_equal(a, b)
    payload[0] = 2  # the bit must be 0 or 1
    with pytest.raises(ValueError, match="bit values"):
        h.decode(bytes(payload))
    payload[0] = 1
    payload[3] = 0xFF  # l ≥ m
    payload[4] = 0xFF
    with pytest.raises(ValueError, match="col values"):
        h.decode(bytes(payload))
