"""Keep-or-uniform oracles: input x is reported as itself w.p. ``keep[x]``, else as a uniform draw
from its fallback set. GRR (docs/math.md §1.2), URR (§1.3) and SDGRR (§1.4) are all of this form, so client,
aggregate, transition matrix, direct sampler and wire form are written once here.
"""

from __future__ import annotations

import numbers
from abc import abstractmethod

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_item_ids
from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, decode_uints, encode_uints, uint_bytes


def check_id_set(owner: str, name: str, ids, domain_size: int) -> tuple[int, ...]:
    """Validate a non-empty set of distinct item ids in [0, domain_size); return it as a sorted tuple.

    Parameters
    ----------
    owner, name : str
        Mechanism and parameter names for the error message.
    ids : iterable of int
        The ids.
    domain_size : int
        D; every id must lie in [0, D).

    Returns
    -------
    tuple of int

    Raises
    ------
    TypeError
        If ``ids`` is not a sequence of ints.
    ValueError
        If it is empty, has an id out of range or an id twice.
    """
    allowed = f"a non-empty sequence of distinct int ids in [0, {domain_size})"
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"The {name!r} parameter of {owner} must be {allowed}. Got {ids!r} instead.")
    items = list(ids)
    bad_type = [v for v in items if isinstance(v, bool) or not isinstance(v, numbers.Integral)]
    if bad_type:
        raise TypeError(f"The {name!r} parameter of {owner} must be {allowed}. Got element {bad_type[0]!r}.")
    if not items:
        raise ValueError(f"The {name!r} parameter of {owner} must be {allowed}. Got an empty set.")
    out = [int(v) for v in items if not 0 <= int(v) < domain_size]
    if out:
        raise ValueError(f"The {name!r} parameter of {owner} must be {allowed}. "
                         f"Got id {out[0]} (out of range).")
    unique, n_seen = np.unique(np.asarray(items, dtype=np.int64), return_counts=True)
    if np.any(n_seen > 1):
        raise ValueError(f"The {name!r} parameter of {owner} must be {allowed}. "
                         f"Got id {int(unique[n_seen > 1][0])} more than once.")
    return tuple(int(v) for v in unique)


class KeepOrUniform(DiscreteOracle):
    """Input x → x w.p. ``keep[x]``, else a uniform draw from ``fallback_sets[fallback_of[x]]``.

    Subclasses (frozen dataclasses) call :meth:`_set_mixture` once in ``__post_init__`` and provide
    ``estimate``, :meth:`estimator_matrix` (the same estimates as a linear map of the output counts) and
    the closed-form variance ``_count_variance``. Client, aggregate, transition matrix, direct sampler
    and wire form follow from the mixture form.
    """

    def _set_mixture(self, keep, fallback_sets, fallback_of) -> None:
        object.__setattr__(self, "_keep", np.asarray(keep, dtype=np.float64))
        object.__setattr__(self, "_fallback_sets", [np.asarray(s, dtype=np.int64) for s in fallback_sets])
        object.__setattr__(self, "_fallback_of", np.asarray(fallback_of, dtype=np.int64))

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> np.ndarray:
        """Client side: keep each id w.p. ``keep[x]``, else a uniform draw from its fallback set.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            One item id in [0, D) per user.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            The reported ids.
        """
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        keep = rng.random(x.size) < self._keep[x]
        # one uniform draw per user from every fallback set (scalar bounds are fast), then pick the user's
        fallback = None
        for g, members in enumerate(self._fallback_sets):
            draw = members[rng.integers(0, members.size, size=x.size)]
            fallback = draw if fallback is None else np.where(self._fallback_of[x] == g, draw, fallback)
        return np.where(keep, x, fallback)

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        """Output counts c_y of the reported ids.

        Parameters
        ----------
        reports : array_like of int, shape (n,)
            Reported ids in [0, D).

        Returns
        -------
        Aggregate
            ``data`` = the D output counts (int64).
        """
        y = check_item_ids(f"{self.name}.aggregate", reports, self.domain_size, "reports")
        return Aggregate(y.size, np.bincount(y, minlength=self.domain_size), self.kind)

    @abstractmethod
    def estimator_matrix(self) -> np.ndarray:
        """The count estimator as a linear map: ``estimate(agg) == estimator_matrix() @ agg.data`` (D × D).

        With :func:`.linear_theory.linear_estimator_variance` it gives the exact variance at O(D²) memory;
        :meth:`variance` evaluates the same quantity in O(D) by a closed form (the tests check they agree).
        """

    @abstractmethod
    def _count_variance(self, f: np.ndarray) -> np.ndarray:
        """Exact variance of all D count estimates for validated (possibly non-integer) true counts f."""

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        """Exact variance of the count estimates for a fixed population (see :mod:`.linear_theory`).

        The population's inputs are fixed (true counts f), not drawn i.i.d.; the π_y(1 − π_y)/n form of
        docs/math.md §1.4 is the i.i.d.-input variance and is larger by the input-sampling term.

        Parameters
        ----------
        true_counts : array_like of non-negative numbers, shape (D,)
            Users holding each id (all D ids: every estimate depends on n and, for SDGRR, on N_H).
        items : array_like of int, optional
            Ids whose variance is returned (default: all).

        Returns
        -------
        numpy.ndarray of float
            Count-scale variances (divide by n² for frequencies).
        """
        f = check_counts(self.name, true_counts, self.domain_size)
        return self._count_variance(f.astype(np.float64))[self._items(items)]

    def transition_matrix(self) -> np.ndarray:
        """``P[x, y] = P[y | x]`` (D × D, rows sum to one), built from the mixture form."""
        d = self.domain_size
        P = np.zeros((d, d))
        for g, members in enumerate(self._fallback_sets):
            rows = self._fallback_of == g
            P[np.ix_(rows, members)] = ((1 - self._keep[rows]) / members.size)[:, None]
        P[np.arange(d), np.arange(d)] += self._keep
        return P

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact direct sampler: kept reports Bin(f_x, keep[x]); the rest Multinomial over their fallback set.

        Parameters
        ----------
        true_counts : array_like of non-negative ints, shape (D,)
            Users holding each id.
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : ignored
            (Oracles on ids aggregate over all D ids.)

        Returns
        -------
        Aggregate
            Distributed exactly as ``aggregate(perturb(values))`` for such a population.
        """
        f = check_counts(self.name, true_counts, self.domain_size)
        rng = as_generator(rng)
        kept = rng.binomial(f, self._keep)
        counts = kept.copy()
        moved = np.bincount(self._fallback_of, weights=f - kept, minlength=len(self._fallback_sets))
        for members, n_moved in zip(self._fallback_sets, moved.astype(np.int64)):
            counts[members] += rng.multinomial(n_moved, np.full(members.size, 1.0 / members.size))
        return Aggregate(int(f.sum()), counts, self.kind)

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """The reported item id as a little-endian unsigned integer of ⌈log2 D / 8⌉ bytes."""
        return uint_bytes(self.domain_size)

    def encode(self, reports) -> bytes:
        """Reported ids as little-endian unsigned integers of ``report_bytes`` bytes each."""
        y = check_item_ids(f"{self.name}.encode", reports, self.domain_size, "reports")
        return encode_uints(y, self.report_bytes)

    def decode(self, payload: bytes) -> np.ndarray:
        """Reported ids from their wire form (``report_bytes`` little-endian bytes each).

        Parameters
        ----------
        payload : bytes
            Output of :meth:`encode`.

        Returns
        -------
        numpy.ndarray of int64
            The reported ids; ``ValueError`` on a partial report or an id ≥ D.
        """
        self._check_payload(payload)
        y = decode_uints(payload, self.report_bytes)
        return check_item_ids(f"{self.name}.decode", y, self.domain_size, "payload")
