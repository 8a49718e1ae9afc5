"""Keyed (counter-based) randomness for memoized responses: the same device key and value always give
the same response, with no state stored on the device beyond its key.

RAPPOR's permanent randomized response and dBitFlip/1BitMean's memoization (docs/math.md §7.2, §7.3)
need, per device, a random draw per (value, position) that is fixed forever. Drawing it from a
``Generator`` would force the device to store every memo; instead the draw is a hash of
(key, tag, value, position): SplitMix64/MurmurHash3 finalizers chained over the words, which behave
as independent uniforms for distinct inputs (the finalizer is a bijection with full avalanche; the
tests check uniformity and independence statistically). A device key is a uint64 drawn once per
device from the simulation's ``SeedSequence``; the simulator may memoize on top of this.

>>> u = keyed_uniforms(np.array([1, 2], dtype=np.uint64), 7)
>>> u.shape, bool(np.all((0 <= u) & (u < 1)))
((2,), True)
>>> bool(np.all(keyed_uniforms(np.uint64(5), 3, 4) == keyed_uniforms(np.uint64(5), 3, 4)))
True
"""

from __future__ import annotations

import numpy as np

_PHI = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def _fmix64(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> _S33)
    x = x * _C1
    x = x ^ (x >> _S33)
    x = x * _C2
    return x ^ (x >> _S33)


def keyed_words(keys, *words) -> np.ndarray:
    """64-bit hash of (key, word_1, ..., word_m), elementwise with broadcasting (uint64)."""
    with np.errstate(over="ignore"):
        h = _fmix64(np.asarray(keys, dtype=np.uint64) * _PHI + np.uint64(1))
        for i, w in enumerate(words):
            w = np.asarray(w).astype(np.uint64)
            h = _fmix64(h ^ _fmix64(w * _PHI + np.uint64(2 * i + 3)))
    return h


def keyed_uniforms(keys, *words) -> np.ndarray:
    """Uniform floats in [0, 1) on the 2^-53 grid, one per broadcast (key, words) cell."""
    return (keyed_words(keys, *words) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def device_keys(n: int, rng) -> np.ndarray:
    """``n`` independent uniform uint64 device keys from a ``Generator``."""
    return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)


def sample_subsets(n: int, k: int, d: int, uniform) -> np.ndarray:
    """Uniform d-subsets of [0, k) for n users, sorted per row (Floyd's algorithm, vectorized).

    ``uniform(step)`` returns n uniforms in [0, 1) for step 0..d−1 (a Generator's ``random`` or
    keyed uniforms). Floyd: for j = k−d .. k−1 draw t uniform in [0, j]; take t unless already taken,
    else take j — every d-subset has probability 1/C(k, d).
    """
    out = np.empty((n, d), dtype=np.int64)
    for step, j in enumerate(range(k - d, k)):
        t = np.minimum((uniform(step) * (j + 1)).astype(np.int64), j)
        taken = (out[:, :step] == t[:, None]).any(axis=1)
        out[:, step] = np.where(taken, j, t)
    out.sort(axis=1)
    return out


def check_gamma(owner: str, gamma) -> float:
    """The output-perturbation rate γ of a memoized bit, a float in [0, 0.5) (docs/math.md §7.3)."""
    from ldpsim.mechanisms._validation import check_real

    return check_real(owner, "gamma", gamma, 0.0, 0.5, low_open=False)


def flipped_probability(p, gamma: float):
    """P[sent bit = 1] when a bit that is 1 w.p. ``p`` is flipped w.p. γ: γ + (1 − 2γ)·p."""
    return gamma + (1 - 2 * gamma) * p


def flip_bits(bits: np.ndarray, gamma: float, rng) -> np.ndarray:
    """Output perturbation: each bit flipped independently w.p. γ with fresh randomness from ``rng``
    (a Generator); ``bits`` unchanged (and ``rng`` unused) when γ = 0."""
    if gamma == 0:
        return bits
    return bits ^ (rng.random(bits.shape) < gamma).astype(bits.dtype)
