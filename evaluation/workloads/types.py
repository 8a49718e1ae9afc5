"""The two workload shapes (categorical populations and numeric readings) and exact rounding — docs/math.md §5.

A :class:`Workload` is a categorical population given by *exact* counts (no sampling noise in the
truth): item ``i`` is held by ``counts[i]`` users, items sorted by count, most frequent first.
A :class:`NumericWorkload` holds one reading per user in [−1, 1] (or a point in [−1, 1]² for 2-D
workloads such as tap positions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int


def largest_remainder(frequencies, n) -> np.ndarray:
    """Exact counts summing to ``n`` from (unnormalised) frequencies — docs/math.md §5.

    Hamilton's largest-remainder method: every item gets ⌊n·f_i⌋ (``f`` normalised to sum 1), and
    the ``n − Σ⌊n·f_i⌋`` left-over users go one each to the items with the largest remainders
    n·f_i − ⌊n·f_i⌋; equal remainders go to the earlier item. Descending frequencies give
    non-increasing counts.

    >>> largest_remainder([0.5, 0.3, 0.2], 7).tolist()
    [4, 2, 1]
    """
    n = check_int("largest_remainder", "n", n, low=0)
    f = np.asarray(frequencies, dtype=np.float64)
    if f.ndim != 1 or f.size == 0:
        raise ValueError(f"largest_remainder: 'frequencies' must be a non-empty 1-D array; got shape {f.shape}.")
    if not np.all(np.isfinite(f)) or f.min() < 0 or f.sum() <= 0:
        raise ValueError("largest_remainder: 'frequencies' must be finite, non-negative and not all zero.")
    exact = n * (f / f.sum())
    counts = np.floor(exact).astype(np.int64)
    short = n - int(counts.sum())
    if short > 0:
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[:short]] += 1
    return counts


@dataclass(frozen=True)
class Workload:
    """A categorical population with exact counts, items sorted by count (rank 1 first).

    Parameters
    ----------
    name : str
        Workload name (for result rows and messages).
    items : array_like, shape (D,)
        Distinct labels: int ids, or str tokens (words, emoji, categories; stored as an object array).
    counts : array_like of non-negative int, shape (D,)
        Users holding each item, in descending order (no sampling noise in the truth).
    params : dict, optional
        How the workload was built (name-independent parameters, for result rows).

    Examples
    --------
    >>> w = Workload("toy", ["b", "a"], [3, 1])
    >>> w.n, w.frequencies.tolist(), w.ranks.tolist()
    (4, [0.75, 0.25], [1, 2])
    """

    name: str
    items: np.ndarray
    counts: np.ndarray
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        items = np.asarray(self.items)
        if items.dtype.kind in "US":  # str tokens are kept as Python str objects (hashable, any length)
            items = items.astype(object)
        counts = np.asarray(self.counts)
        if items.ndim != 1 or counts.ndim != 1 or items.shape != counts.shape or items.size == 0:
            raise ValueError(f"Workload {self.name!r}: 'items' and 'counts' must be non-empty 1-D arrays of "
                             f"equal length; got shapes {items.shape} and {counts.shape}.")
        if not np.issubdtype(counts.dtype, np.integer) or counts.min() < 0:
            raise ValueError(f"Workload {self.name!r}: 'counts' must be non-negative integers.")
        if np.any(np.diff(counts) > 0):
            raise ValueError(f"Workload {self.name!r}: 'counts' must be sorted in descending order (rank 1 first).")
        if len(set(items.tolist())) != items.size:
            raise ValueError(f"Workload {self.name!r}: 'items' must be distinct.")
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "counts", counts.astype(np.int64))
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def from_frequencies(cls, name: str, items, frequencies, n: int, params: dict | None = None) -> "Workload":
        """Exact population of ``n`` users (largest remainder), items re-sorted by count (stable)."""
        counts = largest_remainder(frequencies, n)
        order = np.argsort(-counts, kind="stable")
        return cls(name, np.asarray(items)[order], counts[order], params or {})

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.counts.sum())

    @property
    def domain_size(self) -> int:
        """Number of distinct items D."""
        return int(self.counts.size)

    @property
    def frequencies(self) -> np.ndarray:
        """counts / n."""
        return self.counts / self.n

    @property
    def ranks(self) -> np.ndarray:
        """True ranks, 1 = most frequent (items are stored in rank order; ties keep item order)."""
        return np.arange(1, self.domain_size + 1)

    def values(self, rng=None, as_ids: bool = True) -> np.ndarray:
        """One value per user, shuffled: item ids (positions in ``items``) or the labels themselves."""
        rng = as_generator(rng)
        ids = np.repeat(np.arange(self.domain_size), self.counts)
        ids = ids[rng.permutation(ids.size)]
        return ids if as_ids else self.items[ids]


@dataclass(frozen=True)
class NumericWorkload:
    """Per-user readings in [−1, 1] (1-D), or points in [−1, 1]² (an (n, 2) array, e.g. tap positions).

    The normalisation to [−1, 1] uses a fixed public range recorded in ``params`` (never bounds
    taken from the private data; docs/math.md §5).

    Parameters
    ----------
    name : str
        Workload name.
    values : array_like of float, shape (n,) or (n, 2)
        One finite reading in [−1, 1] (or point in [−1, 1]²) per user, n ≥ 1.
    params : dict, optional
        How the workload was built, including the public range.

    Examples
    --------
    >>> round(NumericWorkload("toy", [0.5, -0.5, 0.3]).true_mean, 6)
    0.1
    """

    name: str
    values: np.ndarray
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        v = np.asarray(self.values, dtype=np.float64)
        if v.ndim not in (1, 2) or v.shape[0] == 0 or (v.ndim == 2 and v.shape[1] != 2):
            raise ValueError(f"NumericWorkload {self.name!r}: 'values' must be a non-empty (n,) or (n, 2) "
                             f"array; got shape {v.shape}.")
        if not np.all(np.isfinite(v)) or v.min() < -1 or v.max() > 1:
            raise ValueError(f"NumericWorkload {self.name!r}: 'values' must be finite and in [-1, 1].")
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "params", dict(self.params))

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.values.shape[0])

    @property
    def true_mean(self) -> float | np.ndarray:
        """The true mean (a float; a length-2 array for 2-D workloads)."""
        m = self.values.mean(axis=0)
        return float(m) if self.values.ndim == 1 else m
