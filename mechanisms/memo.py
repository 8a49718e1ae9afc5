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
mechanism's output law (the simulator's memoization keys it by device and value): vectorized keyed
samplers for the mechanisms with a transition matrix (rr, grr, urr, sdgrr), OUE, OLH, CMS and HCMS; a
mechanism may bring its own as ``perturb_memoized(values, keys[, rng])`` (RAPPOR's permanent response
and dBitFlip's memoized bits); any other falls back to one Philox generator per report, keyed the same
way (correct, slower).

>>> u = keyed_uniforms(np.array([1, 2], dtype=np.uint64), 7)
>>> u.shape, bool(np.all((0 <= u) & (u < 1)))
((2,), True)
>>> bool(np.all(keyed_uniforms(np.uint64(5), 3, 4) == keyed_uniforms(np.uint64(5), 3, 4)))
True
"""

from __future__ import annotations

import inspect

import numpy as np

from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.frequency.olh import OLH, OLHReports
from ldpsim.mechanisms.hashing import PHI, fmix64
from ldpsim.mechanisms.frequency.oue import OUE
from ldpsim.mechanisms.sketches.cms import CMS, CMSReports
from ldpsim.mechanisms.sketches.hcms import HCMS, HCMSReports, hadamard_sign

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
#: uniforms per keyed-sampler chunk (bounds the temporary memory of OUE and CMS reports)
_CHUNK = 1 << 22


def key_streams(keys: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """(len(keys), n) uniforms in [0, 1): number t of each key's stream is hash(key, t)."""
    return keyed_uniforms(np.asarray(keys, np.uint64)[:, None], np.arange(offset, offset + n)[None, :])


def _keyed_ints(keys, high: int, t: int) -> np.ndarray:
    return np.minimum((key_streams(keys, 1, t)[:, 0] * high).astype(np.int64), high - 1)


def _by_transition(mech, x, keys):
    cum = np.cumsum(mech.transition_matrix(), axis=1)
    u = key_streams(keys, 1)[:, 0]
    out = np.empty(x.size, np.int64)
    step = max(1, _CHUNK // cum.shape[1])
    for s in range(0, x.size, step):
        out[s:s + step] = (cum[x[s:s + step]] <= u[s:s + step, None]).sum(axis=1)
    return np.minimum(out, cum.shape[1] - 1)


def _oue(mech, x, keys):
    d = mech.domain_size
    out = np.empty((x.size, mech.report_bytes), np.uint8)
    step = max(1, _CHUNK // d)
    for s in range(0, x.size, step):
        u = key_streams(keys[s:s + step], d)
        own = np.arange(d)[None, :] == x[s:s + step, None]
        out[s:s + step] = np.packbits(u < np.where(own, mech.p, mech.q), axis=1)
    return out


def _olh(mech, x, keys):
    seed = (_keyed_ints(keys, 1 << 32, 0)).astype(np.uint32)
    h = mech.hash_items(seed, x).astype(np.int64)
    keep = key_streams(keys, 1, 1)[:, 0] < mech.p
    other = (h + 1 + _keyed_ints(keys, mech.g - 1, 2)) % mech.g
    return OLHReports(seed, np.where(keep, h, other))


def _cms(mech, tokens, keys):
    rows = _keyed_ints(keys, mech.k, 0)
    pos = mech.family.evaluate(rows, mech.value_keys(tokens))
    bits = np.empty((keys.size, -(-mech.m // 8)), np.uint8)
    step = max(1, _CHUNK // mech.m)
    for s in range(0, keys.size, step):
        bits[s:s + step] = np.packbits(key_streams(keys[s:s + step], mech.m, 1) < mech.flip, axis=1)
    bits[np.arange(keys.size), pos >> 3] ^= (0x80 >> (pos & 7)).astype(np.uint8)
    return CMSReports(bits, rows)


def _hcms(mech, tokens, keys):
    rows = _keyed_ints(keys, mech.k, 0)
    pos = mech.family.evaluate(rows, mech.value_keys(tokens))
    col = _keyed_ints(keys, mech.m, 1)
    plus = hadamard_sign(col, pos) > 0
    bit = (plus ^ (key_streams(keys, 1, 2)[:, 0] < mech.flip)).astype(np.uint8)
    return HCMSReports(bit, rows, col)


def _generic(mech, x, keys):
    """One Philox generator per report, keyed by the report key (any mechanism; a Python loop)."""
    parts = [mech.perturb(x[i:i + 1], np.random.Generator(np.random.Philox(key=int(k))))
             for i, k in enumerate(keys.tolist())]
    if not parts:
        return mech.perturb(x[:0], np.random.default_rng(0))
    if isinstance(parts[0], tuple):
        return type(parts[0])(*(np.concatenate(cols) for cols in zip(*parts)))
    return np.concatenate(parts)


def keyed_perturb(mech, values: np.ndarray, keys: np.ndarray, tokens=None, rng=None, dev_keys=None):
    """Reports of ``values`` (item ids; ``tokens`` = the items for token mechanisms), each a
    deterministic function of its uint64 key with the mechanism's output law. A mechanism with its
    own ``perturb_memoized(values, keys[, rng])`` is used as it is (RAPPOR memoizes the permanent
    response only and draws the instantaneous one from ``rng`` every day)."""
    x = np.asarray(values, np.int64)
    keys = np.asarray(keys, np.uint64)
    own = getattr(mech, "perturb_memoized", None)
    if own is not None:  # the mechanism's own memoization (RAPPOR's permanent response, dBitFlip)
        arg = tokens if getattr(mech, "takes_tokens", False) else x
        takes_rng = "rng" in inspect.signature(own).parameters
        k = keys if dev_keys is None else np.asarray(dev_keys, np.uint64)
        return own(arg, k, rng=rng) if takes_rng else own(arg, k)
    if isinstance(mech, CMS):
        return _cms(mech, tokens, keys)
    if isinstance(mech, HCMS):
        return _hcms(mech, tokens, keys)
    if isinstance(mech, OUE):
        return _oue(mech, x, keys)
    if isinstance(mech, OLH):
        return _olh(mech, x, keys)
    if callable(getattr(mech, "transition_matrix", None)) and not getattr(mech, "takes_tokens", False):
        try:
            return _by_transition(mech, x, keys)
        except NotImplementedError:
            pass
    return _generic(mech, tokens if getattr(mech, "takes_tokens", False) else x, keys)
