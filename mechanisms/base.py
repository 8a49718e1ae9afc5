"""The common interface of every frequency oracle, and the server's mergeable aggregate.

Conventions used by every mechanism in this package:

* ``perturb(values, rng)`` runs the client side for an array of users (one value each) and returns
  the reports (an array, or a small NamedTuple of arrays for multi-part reports).
* ``aggregate(reports)`` returns an :class:`Aggregate`; aggregates of the same mechanism add, so
  days, shards and servers merge with ``+``.
* ``estimate(agg, items)`` returns unbiased (or, for sketches with a fixed hash family, docs/math.md §1.5
  biased) **count** estimates for ``items``; divide by ``agg.n`` for frequencies.
* ``bias``/``variance``/``mse`` give the theory of those count estimates for true counts
  ``true_counts`` aligned with ``items``.
* ``sample_aggregate(true_counts, rng, items)`` draws the aggregate directly from its exact
  distribution given the true counts (no per-user reports).
* ``transition_matrix()`` (finite output spaces only) has rows = inputs, columns = outputs:
  ``P[x, y] = P[y | x]``; each row sums to one.
* ``items`` defaults to ``range(domain_size)`` for oracles on integer ids; sketches (CMS, HCMS)
  take arbitrary hashable tokens and need ``items``.
* ``guarantee`` states what the mechanism promises, as a :class:`Guarantee`: its kind, ε of one
  report and, where the mechanism memoizes, ε of the permanent response (docs/math.md §8.1).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldpsim.mechanisms._validation import check_item_ids
from ldpsim.mechanisms.memo import KEYED_CHUNK, check_keys, key_streams


@dataclass(frozen=True, eq=False)
class Aggregate:
    """Server-side sufficient statistic of ``n`` reports: merges by addition.

    Aggregates of the same mechanism configuration add (``a + b``, ``sum([...])``), so days, shards
    and servers merge exactly; aggregates of different configurations refuse to (``ValueError``).

    Parameters
    ----------
    n : int
        Number of reports summarized (≥ 0).
    data : numpy.ndarray
        The mechanism's accumulator: output counts (GRR, URR, SDGRR, OUE, OLH), the k × (m+1) row counts
        (CMS), the (2, k, m) cell counts (HCMS), a report sum (PM) or an output histogram (EM).
    kind : str
        The configuration that produced it (``mechanism.kind``, the mechanism's repr).

    Examples
    --------
    >>> a = Aggregate(2, np.array([1, 1]), "GRR(epsilon=1.0, domain_size=2)")
    >>> b = Aggregate(3, np.array([0, 3]), "GRR(epsilon=1.0, domain_size=2)")
    >>> total = sum([a, b])
    >>> total.n, total.data.tolist()
    (5, [1, 4])
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
    """Raise ``ValueError`` unless ``agg`` is an :class:`Aggregate` made by the configuration ``kind``.

    Parameters
    ----------
    owner : str
        Name used in the error message (the mechanism or estimator).
    kind : str
        The configuration the aggregate must come from.
    agg : Aggregate
        The aggregate to check.
    """
    if not isinstance(agg, Aggregate) or agg.kind != kind:
        got = agg.kind if isinstance(agg, Aggregate) else type(agg).__name__
        raise ValueError(f"{owner}: aggregate was made by {got}, not by {kind}.")


#: guarantee kind → how it is written; only guarantees of one kind share an axis or a sum
GUARANTEE_KINDS = {"ldp": "ε-LDP", "sdldp": "ε-SDLDP", "uldp": "ε-ULDP", "central": "(ε, δ)-DP, central"}


@dataclass(frozen=True)
class Guarantee:
    """What a mechanism promises, in the project's one vocabulary of ε (docs/math.md §8.1).

    Parameters
    ----------
    kind : {"ldp", "sdldp", "uldp", "central"}
        ε-LDP (every pair of inputs), ε-SDLDP (sensitivity-discriminant: only the pairs of §1.4's
        conditions), ε-ULDP (utility-optimized: sensitive outputs only, §1.3) or (ε, δ)-DP of a
        trusted server's release (§6).
    epsilon_report : float
        ε of one report: the largest log-ratio of one report's probabilities over the pairs of inputs
        the kind protects (for ``central``, ε of the release).
    epsilon_permanent : float, optional
        ε_∞ of the permanent (memoized) response: a bound on what *all* reports of one value reveal
        together; None when the mechanism does not memoize by itself.
    delta : float, default 0
        δ of a central (ε, δ) guarantee; 0 for the local kinds.

    Examples
    --------
    >>> g = Guarantee("ldp", 1.07, epsilon_permanent=4.0)
    >>> g.label, g.memoized(2.0).epsilon_permanent
    ('ε-LDP', 4.0)
    """

    kind: str
    epsilon_report: float
    epsilon_permanent: float | None = None
    delta: float = 0.0

    def __post_init__(self):
        if self.kind not in GUARANTEE_KINDS:
            raise ValueError(f"The 'kind' parameter of Guarantee must be one of {tuple(GUARANTEE_KINDS)}. "
                             f"Got {self.kind!r} instead.")
        for name in ("epsilon_report", "epsilon_permanent"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, float(value))

    @property
    def label(self) -> str:
        """The kind as written on axes and in tables (``"ε-LDP"``, ``"ε-SDLDP"``, …)."""
        return GUARANTEE_KINDS[self.kind]

    def memoized(self, epsilon: float) -> "Guarantee":
        """The guarantee when the device memoizes the report of each value: ε_∞ is the mechanism's own
        permanent ε, or ``epsilon`` (the mechanism's parameter) for a mechanism without one (a
        memoized report is the same report re-sent: docs/math.md §8.2)."""
        permanent = self.epsilon_permanent if self.epsilon_permanent is not None else float(epsilon)
        return Guarantee(self.kind, self.epsilon_report, permanent, self.delta)


class Mechanism(ABC):
    """What every mechanism has: a name, a configuration tag for its aggregates, its privacy
    guarantee, and the checks of payloads and aggregates handed to its server side."""

    epsilon: float
    #: the kind of guarantee ``epsilon`` is (a key of :data:`GUARANTEE_KINDS`)
    privacy_kind: ClassVar[str] = "ldp"
    #: True when ``epsilon`` is ε_∞ of a permanent response the device memoizes
    #: (``perturb_memoized``: RAPPOR, dBitFlip, 1BitMean); one report then costs ``epsilon_report``
    has_permanent_response: ClassVar[bool] = False

    @property
    def guarantee(self) -> Guarantee:
        """The mechanism's :class:`Guarantee`: ε of one report (``epsilon_report`` where the mechanism
        states a smaller one than its parameter), ε_∞ where it memoizes (docs/math.md §8.1)."""
        return Guarantee(self.privacy_kind, getattr(self, "epsilon_report", self.epsilon),
                         self.epsilon if self.has_permanent_response else None)

    def memoized_loss(self, reports: int) -> float:
        """ε of ``reports`` reports of one value by a device that memoizes it (docs/math.md §8.2).

        A memoized report is re-sent unchanged, so any number of them reveal what one does (ε of one
        report). A mechanism with a permanent response may add fresh noise to every report (RAPPOR's
        instantaneous response, dBitFlip's and 1BitMean's γ flips): two reports or more are then
        bounded by ε_∞; RAPPOR overrides this with its exact loss.

        Parameters
        ----------
        reports : int
            Reports of the value (≥ 0).

        Returns
        -------
        float
        """
        if reports <= 0:
            return 0.0
        g = self.guarantee
        return g.epsilon_report if reports == 1 or not self.has_permanent_response else g.epsilon_permanent

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
    """Abstract frequency oracle: client perturbation, server estimation and their theory.

    Subclasses are frozen dataclasses whose fields are the parameters (always ``epsilon``, the privacy
    budget in (0, inf)); see the module docstring for the conventions shared by every oracle. Count
    estimates are on the count scale (divide by ``agg.n`` for frequencies). Math: docs/math.md §1, §7.1.
    """

    #: True for sketches that accept arbitrary hashable tokens (str, int) as items; False for oracles
    #: on integer ids 0..D-1 (the population engine passes ids to those).
    takes_tokens: ClassVar[bool] = False

    # ---- client side -------------------------------------------------------------------------
    @abstractmethod
    def perturb(self, values, rng=None):
        """Client side: privatize one value per user.

        Parameters
        ----------
        values : array_like, shape (n,)
            One value per user: item ids in [0, domain_size) for oracles on ids, arbitrary str/bytes/int
            tokens for sketches (CMS, HCMS).
        rng : numpy.random.Generator, int or None
            Source of randomness (an int seeds a new Generator; None draws fresh entropy).

        Returns
        -------
        reports
            The n reports: an array, or a NamedTuple of arrays for multi-part reports.
        """

    # ---- server side -------------------------------------------------------------------------
    @abstractmethod
    def aggregate(self, reports) -> Aggregate:
        """Server side: the sufficient statistic of a batch of reports.

        Parameters
        ----------
        reports
            Reports as returned by :meth:`perturb` or :meth:`decode`; validated (``ValueError``).

        Returns
        -------
        Aggregate
            ``n`` = number of reports; mergeable by addition with aggregates of the same configuration.
        """

    def perturb_aggregate(self, values, rng=None) -> Aggregate:
        """Client side then server side in one call; mechanisms override it to bound memory (OUE)."""
        return self.aggregate(self.perturb(values, rng))

    @abstractmethod
    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Estimated counts of ``items`` from an aggregate.

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration (``ValueError`` otherwise).
        items : array_like, optional
            The items to estimate: ids (default all ids 0 … D−1) or tokens (required by sketches).

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
            Count estimates (unbiased, except sketches with a fixed hash family: see :meth:`bias`);
            they may be negative or exceed ``agg.n``.
        """

    def estimate_frequencies(self, agg: Aggregate, items=None) -> np.ndarray:
        """Estimated frequencies: :meth:`estimate` divided by ``agg.n`` (same parameters)."""
        return self.estimate(agg, items) / max(agg.n, 1)

    # ---- theory ------------------------------------------------------------------------------
    def bias(self, true_counts, items=None) -> np.ndarray:
        """E[estimate] − truth per item, over the users' randomness (zero for unbiased oracles).

        Parameters are those of :meth:`variance`; returns an array aligned with ``items`` (all ids when
        ``items`` is None; sketches: aligned with ``true_counts``), like :meth:`variance`.
        """
        if items is None or self.takes_tokens:
            return np.zeros(np.shape(true_counts), dtype=float)
        return np.zeros(np.shape(np.atleast_1d(items)), dtype=float)

    @abstractmethod
    def variance(self, true_counts, items=None) -> np.ndarray:
        """Exact variance of each count estimate for a fixed population (docs/math.md §1.4).

        Parameters
        ----------
        true_counts : array_like of non-negative numbers
            True number of users holding each item: all D ids for oracles on ids (the variance of one
            item depends on n = Σ true_counts), or the counts of ``items`` for sketches.
        items : array_like, optional
            Items whose variance is returned (default: all ids; required by sketches, aligned with
            ``true_counts``).

        Returns
        -------
        numpy.ndarray of float
            Variance of each count estimate (count scale; divide by n² for frequencies).
        """

    def mse(self, true_counts, items=None) -> np.ndarray:
        """Mean squared error of each count estimate: variance + bias² (parameters of :meth:`variance`)."""
        return self.variance(true_counts, items) + self.bias(true_counts, items) ** 2

    # ---- direct sampler ----------------------------------------------------------------------
    @abstractmethod
    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Direct sampler: draw the aggregate of ``sum(true_counts)`` users from its exact law.

        Same distribution as ``aggregate(perturb(values))`` for a population with these counts, without
        per-user reports (see each mechanism for the law used).

        Parameters
        ----------
        true_counts : array_like of non-negative ints
            Users per item (all D ids, or aligned with ``items`` for sketches).
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : array_like, optional
            Tokens of the counts (sketches only).

        Returns
        -------
        Aggregate
        """

    # ---- wire form ---------------------------------------------------------------------------
    @abstractmethod
    def encode(self, reports) -> bytes:
        """Compact wire form of a batch of reports (``report_bytes`` each, concatenated).

        Parameters
        ----------
        reports
            As returned by :meth:`perturb`.

        Returns
        -------
        bytes
            ``n · report_bytes`` bytes.
        """

    @abstractmethod
    def decode(self, payload: bytes):
        """Inverse of :meth:`encode`.

        Parameters
        ----------
        payload : bytes
            A whole number of ``report_bytes``-byte reports.

        Returns
        -------
        reports
            The reports, in the form :meth:`perturb` returns.

        Raises
        ------
        TypeError
            If ``payload`` is not bytes-like.
        ValueError
            On a malformed payload (partial report, out-of-range field).
        """


class DiscreteOracle(FrequencyOracle):
    """A frequency oracle on integer item ids [0, D) with a finite output space (RR, GRR, URR, SDGRR).

    Its law is the transition matrix P (docs/math.md §1.4, §3), from which the privacy conditions and the
    Bayesian adversary's accuracy follow.
    """

    domain_size: int

    @abstractmethod
    def transition_matrix(self) -> np.ndarray:
        """The mechanism's law as a matrix.

        Returns
        -------
        numpy.ndarray, shape (D, D)
            ``P[x, y] = P[y | x]``: rows are inputs, columns outputs; every row sums to one.
        """

    def perturb_keyed(self, values, keys) -> np.ndarray:
        """Memoized client: report i a deterministic function of ``keys[i]`` with the law of :meth:`perturb`.

        The output is the inverse CDF of row x of :meth:`transition_matrix` at the first uniform of the
        key's stream (docs/math.md §7.5, "Memoization in the ledger"; the keyed hash of §7.2–7.3), so
        P[y | x] is the matrix's; one key gives the same report every time.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            One item id in [0, D) per report.
        keys : array_like of uint64, shape (n,)
            One key per report (a memo: one per device and value).

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            The reported outputs, as :meth:`perturb` returns them.
        """
        x = check_item_ids(self.name, values, self.domain_size)
        keys = check_keys(f"{self.name}.perturb_keyed", keys, x.size)
        cum = np.cumsum(self.transition_matrix(), axis=1)
        u = key_streams(keys, 1)[:, 0]
        out = np.empty(x.size, np.int64)
        step = max(1, KEYED_CHUNK // cum.shape[1])
        for s in range(0, x.size, step):
            out[s:s + step] = (cum[x[s:s + step]] <= u[s:s + step, None]).sum(axis=1)
        return np.minimum(out, cum.shape[1] - 1)

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
