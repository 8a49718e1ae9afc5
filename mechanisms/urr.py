"""Utility-optimized randomized response (URR; Murakami & Kawamoto, USENIX Security 2019) — SPEC §1.3.

Also home of :class:`KeepOrUniform`, the shared machinery of URR and SDGRR: input x is reported as
itself with probability ``keep[x]``, else as a uniform draw from the fallback set of x.
"""

from __future__ import annotations

import math
import numbers
from abc import abstractmethod
from dataclasses import dataclass, field

import numpy as np

from ._validation import as_generator, check_counts, check_epsilon, check_int, check_item_ids
from .base import Aggregate, DiscreteOracle, decode_uints, encode_uints, uint_bytes


def check_id_set(owner: str, name: str, ids, domain_size: int) -> tuple[int, ...]:
    """A non-empty set of distinct item ids in [0, domain_size), returned as a sorted tuple."""
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

        The population's inputs are fixed (true counts f), not drawn i.i.d.; SPEC §1.4's
        π_y(1 − π_y)/n form is the i.i.d.-input variance and is larger by the input-sampling term.
        """
        f = check_counts(self.name, true_counts, self.domain_size)
        return self._count_variance(f.astype(np.float64))[self._items(items)]

    def transition_matrix(self) -> np.ndarray:
        d = self.domain_size
        P = np.zeros((d, d))
        for g, members in enumerate(self._fallback_sets):
            rows = self._fallback_of == g
            P[np.ix_(rows, members)] = ((1 - self._keep[rows]) / members.size)[:, None]
        P[np.arange(d), np.arange(d)] += self._keep
        return P

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact: kept reports Binomial(f_x, keep[x]); the others Multinomial over their fallback set."""
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
        y = check_item_ids(f"{self.name}.encode", reports, self.domain_size, "reports")
        return encode_uints(y, self.report_bytes)

    def decode(self, payload: bytes) -> np.ndarray:
        self._check_payload(payload)
        y = decode_uints(payload, self.report_bytes)
        return check_item_ids(f"{self.name}.decode", y, self.domain_size, "payload")


@dataclass(frozen=True)
class URR(KeepOrUniform):
    """Utility-optimized randomized response over item ids ``0 .. domain_size-1``.

    Privacy: (X_S, ε)-ULDP (utility-optimized LDP): for all inputs x, x' and every sensitive output
    y ∈ X_S, P[y|x] ≤ e^ε P[y|x'] (ratio c1/c2 = e^ε attained); each non-sensitive output y ∈ X_N has
    exactly one preimage (y itself), so it reveals a non-sensitive input. Not ε-LDP over all pairs.

    Client (SPEC §1.3), with c1 = e^ε/(|X_S|+e^ε−1), c2 = 1/(|X_S|+e^ε−1), c3 = (e^ε−1)/(|X_S|+e^ε−1):
    x ∈ X_S reports x w.p. c1, any other s ∈ X_S w.p. c2; x ∈ X_N reports x w.p. c3, any s ∈ X_S w.p. c2.
    Sampled as the mixture: x ∈ X_S: w.p. c1 − c2 report x, else uniform over X_S;
    x ∈ X_N: w.p. c3 report x, else uniform over X_S.
    Server (count scale): s ∈ X_S: (c_s − n·c2)/(c1 − c2); x ∈ X_N: c_x / c3. Both unbiased.

    >>> m = URR(epsilon=1.0, domain_size=5, sensitive=[3, 0])
    >>> m.sensitive, round(m.c1 / m.c2, 6) == round(math.e, 6)
    ((0, 3), True)
    """

    epsilon: float
    domain_size: int
    sensitive: tuple
    c1: float = field(init=False, repr=False)
    c2: float = field(init=False, repr=False)
    c3: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        d = check_int(self.name, "domain_size", self.domain_size, low=2)
        s = check_id_set(self.name, "sensitive", self.sensitive, d)
        if len(s) == d:
            raise ValueError(f"The 'sensitive' parameter of {self.name} must be a strict subset of "
                             f"[0, {d}). Got all {d} ids (with every value sensitive URR is GRR: use GRR).")
        denom = len(s) + math.exp(eps) - 1
        for k, v in dict(epsilon=eps, domain_size=d, sensitive=s, c1=math.exp(eps) / denom,
                         c2=1.0 / denom, c3=(math.exp(eps) - 1) / denom).items():
            object.__setattr__(self, k, v)
        is_sensitive = np.zeros(d, dtype=bool)
        is_sensitive[list(s)] = True
        object.__setattr__(self, "_is_sensitive", is_sensitive)
        keep = np.where(is_sensitive, self.c1 - self.c2, self.c3)
        self._set_mixture(keep, [s], np.zeros(d, dtype=np.int64))  # every fallback is uniform over X_S

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        self._check_aggregate(agg)
        sel = self._items(items)
        c = agg.data[sel]
        return np.where(self._is_sensitive[sel], (c - agg.n * self.c2) / (self.c1 - self.c2),  # SPEC §1.3
                        c / self.c3)

    def estimator_matrix(self) -> np.ndarray:
        sens = self._is_sensitive
        A = np.diag(np.where(sens, 1.0 / (self.c1 - self.c2), 1.0 / self.c3))
        A[sens] -= self.c2 / (self.c1 - self.c2)  # n = Σ_y c_y
        return A

    def _count_variance(self, f: np.ndarray) -> np.ndarray:
        """Each estimate uses one output count: Var(c_y)/slope², Var(c_y) = Σ_x f_x P[y|x](1 − P[y|x])."""
        c1, c2, c3 = self.c1, self.c2, self.c3
        sensitive = (f * c1 * (1 - c1) + (f.sum() - f) * c2 * (1 - c2)) / (c1 - c2) ** 2
        return np.where(self._is_sensitive, sensitive, f * (1 - c3) / c3)
