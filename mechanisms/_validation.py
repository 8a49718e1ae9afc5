"""Parameter validation shared by every mechanism.

One message shape everywhere (scikit-learn's): "The 'epsilon' parameter of GRR must be a float in
the range [1e-06, 50]. Got -1 instead." Validation happens once, where parameters enter; hot inner
math does not re-check.

Supported privacy budgets: :data:`EPSILON_MIN` ≤ ε ≤ :data:`EPSILON_MAX` for every mechanism
(:func:`check_epsilon`). Below 1e-6, p − q = (e^ε − 1)/(e^ε + D − 1) loses its digits to rounding
(at ε = 1e-300 it is exactly 0 and estimates are ±inf); above 50, e^ε > 5·10²¹ makes q underflow
relative to p (and e^ε overflows a float beyond ε ≈ 709), while the mechanism is no longer private in
any useful sense.

The δ of an (ε, δ) guarantee a user chooses (``--delta``, a study's ``delta``): 0 < δ ≤ :data:`DELTA_MAX`
= 10⁻³ (:func:`check_delta`). δ is the probability that the ε bound does not hold for a person, so it
must stay far below 1/n: releasing one person's data outright, chosen at random among n, is (0, 1/n)-DP.
10⁻³ is the largest δ any shipped scenario or test uses (small TrieHH fleets); the defaults are 10⁻⁹ and
10⁻⁶. Composition and amplification formulas take any δ in (0, 1); only the choice is bounded.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from ldpsim.mechanisms.deltas import DELTA_MAX
from ldpsim.runtime.errors import InputError

#: the supported range of every privacy budget ε (inclusive)
EPSILON_MIN, EPSILON_MAX = 1e-6, 50.0


def _fail(owner: str, name: str, allowed: str, value, exc=InputError):
    raise exc(f"The {name!r} parameter of {owner} must be {allowed}. Got {value!r} instead.")


def check_real(owner: str, name: str, value, low=-math.inf, high=math.inf,
               low_open=True, high_open=True) -> float:
    """Return ``value`` as a float, or raise naming the parameter, the range and the value."""
    lo_b, hi_b = ("(" if low_open else "["), (")" if high_open else "]")
    allowed = f"a float in the range {lo_b}{low:g}, {high:g}{hi_b}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(owner, name, allowed, value, TypeError)
    v = float(value)
    if not math.isfinite(v):
        _fail(owner, name, allowed + " (finite)", value)
    if v < low or v > high or (low_open and v == low) or (high_open and v == high):
        _fail(owner, name, allowed, value)
    return v


def check_epsilon(owner: str, value, name: str = "epsilon") -> float:
    """A privacy budget: a float in [EPSILON_MIN, EPSILON_MAX] = [1e-6, 50] (see the module docstring)."""
    return check_real(owner, name, value, EPSILON_MIN, EPSILON_MAX, low_open=False, high_open=False)


def check_delta(owner: str, value, name: str = "delta") -> float:
    """A chosen δ: a float in (0, :data:`DELTA_MAX`] (see the module docstring)."""
    return check_real(owner, name, value, 0.0, DELTA_MAX, high_open=False)


def machine_memory() -> int:
    """Physical memory of this machine in bytes (``LDPSIM_MEMORY_BYTES`` overrides it; 16 GiB if unknown)."""
    override = os.environ.get("LDPSIM_MEMORY_BYTES")
    if override:
        return int(float(override))
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16 * 2**30


def check_memory(owner: str, n_bytes: float, what: str, keys: str) -> None:
    """Refuse a structure of ``n_bytes`` that cannot fit in half this machine's memory (names the keys)."""
    limit = machine_memory() // 2
    if n_bytes > limit:
        raise InputError(f"{owner}: {what} would need {n_bytes / 2**30:,.2f} GiB, more than half of this machine's "
                         f"{machine_memory() / 2**30:.1f} GiB; lower {keys}.")


def check_int(owner: str, name: str, value, low: int = 1, high: int | None = None) -> int:
    """Return ``value`` as an int in [low, high]; floats (even 2.0) and bools are a TypeError."""
    allowed = f"an int in the range [{low}, {'inf' if high is None else high}{')' if high is None else ']'}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _fail(owner, name, allowed, value, TypeError)
    v = int(value)
    if v < low or (high is not None and v > high):
        _fail(owner, name, allowed, value)
    return v


#: largest domain of an integer-id oracle (ids fit 32 bits; the aggregate is checked against memory too)
MAX_DOMAIN = 1 << 32


def check_domain_size(owner: str, value, low: int = 2, bytes_per_item: int = 8) -> int:
    """A domain size D in [low, 2^32] whose per-item server state (``bytes_per_item`` each) fits in memory."""
    d = check_int(owner, "domain_size", value, low=low, high=MAX_DOMAIN)
    check_memory(owner, float(d) * bytes_per_item, f"'domain_size' = {d:,} (its aggregate of {d:,} counts)",
                 "domain_size")
    return d


def check_item_ids(owner: str, values, domain_size: int, name: str = "values") -> np.ndarray:
    """Validate an array of item ids in [0, domain_size) and return it as an int64 array."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{owner}: {name!r} must be a 1-D array of item ids; got shape {arr.shape}.")
    if arr.size == 0:
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{owner}: {name!r} must hold integer item ids in [0, {domain_size}); "
                        f"got dtype {arr.dtype}.")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= domain_size:
        bad = int(np.flatnonzero((arr < 0) | (arr >= domain_size))[0])
        raise InputError(f"{owner}: {name!r} must hold item ids in [0, {domain_size}); "
                         f"got {int(arr[bad])} at index {bad}.")
    return arr.astype(np.int64, copy=False)


def check_counts(owner: str, counts, length: int | None = None, name: str = "true_counts") -> np.ndarray:
    """Validate a vector of non-negative integer counts (optionally of a given length)."""
    arr = np.asarray(counts)
    if arr.ndim != 1 or (length is not None and arr.shape[0] != length):
        want = "a 1-D array" if length is None else f"a 1-D array of length {length}"
        raise InputError(f"{owner}: {name!r} must be {want}; got shape {arr.shape}.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise InputError(f"{owner}: {name!r} must hold whole non-negative counts.")
    if arr.size and arr.min() < 0:
        raise InputError(f"{owner}: {name!r} must be non-negative; got {arr.min()}.")
    return arr.astype(np.int64)


def check_finite_in(owner: str, values, low: float, high: float, name: str = "values") -> np.ndarray:
    """Validate a 1-D float array with every entry finite and in [low, high] (numbers only: no strings, bools)."""
    raw = np.asarray(values)
    if raw.size and raw.dtype.kind not in "iuf":
        raise TypeError(f"{owner}: {name!r} must hold real numbers in [{low:g}, {high:g}]; got dtype {raw.dtype}.")
    arr = raw.astype(np.float64)
    if arr.ndim != 1:
        raise InputError(f"{owner}: {name!r} must be a 1-D array; got shape {arr.shape}.")
    bad = ~np.isfinite(arr) | (arr < low) | (arr > high)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{owner}: {name!r} must be finite values in [{low:g}, {high:g}]; "
                         f"got {arr[i]!r} at index {i}.")
    return arr


def as_generator(rng) -> np.random.Generator:
    """Normalise ``rng`` (None, int seed, SeedSequence or Generator) to a ``numpy.random.Generator``."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)
