"""The common interface of every frequency oracle, and the server's mergeable aggregate.

Conventions used by every mechanism in this package:

* ``perturb(values, rng)`` runs the client side for an array of users (one value each) and returns
  the reports (an array, or a small NamedTuple of arrays for multi-part reports).
* ``aggregate(reports)`` returns an :class:`Aggregate`; aggregates of the same mechanism add, so
  days, shards and servers merge with ``+``.
* ``estimate(agg, items)`` returns unbiased (or, for sketches with a fixed hash family, SPEC §1.5
  biased) **count** estimates for ``items``; divide by ``agg.n`` for frequencies.
* ``bias``/``variance``/``mse`` give the theory of those count estimates for true counts
  ``true_counts`` aligned with ``items``.
* ``sample_aggregate(true_counts, rng, items)`` draws the aggregate directly from its exact
  distribution given the true counts (no per-user reports).
* ``transition_matrix()`` (finite output spaces only) has rows = inputs, columns = outputs:
  ``P[x, y] = P[y | x]``; each row sums to one.
* ``items`` defaults to ``range(domain_size)`` for oracles on integer ids; sketches (CMS, HCMS)
  take arbitrary hashable tokens and need ``items``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldpsim.mechanisms._validation import check_item_ids


@dataclass(frozen=True, eq=False)
class Aggregate:
    """Server-side sufficient statistic of ``n`` reports: merges by addition.

    ``data`` is the mechanism's accumulator (output counts for GRR, the k×m sketch for CMS, ...).
    ``kind`` names the mechanism configuration that produced it, so unrelated aggregates refuse to merge.
    """

    n: int
    data: np.ndarray
    kind: str

    def __add__(self, other: "Aggregate") -> "Aggregate":
        if not isinstance(other, Aggregate):
            return NotImplemented
        if other.kind != self.kind or other.data.shape != self.data.shape:
            raise ValueError(f"Cannot merge aggregates of {self.kind} {self.data.shape} "
                             f"and {other.kind} {other.data.shape}.")
        return Aggregate(self.n + other.n, self.data + other.data, self.kind)

    def __radd__(self, other):
        # lets sum(list_of_aggregates) work
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented


def check_aggregate(owner: str, kind: str, agg) -> None:
    """Raise unless ``agg`` is an :class:`Aggregate` made by the configuration ``kind``."""
    if not isinstance(agg, Aggregate) or agg.kind != kind:
        got = agg.kind if isinstance(agg, Aggregate) else type(agg).__name__
        raise ValueError(f"{owner}: aggregate was made by {got}, not by {kind}.")


class Mechanism(ABC):
    """What every mechanism has: a name, a configuration tag for its aggregates, and the checks of
    payloads and aggregates handed to its server side."""

    epsilon: float

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def kind(self) -> str:
        """A string identifying the configuration (used to refuse merging unrelated aggregates)."""
        return repr(self)

    @property
    @abstractmethod
    def report_bytes(self) -> int:
        """Size of one encoded report, in bytes."""

    def _check_payload(self, payload: bytes) -> int:
        """Number of reports in ``payload``; raise if its length is not a multiple of report_bytes."""
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise TypeError(f"{self.name}.decode: payload must be bytes; got {type(payload).__name__}.")
        size = len(payload)
        if size % self.report_bytes:
            raise ValueError(f"{self.name}.decode: payload of {size} bytes is not a whole number of "
                             f"{self.report_bytes}-byte reports.")
        return size // self.report_bytes

    def _check_aggregate(self, agg: Aggregate) -> None:
        check_aggregate(self.name, self.kind, agg)


class FrequencyOracle(Mechanism):
    """Abstract frequency oracle (client perturbation + server estimation + theory)."""

    #: True for sketches that accept arbitrary hashable tokens (str, int) as items; False for oracles
    #: on integer ids 0..D-1 (the population engine passes ids to those).
    takes_tokens: ClassVar[bool] = False

    # ---- client side -------------------------------------------------------------------------
    @abstractmethod
    def perturb(self, values, rng=None):
        """Privatize one value per user; returns the reports."""

    # ---- server side -------------------------------------------------------------------------
    @abstractmethod
    def aggregate(self, reports) -> Aggregate:
        """Sufficient statistic of a batch of reports."""

    def perturb_aggregate(self, values, rng=None) -> Aggregate:
        """Client side then server side in one call; mechanisms override it to bound memory (OUE)."""
        return self.aggregate(self.perturb(values, rng))

    @abstractmethod
    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Estimated counts of ``items`` from an aggregate."""

    def estimate_frequencies(self, agg: Aggregate, items=None) -> np.ndarray:
        """Estimated frequencies (counts / n)."""
        return self.estimate(agg, items) / max(agg.n, 1)

    # ---- theory ------------------------------------------------------------------------------
    def bias(self, true_counts, items=None) -> np.ndarray:
        """E[estimate] − truth, per item (zero for unbiased oracles)."""
        return np.zeros(np.shape(true_counts), dtype=float)

    @abstractmethod
    def variance(self, true_counts, items=None) -> np.ndarray:
        """Exact variance of each count estimate, given the true counts of ``items``."""

    def mse(self, true_counts, items=None) -> np.ndarray:
        """Mean squared error of each count estimate: variance + bias²."""
        return self.variance(true_counts, items) + self.bias(true_counts, items) ** 2

    # ---- direct sampler ----------------------------------------------------------------------
    @abstractmethod
    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Draw the aggregate of ``sum(true_counts)`` users from its exact distribution."""

    # ---- wire form ---------------------------------------------------------------------------
    @abstractmethod
    def encode(self, reports) -> bytes:
        """Compact wire form of a batch of reports (``report_bytes`` each, concatenated)."""

    @abstractmethod
    def decode(self, payload: bytes):
        """Inverse of :meth:`encode`; raises ``ValueError`` on a malformed payload."""


class DiscreteOracle(FrequencyOracle):
    """A frequency oracle on integer item ids [0, D) with a finite output space (RR, GRR, URR, SDGRR)."""

    domain_size: int

    @abstractmethod
    def transition_matrix(self) -> np.ndarray:
        """``P[x, y] = P[y | x]``: rows are inputs, columns outputs, rows sum to one."""

    def _items(self, items) -> np.ndarray:
        """The queried item ids: all ids 0..D−1 when None, else validated ids in [0, D) (negative ids,
        ids >= D, floats and strings are refused with a message naming ``items``)."""
        if items is None:
            return np.arange(self.domain_size)
        return check_item_ids(self.name, items, self.domain_size, "items")


def uint_bytes(n_values: int) -> int:
    """Bytes needed to encode an integer in [0, n_values) (at least one)."""
    return max(1, (max(n_values - 1, 1).bit_length() + 7) // 8)


def encode_uints(values: np.ndarray, width: int) -> bytes:
    """Little-endian fixed-``width`` encoding of non-negative integers."""
    v = np.asarray(values, dtype="<u8")
    return v.view(np.uint8).reshape(-1, 8)[:, :width].tobytes()


def decode_uints(payload: bytes, width: int) -> np.ndarray:
    """Inverse of :func:`encode_uints`."""
    raw = np.frombuffer(payload, dtype=np.uint8).reshape(-1, width)
    full = np.zeros((raw.shape[0], 8), dtype=np.uint8)
    full[:, :width] = raw
    return full.view("<u8").ravel().astype(np.int64)
