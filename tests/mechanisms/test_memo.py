"""Keyed uniforms: uniform, independent across words, deterministic."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ldpsim.mechanisms.memo import device_keys, keyed_uniforms
from tests.stats import assert_chisquare_gof


def test_keyed_uniforms_are_uniform_and_pairwise_independent():
    keys = device_keys(100_000, np.random.default_rng(0))
    u, v = keyed_uniforms(keys, 1, 0), keyed_uniforms(keys, 1, 1)
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    cells = np.minimum((u * 8).astype(int), 7) * 8 + np.minimum((v * 8).astype(int), 7)
    assert_chisquare_gof(np.bincount(cells, minlength=64), np.full(64, 1 / 64), what="(u, v) pairs")
    w = keyed_uniforms(np.arange(100_000, dtype=np.uint64), 5)  # consecutive keys
    assert stats.kstest(w, "uniform").pvalue > 1e-4


def test_keyed_uniforms_are_deterministic_and_word_sensitive():
    k = np.array([7, 8], dtype=np.uint64)
    np.testing.assert_array_equal(keyed_uniforms(k, 3, 4), keyed_uniforms(k, 3, 4))
    assert not np.any(keyed_uniforms(k, 3, 4) == keyed_uniforms(k, 4, 3))
