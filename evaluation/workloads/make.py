"""Workloads by name: the explicit registry, user-registered builders and CSV files — docs/math.md §5.

>>> w = make_workload("harmonic", 1000, domain_size=4)
>>> w.counts.tolist(), w.ranks.tolist()
([480, 240, 160, 120], [1, 2, 3, 4])

| name | kind | parameters (defaults) |
|---|---|---|
| ``harmonic`` | categorical, count ∝ 1/r | ``domain_size`` (100) |
| ``zipf`` | categorical, count ∝ r^(−s) | ``domain_size`` (100), ``s`` (1.0) |
| ``exponential`` | categorical, count ∝ x^r | ``domain_size`` (100), ``x`` (1/1.3) |
| ``even`` | categorical, uniform | ``domain_size`` (100) |
| ``words`` | wordfreq English words | ``top`` (2000) |
| ``emoji`` | wordfreq English emoji, variants merged, text symbols left out | ``top`` (100, at most 721), ``symbols`` (False) |
| ``words-slang`` | words of ≤ 8 symbols + generated slang | ``top`` (2000), ``slang_shares``, ``start_day``, ``length`` |
| ``census-education`` / ``census-marital`` | 18 / 7 categories (illustrative substitute) | — |
| ``heights`` / ``weights`` | normal, in [−1, 1] | ``mean``, ``sd`` |
| ``typing-speed`` | lognormal wpm, in [−1, 1] | ``mean``, ``sd``, ``max_wpm`` |
| ``key-latency`` | lognormal ms between taps, in [−1, 1] | ``median_ms``, ``sigma``, ``max_ms`` |
| ``tap-positions`` | 2-D QWERTY tap mixture, in [−1, 1]² | ``top``, ``spread`` |
| ``vocabulary`` | your own items from a file (:mod:`.vocabulary`) | ``vocabulary`` (the file), ``format``, ``lowercase``, ``top``, ``sha256`` |
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Callable

from ldpsim.mechanisms._validation import as_generator, check_int

from ldpsim.evaluation.workloads.types import NumericWorkload, Workload, largest_remainder
from ldpsim.evaluation.workloads.readings import heights, key_latency, tap_positions, typing_speed, weights
from ldpsim.evaluation.workloads.real import emoji, words
from ldpsim.evaluation.workloads.slang import words_slang
from ldpsim.evaluation.workloads.synthetic import census_education, census_marital, even, exponential, harmonic, zipf
from ldpsim.evaluation.workloads.vocabulary import load_vocabulary, vocabulary_workload

__all__ = ["NumericWorkload", "WORKLOADS", "Workload", "largest_remainder", "make_workload",
           "register_workload", "workload_from_csv"]

#: name used in scenario files → builder ``(n, rng=None, **params) -> Workload | NumericWorkload``
WORKLOADS: dict[str, Callable] = {
    "harmonic": harmonic,
    "zipf": zipf,
    "exponential": exponential,
    "even": even,
    "words": words,
    "emoji": emoji,
    "words-slang": words_slang,
    "census-education": census_education,
    "census-marital": census_marital,
    "heights": heights,
    "weights": weights,
    "typing-speed": typing_speed,
    "key-latency": key_latency,
    "tap-positions": tap_positions,
    "vocabulary": vocabulary_workload,
}


def _parameters(fn: Callable) -> list[str]:
    """The keyword parameters a builder accepts besides ``n`` and ``rng``."""
    return [p for p in inspect.signature(fn).parameters if p not in ("n", "rng")]


def register_workload(name: str, fn: Callable) -> None:
    """Add a user builder ``fn(n, rng=None, **params) -> Workload | NumericWorkload`` under ``name``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_workload: 'name' must be a non-empty str; got {name!r}.")
    if not callable(fn):
        raise TypeError(f"register_workload: 'fn' must be callable; got {type(fn).__name__}.")
    params = inspect.signature(fn).parameters
    if "n" not in params or "rng" not in params:
        raise TypeError(f"register_workload: {name!r} must accept (n, rng, **params); "
                        f"its signature is {inspect.signature(fn)}.")
    if name in WORKLOADS:
        raise ValueError(f"register_workload: {name!r} is already registered.")
    WORKLOADS[name] = fn


def make_workload(name: str, n: int, rng=None, **params) -> Workload | NumericWorkload:
    """Build the workload registered as ``name`` for ``n`` users (docs/math.md §5).

    Parameters
    ----------
    name : str
        A registered name (module table; :func:`register_workload` adds more).
    n : int
        Number of users, ≥ 1 (categorical workloads are rounded to exactly n by largest remainder).
    rng : numpy.random.Generator, int or None
        Randomness for sampled workloads (numeric readings); categorical ones are deterministic.
    **params
        The builder's parameters (module table), e.g. ``domain_size=100`` or ``top=2000``.

    Returns
    -------
    Workload or NumericWorkload

    Raises
    ------
    ValueError
        For an unknown name or parameter (the message lists what is allowed) or an invalid value.

    Examples
    --------
    >>> make_workload("exponential", 100, domain_size=3).counts.tolist()
    [42, 33, 25]
    """
    if name not in WORKLOADS:
        raise ValueError(f"Unknown workload {name!r}; choose one of {sorted(WORKLOADS)}.")
    fn = WORKLOADS[name]
    allowed = _parameters(fn)
    has_kwargs = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    unknown = sorted(set(params) - set(allowed))
    if unknown and not has_kwargs:
        raise ValueError(f"Unknown parameter(s) {unknown} for workload {name!r}; allowed: {allowed}.")
    n = check_int(f"workload {name!r}", "n", n, low=1)
    out = fn(n, as_generator(rng), **params)
    if not isinstance(out, (Workload, NumericWorkload)):
        raise TypeError(f"Workload builder {name!r} returned {type(out).__name__}, "
                        "not a Workload or NumericWorkload.")
    return out


def workload_from_csv(path, n: int | None = None) -> Workload:
    """A categorical workload from a CSV file with a header row ``item,count`` (or any table
    :func:`~ldpsim.evaluation.workloads.vocabulary.load_vocabulary` reads, by its extension).

    Without ``n`` the counts are used as they are; with it they are taken as shares and rescaled to
    exactly ``n`` users (largest remainder). Items are kept as str labels, sorted by count (stable);
    repeated items are merged (their counts added).
    """
    path = Path(path)
    n = None if n is None else check_int("workload_from_csv", "n", n, low=1)
    return load_vocabulary(path).to_workload(n, name=path.stem)
