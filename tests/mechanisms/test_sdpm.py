"""SDPM specifics (docs/math.md §2.2): the low range, the SDLDP conditions (8)–(10) of docs/math.md §1.4 for
densities, the exact low-branch theory against the paper's theorem 4, and the EM-only mean.
The generic numeric contract (theory = density moments, client = theory, chi-square neighbour test,
wire form) runs over SDPM in test_numeric_contract.py, the exact EM matrix in test_pm.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.numeric.sdpm import SDPM

LOW = (-0.3, 0.6)


@pytest.mark.parametrize("bad", [(-1.5, 0.0), (0.0, 1.01), (0.5, 0.5), (0.6, 0.2), (float("nan"), 0.5),
                                 (0.0, float("inf"))])
def test_bad_low_range_value(bad):
    with pytest.raises(ValueError, match=r"'low' parameter of SDPM must be a pair \(a, b\) of finite floats "
                                         r"with -1 <= a < b <= 1\. Got \(.*\) instead"):
        SDPM(1.0, low=bad)


@pytest.mark.parametrize("bad", [0.5, (0.1,), (0.1, 0.2, 0.3), ("a", 0.5), (True, 0.5), None])
def test_bad_low_range_type(bad):
    with pytest.raises(TypeError, match=r"'low' parameter of SDPM"):
        SDPM(1.0, low=bad)


def test_low_range_from_a_list_is_normalized():
    m = SDPM(1.0, low=[-1, 1])
    assert m.low == (-1.0, 1.0) and m == SDPM(1.0, low=(-1.0, 1.0))


def _grids(m: SDPM):
    a, b = m.low
    x = np.unique(np.concatenate([np.linspace(-1, 1, 81), [a, b, np.nextafter(a, -2), np.nextafter(b, 2)]]))
    lx = m.pm.left(x)
    y = np.unique(np.concatenate([np.linspace(-m.C, m.C, 4001), lx, lx + m.C - 1, [a, b]]))
    return x, y


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_condition_8_high_inputs_are_eps_indistinguishable_with_equality(eps):
    m = SDPM(eps, low=LOW)
    x, y = _grids(m)
    xh = x[~m.is_low(x)]
    dens = m.output_density(xh[:, None], y[None, :])
    assert np.all(dens > 0) and np.all(m.point_mass(xh) == 0)
    ratio = (dens.max(axis=0) / dens.min(axis=0)).max()
    assert math.isclose(ratio, math.exp(eps), rel_tol=1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_condition_9_low_input_reports_itself_and_no_other_low_value(eps):
    m = SDPM(eps, low=LOW)
    x, y = _grids(m)
    xl = x[m.is_low(x)]
    assert np.all(m.point_mass(xl) == m.p_atom) and m.p_atom > 0
    assert math.isclose(m.p_atom, 1 - (2 * m.C - (LOW[1] - LOW[0])) * m.pm.q)  # docs/math.md §2.2
    yl = y[m.is_low(y)]
    assert np.all(m.output_density(xl[:, None], yl[None, :]) == 0)
    # the client code: every report of a low input that falls in [a, b] is the input itself
    values = np.repeat(xl, 2000)
    reports = m.perturb(values, rng=9)
    in_low = m.is_low(reports)
    np.testing.assert_array_equal(reports[in_low], values[in_low])


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_condition_10_every_pair_is_eps_indistinguishable_on_y_high(eps):
    m = SDPM(eps, low=LOW)
    x, y = _grids(m)
    yh = y[~m.is_low(y)]
    dens = m.output_density(x[:, None], yh[None, :])
    assert np.all(dens > 0)
    ratio = (dens.max(axis=0) / dens.min(axis=0)).max()
    assert math.isclose(ratio, math.exp(eps), rel_tol=1e-12)


@pytest.mark.parametrize("eps, c", [(0.1, 0.5), (1.0, 0.25), (1.0, 0.75), (4.0, 0.5)])
def test_theorem_4_is_the_symmetric_special_case(eps, c):
    """Paper, theorem 4 / eq. (15), X_L = [−c, c]: (C³ − c³)(e^ε − e^{ε/2}) / (3e^ε(e^{ε/2}+1)) is
    the exact variance at x = 0; for x ≠ 0 the exact one adds p'(1−p')x² (the paper drops it)."""
    m = SDPM(eps, low=(-c, c))
    t, C = math.exp(eps / 2), m.C
    thm4 = (C ** 3 - c ** 3) * (t * t - t) / (3 * t * t * (t + 1))
    eq15 = (t + 2 + 1 / t) / (3 * (t - 1) ** 2) - (t - 1) * c ** 3 / (3 * t * (t + 1))
    assert math.isclose(thm4, eq15, rel_tol=1e-12)
    assert math.isclose(float(m.report_variance(0.0)), thm4, rel_tol=1e-12)
    x = np.linspace(-c, c, 7)
    p = m.p_atom
    np.testing.assert_allclose(m.report_variance(x), thm4 + p * (1 - p) * x ** 2, rtol=1e-12)


def test_high_branch_is_pm():
    m, pm = SDPM(1.0, low=LOW), PM(1.0)
    xh = np.array([-1.0, -0.5, -0.31, 0.61, 0.9, 1.0])
    np.testing.assert_array_equal(m.report_variance(xh), pm.report_variance(xh))
    np.testing.assert_array_equal(m.report_mean(xh), xh)
    ys = np.linspace(-m.C, m.C, 101)
    np.testing.assert_array_equal(m.output_density(xh[:, None], ys), pm.output_density(xh[:, None], ys))


def test_report_average_is_biased_and_estimate_mean_points_to_em():
    m = SDPM(1.0, low=LOW)
    a, b = LOW
    x = np.array([0.0, 0.5])
    np.testing.assert_allclose(m.report_mean(x), m.p_atom * x + m.pm.q * (a * a - b * b) / 2, rtol=1e-15)
    assert not np.allclose(m.report_mean(x), x)
    with pytest.raises(NotImplementedError, match="biased.*EM"):
        m.estimate_mean(m.aggregate(np.zeros(3)))


def test_em_output_edges_align_with_input_bins_on_the_low_range():
    m = SDPM(1.0, low=(-0.3, 0.6))
    in_edges = np.linspace(-1, 1, 21)
    out = m.em_output_edges(in_edges)
    assert out[0] == -m.C and out[-1] == m.C and np.all(np.diff(out) > 0)
    inside = out[(out >= -0.3) & (out <= 0.6)]
    expected = np.concatenate([[-0.3], in_edges[(in_edges > -0.3) & (in_edges < 0.6)], [0.6]])
    np.testing.assert_array_equal(inside, expected)
    # the atom stays on the diagonal: a low in-bin reaches a low out-bin iff they overlap
    M = m.bin_transition(in_edges, out)
    low_cols = (out[:-1] >= -0.3) & (out[1:] <= 0.6)
    low_rows = (in_edges[:-1] >= -0.3) & (in_edges[1:] <= 0.6)
    overlap = np.minimum(in_edges[1:, None], out[None, 1:]) > np.maximum(in_edges[:-1, None], out[None, :-1])
    np.testing.assert_array_equal((M > 0)[np.ix_(low_rows, low_cols)], overlap[np.ix_(low_rows, low_cols)])
