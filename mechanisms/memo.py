"""Keyed (counter-based) randomness for memoized responses: the same device key and value always give
the same response, with no state stored on the device beyond its key.

RAPPOR's permanent randomized response and dBitFlip/1BitMean's memoization (docs/math.md §7.2, §7.3)
need, per device, a random draw per (value, position) that is fixed forever. Drawing it from a
``Generator`` would force the device to store every memo; instead the draw is a hash of
(key, tag, value, position): SplitMix64/MurmurHash3 finalizers chained over the words, which behave
as independent uniforms for distinct inputs (the finalizer is a bijection with full avalanche; the
tests check uniformity and independence statistically). A device key is a uint64 drawn once per
device from the simulation's ``SeedSequence``.

:func:`keyed_perturb` makes the whole report of any mechanism a deterministic function of a key with the
mechanism's output law (the simulator's memoization keys it by device and value; docs/math.md §7.5,
"Memoization in the ledger"). The sampler is the mechanism's own: ``perturb_memoized(values, keys, rng)``
where the mechanism memoizes a permanent response itself (RAPPOR, dBitFlip, 1BitMean: keys are device
keys), else its vectorized ``perturb_keyed(values, keys)`` (OUE, OLH, CMS, HCMS and every
:class:`~ldpsim.mechanisms.base.DiscreteOracle`: keys are report keys); any other mechanism falls back
to one Philox generator per report, keyed the same way (exact, but a Python loop: :func:`keyed_perturb`).
This module holds only the keyed primitives those samplers draw with.

>>> u = keyed_uniforms(np.array([1, 2], dtype=np.uint64), 7)
>>> u.shape, bool(np.all((0 <= u) & (u < 1)))
((2,), True)
>>> bool(np.all(keyed_uniforms(np.uint64(5), 3, 4) == keyed_uniforms(np.uint64(5), 3, 4)))
True
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.hashing import PHI, fmix64
from ldpsim.runtime.errors import InputError

def keyed_words(keys, *words) -> np.ndarray:
    """64-bit hash of (key, word_1, ..., word_m), elementwise with broadcasting (uint64)."""
    with np.errstate(over="ignore"):
        h = fmix64(np.asarray(keys, dtype=np.uint64) * PHI + np.uint64(1))
        for i, w in enumerate(words):
            w = np.asarray(w).astype(np.uint64)
            h = fmix64(h ^ fmix64(w * PHI + np.uint64(2 * i + 3)))
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


# ---- memoized reports of any mechanism: a report as a deterministic function of its key ----------------
#: uniforms per keyed-sampler chunk (bounds the temporary memory of wide reports: OUE, CMS, big domains)
KEYED_CHUNK = 1 << 22


def key_streams(keys: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """(len(keys), n) uniforms in [0, 1): number t of each key's stream is hash(key, t)."""
    return keyed_uniforms(np.asarray(keys, np.uint64)[:, None], np.arange(offset, offset + n)[None, :])


def keyed_ints(keys: np.ndarray, high: int, t: int) -> np.ndarray:
    """One integer uniform in [0, ``high``) per key: ⌊high·u⌋ of uniform number ``t`` of its stream (int64)."""
    return np.minimum((key_streams(keys, 1, t)[:, 0] * high).astype(np.int64), high - 1)


def keyed_bits(keys: np.ndarray, n_bits: int, q: float, offset: int = 0, own=None, p: float | None = None):
    """Bit-packed rows (``np.packbits`` order, padding bits zero) of independent keyed Bernoulli bits.

    Bit j of row i is 1 iff uniform number ``offset + j`` of key i is below q, or below p for the bit
    ``own[i]`` when ``own`` is given; built in chunks of :data:`KEYED_CHUNK` uniforms.

    Parameters
    ----------
    keys : numpy.ndarray of uint64, shape (n,)
        One key per row.
    n_bits : int
        Bits per row.
    q : float
        P[bit = 1] of every bit (but the own one).
    offset : int
        First stream number used.
    own : numpy.ndarray of int, shape (n,), optional
        A bit of each row drawn with probability ``p`` instead.
    p : float, optional
        P[own bit = 1] (with ``own``).

    Returns
    -------
    numpy.ndarray of uint8, shape (n, ⌈n_bits/8⌉)
    """
    keys = np.asarray(keys, np.uint64)
    out = np.empty((keys.size, -(-n_bits // 8)), np.uint8)
    step = max(1, KEYED_CHUNK // n_bits)
    for s in range(0, keys.size, step):
        u = key_streams(keys[s:s + step], n_bits, offset)
        below = q if own is None else np.where(np.arange(n_bits)[None, :] == own[s:s + step, None], p, q)
        out[s:s + step] = np.packbits(u < below, axis=1)
    return out


def check_keys(owner: str, keys, n: int) -> np.ndarray:
    """``keys`` as uint64, one per value: :class:`InputError` naming ``keys`` when there are not ``n``."""
    keys = np.asarray(keys, dtype=np.uint64)
    if keys.shape != (n,):
        raise InputError(f"{owner}: 'keys' must hold one uint64 key per value ({n}); got shape {keys.shape}.")
    return keys


def philox_perturb(mech, values, keys: np.ndarray):
    """Reports of ``values``, report i drawn by ``mech.perturb`` from a Philox generator keyed by ``keys[i]``.

    Exact for any mechanism (its own client, one report at a time) but a Python loop: 80–400 µs a report
    (GRR, SUE, THE, FLH, measured on a shared two-core machine) against 0.06–8 µs a report for the
    vectorized keyed samplers (GRR 0.1, HR 0.06, OLH 0.09, OUE 0.4 at D = 10, HCMS 0.2, CMS 5 at m = 256).
    """
    parts = [mech.perturb(values[i:i + 1], np.random.Generator(np.random.Philox(key=int(k))))
             for i, k in enumerate(keys.tolist())]
    if not parts:
        return mech.perturb(values[:0], np.random.default_rng(0))
    if isinstance(parts[0], tuple):
        return type(parts[0])(*(np.concatenate(cols) for cols in zip(*parts)))
    return np.concatenate(parts)


def keyed_perturb(mech, values: np.ndarray, keys: np.ndarray, tokens=None, rng=None, dev_keys=None):
    """Reports of ``values``, each a deterministic function of its key with the mechanism's output law
    (docs/math.md §7.5, "Memoization in the ledger").

    The sampler is the mechanism's: its ``perturb_memoized(values, device keys, rng)`` when it memoizes a
    permanent response itself (RAPPOR memoizes the permanent response only and draws the instantaneous
    one from ``rng`` every day); else its vectorized ``perturb_keyed(values, keys)``; else
    :func:`philox_perturb` (exact, one Philox generator per report: about a thousand times slower).

    Parameters
    ----------
    mech : Mechanism
        Any mechanism with ``perturb``.
    values : array_like of int, shape (n,)
        Item ids (the memo's values).
    keys : array_like of uint64, shape (n,)
        Report keys: one per (device, value) (``simulator.memoization.report_keys``).
    tokens : array_like, shape (n,), optional
        The items as the mechanism takes them, for mechanisms with ``takes_tokens``.
    rng : numpy.random.Generator, int or None
        Fresh randomness of a ``perturb_memoized`` (RAPPOR's instantaneous response, γ flips).
    dev_keys : array_like of uint64, shape (n,), optional
        Device keys for ``perturb_memoized`` (default ``keys``).

    Returns
    -------
    reports
        As ``mech.perturb`` returns them.
    """
    arg = tokens if getattr(mech, "takes_tokens", False) else np.asarray(values, np.int64)
    keys = np.asarray(keys, np.uint64)
    if hasattr(mech, "perturb_memoized"):
        return mech.perturb_memoized(arg, keys if dev_keys is None else np.asarray(dev_keys, np.uint64), rng=rng)
    if hasattr(mech, "perturb_keyed"):
        return mech.perturb_keyed(arg, keys)
    return philox_perturb(mech, arg, keys)
