"""Personalized SDGRR and the inverse-variance combination (SPEC §2.4)."""

from __future__ import annotations

import numpy as np
import pytest

from mechanisms.personalized import combine_inverse_variance


# combine_inverse_variance ------------------------------------------------------------------------
def test_combine_matches_formula_and_broadcasts_over_trailing_axes():
    est = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 0.0]])
    var = np.array([[1.0, 2.0], [2.0, 2.0], [4.0, 1.0]])
    c, v = combine_inverse_variance(est, var)
    w = 1 / var
    np.testing.assert_allclose(c, (w * est).sum(0) / w.sum(0))
    np.testing.assert_allclose(v, 1 / w.sum(0))
    c3, v3 = combine_inverse_variance(est[:, :, None], var[:, :, None])
    assert c3.shape == (2, 1)
    np.testing.assert_allclose(c3[:, 0], c)


def test_combine_skips_empty_groups_marked_by_infinite_variance():
    c, v = combine_inverse_variance([[np.nan, 1.0], [2.0, np.nan], [4.0, 3.0]],
                                    [[np.inf, 1.0], [1.0, np.inf], [1.0, 1.0]])
    np.testing.assert_allclose(c, [3.0, 2.0])
    np.testing.assert_allclose(v, [0.5, 0.5])
    c, v = combine_inverse_variance([[np.nan]], [[np.inf]])
    assert np.isnan(c[0]) and v[0] == np.inf


def test_combine_single_group_is_identity():
    c, v = combine_inverse_variance([[1.5, -2.0]], [[0.3, 0.7]])
    np.testing.assert_allclose(c, [1.5, -2.0])
    np.testing.assert_allclose(v, [0.3, 0.7])


@pytest.mark.parametrize("est, var, match", [
    ([1.0, 2.0], [1.0], "same shape"),
    (np.zeros((0, 3)), np.zeros((0, 3)), "at least one group"),
    ([1.0, 2.0], [1.0, 0.0], r"\(0, inf\].*got 0.0 at flat index 1"),
    ([1.0, 2.0], [1.0, -1.0], r"\(0, inf\]"),
    ([1.0, 2.0], [np.nan, 1.0], r"\(0, inf\]"),
    ([np.nan, 2.0], [1.0, 1.0], "non-finite estimate"),
])
def test_combine_rejects_bad_input(est, var, match):
    with pytest.raises(ValueError, match=match):
        combine_inverse_variance(est, var)
