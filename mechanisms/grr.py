"""Generalized randomized response (k-ary RR, direct encoding) — SPEC §1.2."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._validation import as_generator, check_counts, check_epsilon, check_int, check_item_ids
from .base import Aggregate, DiscreteOracle, decode_uints, encode_uints, uint_bytes


@dataclass(frozen=True)
class GRR(DiscreteOracle):
    """Generalized randomized response over item ids ``0 .. domain_size-1``.

    Privacy: ε-LDP; the largest likelihood ratio P[y|x]/P[y|x'] is exactly p/q = e^ε.

    Client (SPEC §1.2): report x w.p. p = e^ε/(e^ε+D−1), each other value w.p. q = 1/(e^ε+D−1);
    sampled as the equivalent mixture "w.p. p−q report x, else a uniform draw from all D values".
    Server: output counts c; unbiased count estimate (c_x − n·q)/(p − q).
    Exact variance of the count estimate for a fixed population with true counts f_x:
    n·q(1−q)/(p−q)² + f_x(1−p−q)/(p−q)   (SPEC §1.2 times n²).

    >>> m = GRR(epsilon=1.0, domain_size=4)
    >>> round(m.p, 4), round(m.q, 4)
    (0.4754, 0.1749)
    """

    epsilon: float
    domain_size: int
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon("GRR", self.epsilon)
        d = check_int("GRR", "domain_size", self.domain_size, low=2)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "domain_size", d)
        denom = math.exp(eps) + d - 1
        object.__setattr__(self, "p", math.exp(eps) / denom)
        object.__setattr__(self, "q", 1.0 / denom)

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> np.ndarray:
        x = check_item_ids(self.name, values, self.domain_size)
        rng = as_generator(rng)
        keep = rng.random(x.size) < (self.p - self.q)
        return np.where(keep, x, rng.integers(0, self.domain_size, size=x.size))

    # server ------------------------------------------------------------------------------------
    def aggregate(self, reports) -> Aggregate:
        y = check_item_ids(f"{self.name}.aggregate", reports, self.domain_size, "reports")
        return Aggregate(y.size, np.bincount(y, minlength=self.domain_size), self.kind)

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        self._check_aggregate(agg)
        c = agg.data[self._items(items)]
        return (c - agg.n * self.q) / (self.p - self.q)  # SPEC §1.2, count scale

    # theory ------------------------------------------------------------------------------------
    def variance(self, true_counts, items=None) -> np.ndarray:
        f = check_counts(self.name, true_counts, self.domain_size)
        n, p, q = f.sum(), self.p, self.q
        sel = self._items(items)
        return n * q * (1 - q) / (p - q) ** 2 + f[sel] * (1 - p - q) / (p - q)  # SPEC §1.2 × n²

    def transition_matrix(self) -> np.ndarray:
        d = self.domain_size
        return np.full((d, d), self.q) + np.eye(d) * (self.p - self.q)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact: kept reports Binomial(f_x, p−q) per item, the rest Multinomial(·, uniform over D)."""
        f = check_counts(self.name, true_counts, self.domain_size)
        rng = as_generator(rng)
        kept = rng.binomial(f, self.p - self.q)
        rest = rng.multinomial(f.sum() - kept.sum(), np.full(self.domain_size, 1.0 / self.domain_size))
        return Aggregate(int(f.sum()), kept + rest, self.kind)

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
