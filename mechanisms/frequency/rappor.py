"""RAPPOR: Bloom filter, permanent and instantaneous randomized response (Google Chrome) — docs/math.md §7.2.

Erlingsson, Pihur, Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal Response",
CCS 2014. A value is hashed into a Bloom filter B of k = ``num_bits`` bits with h = ``num_hashes``
hash functions of the user's cohort (``cohorts`` independent hash sets). Permanent randomized
response (memoized per device and value): B′_i = 1 w.p. f/2, 0 w.p. f/2, B_i w.p. 1 − f.
Instantaneous randomized response (fresh every report): S_i = 1 w.p. q if B′_i = 1, w.p. p if B′_i = 0.

Privacy (stated and checked from these probabilities, tests/mechanisms/test_rappor.py):

* ε_∞ = 2h·ln((1 − f/2)/(f/2)) bounds everything an observer learns from all reports of one value
  (the permanent response); ``epsilon`` *is* ε_∞ and f is derived from it: f = 2/(1 + e^{ε_∞/(2h)}).
* one report: with q* = P(S_i=1 | B_i=1) = ½f(p+q) + (1−f)q and p* = P(S_i=1 | B_i=0) =
  ½f(p+q) + (1−f)p, ε₁ = h·ln(q*(1−p*)/(p*(1−q*))) (:attr:`RAPPOR.epsilon_report`). Both bounds are
  reached exactly for two values whose Bloom bits in some cohort are 2h distinct bits.

Server (per cohort c and bit i, N_c reports of the cohort, c_ci ones):
t_ci = (c_ci − p*·N_c)/(q* − p*) estimates the number of cohort-c users whose Bloom bit i is set.
:meth:`RAPPOR.estimate` regresses t on the candidates' Bloom bits by least squares (count = C·β, a
linear estimator with the exact bias and variance below); :func:`ldpsim.mechanisms.frequency.rappor_decode.decode`
is the paper's full decoding (LASSO selection, least squares, standard errors, Bonferroni cut-off).

Exact theory of ĉ = C·A·t (A = pinv(X), X the (C·k) × K design of the candidates, cohorts uniform
per user, X_c / A_c the rows / columns of cohort c, M_c = A_c X_c):
E[ĉ] = A X f;  Var[ĉ_v] = Σ_w f_w (C Σ_c M_c[v,w]² − (Σ_c M_c[v,w])²)
+ C Σ_{c,i} A[v,ci]² Σ_w f_w (X_{ci,w} q*(1−q*) + (1 − X_{ci,w}) p*(1−p*))/(q* − p*)².
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.special import xlogy

from ldpsim.mechanisms._validation import as_generator, check_counts, check_epsilon, check_int, check_real
from ldpsim.mechanisms.base import Aggregate, FrequencyOracle
from ldpsim.mechanisms.bitsampling import WORD_BITS, bernoulli_words, packed_column_counts
from ldpsim.mechanisms.hashing import HashFamily, factorize
from ldpsim.mechanisms.memo import check_keys, keyed_uniforms, keyed_words

_TAG_COHORT, _TAG_PRR = 0x7A1, 0x7A2
_BATCH_WORDS = 1 << 17
MAX_ENUMERATED_BITS = 12


class RAPPORReports(NamedTuple):
    """Per user: the cohort (int64) and the k instantaneous bits packed (uint8 (n, ⌈k/8⌉), packbits order)."""

    cohort: np.ndarray
    bits: np.ndarray


@dataclass(frozen=True)
class RAPPOR(FrequencyOracle):
    """RAPPOR over arbitrary tokens (module docstring; docs/math.md §7.2). ``epsilon`` = ε_∞ of the
    permanent response.

    Parameters: epsilon > 0; num_bits k in [2, 4096]; num_hashes h in [1, k]; cohorts C in [1, 2^16];
    p, q instantaneous probabilities with 0 ≤ p < q ≤ 1; seed picks the hash family.

    Parameters
    ----------
    epsilon : float
        ε_∞ of the permanent response, in (0, inf); f = 2/(1 + e^{ε_∞/(2h)}).
    num_bits : int
        Bloom filter bits k, in [2, 4096] (default 128).
    num_hashes : int
        Hash functions per cohort h, in [1, k] (default 2).
    cohorts : int
        Number of cohorts C, in [1, 2^16] (default 64); each has its own hash functions.
    p, q : float
        Instantaneous response P(S_i = 1) for B′_i = 0 and 1, 0 ≤ p < q ≤ 1 (default 0.5, 0.75).
    seed : int
        Seed of the hash family, in [0, 2^32 − 1].

    Examples
    --------
    >>> m = RAPPOR(epsilon=4 * math.log(3), num_bits=16, num_hashes=2, cohorts=4)
    >>> round(m.f, 6), round(m.epsilon_report, 4), m.report_bytes
    (0.5, 1.0743, 3)
    """

    epsilon: float
    has_permanent_response = True  # ``epsilon`` is ε_∞; one report costs ``epsilon_report``
    num_bits: int = 128
    num_hashes: int = 2
    cohorts: int = 64
    p: float = 0.5
    q: float = 0.75
    seed: int = 0
    f: float = field(init=False, repr=False)
    family: HashFamily = field(init=False, repr=False, compare=False)
    takes_tokens = True

    def __post_init__(self):
        eps = check_epsilon("RAPPOR", self.epsilon)
        k = check_int("RAPPOR", "num_bits", self.num_bits, low=2, high=4096)
        h = check_int("RAPPOR", "num_hashes", self.num_hashes, low=1, high=k)
        c = check_int("RAPPOR", "cohorts", self.cohorts, low=1, high=1 << 16)
        p = check_real("RAPPOR", "p", self.p, 0.0, 1.0, low_open=False)
        q = check_real("RAPPOR", "q", self.q, p, 1.0, high_open=False)
        seed = check_int("RAPPOR", "seed", self.seed, low=0, high=2 ** 32 - 1)
        for name, value in (("epsilon", eps), ("num_bits", k), ("num_hashes", h), ("cohorts", c),
                            ("p", p), ("q", q), ("seed", seed)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "f", 2.0 / (1.0 + math.exp(eps / (2 * h))))
        object.__setattr__(self, "family", HashFamily(c * h, k, seed))

    @classmethod
    def from_probabilities(cls, f: float, **params) -> "RAPPOR":
        """Build from the paper's f (0 < f < 1) instead of ε_∞ = 2h·ln((1 − f/2)/(f/2))."""
        f = check_real("RAPPOR", "f", f, 0.0, 1.0)
        h = params.get("num_hashes", 2)
        return cls(epsilon=2 * h * math.log((1 - f / 2) / (f / 2)), **params)

    # probabilities ---------------------------------------------------------------------------
    def bit_probabilities(self) -> tuple[float, float]:
        """(q*, p*): P(S_i = 1) for a set and for an unset Bloom bit, one report."""
        f, p, q = self.f, self.p, self.q
        return 0.5 * f * (p + q) + (1 - f) * q, 0.5 * f * (p + q) + (1 - f) * p

    @property
    def epsilon_report(self) -> float:
        """ε₁ = h·ln(q*(1−p*)/(p*(1−q*))): the privacy loss of one report."""
        qs, ps = self.bit_probabilities()
        return self.num_hashes * math.log(qs * (1 - ps) / (ps * (1 - qs)))

    @property
    def epsilon_permanent(self) -> float:
        """ε_∞ = 2h·ln((1 − f/2)/(f/2)) (equals ``epsilon``)."""
        return 2 * self.num_hashes * math.log((1 - self.f / 2) / (self.f / 2))

    def memoized_loss(self, reports: int) -> float:
        """Exact ε of ``reports`` reports of one value from one memoized permanent response.

        Given the permanent bit, a bit's r instantaneous responses are independent, so its likelihood
        depends only on the number j of ones: P(j | B) = (1 − f/2)·A_j + (f/2)·B_j for B = 1 and the
        mirror for B = 0, with A_j = q^j (1−q)^{r−j}, B_j = p^j (1−p)^{r−j}. Two values whose Bloom
        bits are 2h distinct bits give ε(r) = h·(max_j L_j − min_j L_j), L_j the log-ratio of the
        two: ε(1) = ε₁, ε(r) ≤ min(r·ε₁, ε_∞), → ε_∞ as r grows (docs/math.md §8.2).
        """
        r = int(reports)
        if r <= 0:
            return 0.0
        # in logs: q^j (1−q)^(r−j) underflows to 0 for r of a few hundred, which dropped the extreme
        # patterns j (the ones that set the loss) and raised on an empty list past r ≈ 2 000
        j = np.arange(r + 1)
        log_a = xlogy(j, self.q) + xlogy(r - j, 1 - self.q)
        log_b = xlogy(j, self.p) + xlogy(r - j, 1 - self.p)
        log_keep, log_flip = math.log1p(-self.f / 2), math.log(self.f / 2)
        with np.errstate(invalid="ignore"):  # −inf − (−inf): patterns impossible under both inputs
            ratio = np.logaddexp(log_keep + log_a, log_flip + log_b) - np.logaddexp(log_flip + log_a,
                                                                                    log_keep + log_b)
        ratio = ratio[np.isfinite(ratio)]
        return float(min(self.num_hashes * (ratio.max() - ratio.min()), self.epsilon_permanent))

    # hashing ---------------------------------------------------------------------------------
    def _token_keys(self, values) -> np.ndarray:
        uniq, inv = factorize(np.asarray(values) if isinstance(values, np.ndarray) else _objects(values))
        return self.family.keys(uniq)[inv]

    def bloom_positions(self, cohort: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The Bloom filter bits a value sets in its cohort (docs/math.md §7.2).

        Parameters
        ----------
        cohort : ndarray of int
            (n,) cohorts in [0, ``cohorts``).
        keys : ndarray of uint64
            (n,) keys of the values (the family's keys of their tokens).

        Returns
        -------
        ndarray
            (n, ``num_hashes``) bit positions in [0, ``num_bits``): hash l of cohort c is row c·h + l of
            the family.
        """
        rows = cohort[:, None] * self.num_hashes + np.arange(self.num_hashes)[None, :]
        return self.family.evaluate(rows, keys[:, None])

    def bloom_matrix(self, items) -> np.ndarray:
        """Design X, shape (C·k, K): X[c·k + i, v] = 1 iff bit i of item v's Bloom filter in cohort c."""
        keys = self._token_keys(items)
        X = np.zeros((self.cohorts, self.num_bits, keys.size))
        for c in range(self.cohorts):
            pos = self.bloom_positions(np.full(keys.size, c), keys)
            X[c, pos, np.arange(keys.size)[:, None]] = 1.0
        return X.reshape(self.cohorts * self.num_bits, keys.size)

    # client ----------------------------------------------------------------------------------
    @property
    def _n_bytes(self) -> int:
        return -(-self.num_bits // 8)

    def _instant_bits(self, pos: np.ndarray, rng) -> np.ndarray:
        """Packed one-report bits: all Bern(p*), then each Bloom bit redrawn Bern(q*)."""
        n, width, n_words = pos.shape[0], self._n_bytes, -(-self.num_bits // WORD_BITS)
        qs, ps = self.bit_probabilities()
        rows = np.ascontiguousarray(bernoulli_words(ps, n * n_words, rng).view(np.uint8)
                                    .reshape(n, 2 * n_words)[:, :width])
        rows[:, -1] &= np.uint8((0xFF << (8 * width - self.num_bits)) & 0xFF)
        user = np.arange(n)
        for l in range(self.num_hashes):
            byte, mask = pos[:, l] >> 3, (0x80 >> (pos[:, l] & 7)).astype(np.uint8)
            ones = rng.random(n) < qs
            rows[user, byte] = (rows[user, byte] & ~mask) | np.where(ones, mask, np.uint8(0))
        return rows

    def perturb(self, values, rng=None) -> RAPPORReports:
        """One report per user (fresh cohort and fresh permanent response: one-time RAPPOR, whose
        bits have exactly the law P(S_i=1) = q* or p*).

        Parameters
        ----------
        values : array_like, shape (n,)
            One value per user.
        rng : numpy.random.Generator, int or None
            Source of randomness.

        Returns
        -------
        reports
        """
        rng = as_generator(rng)
        keys = self._token_keys(values)
        cohort = rng.integers(0, self.cohorts, size=keys.size)
        return RAPPORReports(cohort, self._instant_bits(self.bloom_positions(cohort, keys), rng))

    def device_cohorts(self, keys) -> np.ndarray:
        """The cohort of each device: a deterministic function of its key."""
        return (keyed_words(np.asarray(keys, dtype=np.uint64), _TAG_COHORT) % np.uint64(self.cohorts)).astype(np.int64)

    def memo_class(self, values) -> np.ndarray:
        """The memo class of each report: the value itself (its 64-bit token key). All reports of one
        value share one permanent response, so a ledger charges ε_∞ once per distinct value.

        Parameters
        ----------
        values : array_like, shape (n,)
            Tokens.

        Returns
        -------
        numpy.ndarray of uint64, shape (n,)
        """
        return self._token_keys(values)

    def permanent_response(self, values, keys) -> np.ndarray:
        """B′ of each device, shape (n, k) uint8: a deterministic function of (device key, value)."""
        tok = self._token_keys(values)
        dev = check_keys(f"{self.name}.permanent_response", keys, tok.size)
        pos = self.bloom_positions(self.device_cohorts(dev), tok)
        bloom = np.zeros((tok.size, self.num_bits), dtype=bool)
        bloom[np.arange(tok.size)[:, None], pos] = True
        u = keyed_uniforms(dev[:, None], _TAG_PRR, tok[:, None], np.arange(self.num_bits)[None, :])
        return np.where(u < self.f / 2, 1, np.where(u < self.f, 0, bloom)).astype(np.uint8)

    def perturb_memoized(self, values, keys, rng=None) -> RAPPORReports:
        """Reports from the memoized permanent response and a fresh instantaneous response."""
        rng = as_generator(rng)
        prr = self.permanent_response(values, keys)
        s = rng.random(prr.shape) < np.where(prr == 1, self.q, self.p)
        return RAPPORReports(self.device_cohorts(keys), np.packbits(s, axis=1))

    # server ----------------------------------------------------------------------------------
    def check_reports(self, reports) -> RAPPORReports:
        """Reports as the server reads them, checked (docs/math.md §7.2).

        Parameters
        ----------
        reports : RAPPORReports
            (cohort, bits) as :meth:`perturb` returns them.

        Returns
        -------
        RAPPORReports
            The cohorts (n,) and the packed bits (n, ⌈k/8⌉) uint8 as arrays.

        Raises
        ------
        TypeError, ValueError
            For anything but a (cohort, bits) pair of this mechanism's shapes, cohorts and padding.
        """
        return self._check_reports(reports, "check_reports")

    def _check_reports(self, reports, what: str) -> RAPPORReports:
        if not (isinstance(reports, tuple) and len(reports) == 2):
            raise TypeError(f"{self.name}.{what}: reports must be RAPPORReports(cohort, bits); "
                            f"got {type(reports).__name__}.")
        cohort, bits = (np.asarray(r) for r in reports)
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != self._n_bytes or cohort.shape != bits.shape[:1]:
            raise ValueError(f"{self.name}.{what}: bits must be uint8 (n, {self._n_bytes}) and cohort (n,); "
                             f"got {bits.dtype} {bits.shape} and {cohort.shape}.")
        if cohort.size and (not np.issubdtype(cohort.dtype, np.integer) or cohort.min() < 0
                            or cohort.max() >= self.cohorts):
            raise ValueError(f"{self.name}.{what}: cohorts must be integers in [0, {self.cohorts}).")
        pad = np.uint8(~((0xFF << (8 * self._n_bytes - self.num_bits)) & 0xFF) & 0xFF)
        if bits.size and np.any(bits[:, -1] & pad):
            raise ValueError(f"{self.name}.{what}: padding bits set beyond bit {self.num_bits - 1}.")
        return RAPPORReports(cohort.astype(np.int64), bits)

    def aggregate(self, reports) -> Aggregate:
        """data (C, k + 1): ones per cohort and bit, then the cohort's number of reports N_c.

        Parameters
        ----------
        reports
            As returned by :meth:`perturb` or :meth:`decode` (validated).

        Returns
        -------
        Aggregate
        """
        cohort, bits = self._check_reports(reports, "aggregate")
        data = np.zeros((self.cohorts, self.num_bits + 1), dtype=np.int64)
        order = np.argsort(cohort, kind="stable")
        present, starts = np.unique(cohort[order], return_index=True)
        for c, rows in zip(present.tolist(), np.split(order, starts[1:])):
            data[c, :-1] = packed_column_counts(bits[rows], self.num_bits)
            data[c, -1] = rows.size
        return Aggregate(int(cohort.size), data, self.kind)

    def bit_estimates(self, agg: Aggregate) -> np.ndarray:
        """t_ci = (c_ci − p*·N_c)/(q* − p*), flattened cohort-major (length C·k)."""
        self._check_aggregate(agg)
        qs, ps = self.bit_probabilities()
        return ((agg.data[:, :-1] - ps * agg.data[:, -1:]) / (qs - ps)).ravel()

    def design(self, items) -> tuple[np.ndarray, np.ndarray]:
        """(X, pinv(X)): the candidates' Bloom-bit design matrix and its pseudo-inverse, which maps the
        debiased bit counts to :meth:`estimate` (cached per candidate tuple: sweeps query the same list)."""
        items = _required(items)
        return _design(self, tuple(items.tolist() if isinstance(items, np.ndarray) else items))

    def estimate(self, agg: Aggregate, items=None) -> np.ndarray:
        """Least-squares counts of the candidates ``items``: C·pinv(X)·t. If X is rank-deficient (fewer
        than K regression rows C·k, or candidates with identical Bloom bits) this is the minimum-norm
        solution, and :meth:`bias` gives its exact bias (A X − I) f.

        Parameters
        ----------
        agg : Aggregate
            Made by this configuration.
        items : array_like, optional
            Items to estimate.

        Returns
        -------
        numpy.ndarray of float, shape (len(items),)
        """
        X, A = self.design(items)
        return self.cohorts * (A @ self.bit_estimates(agg))

    # theory ----------------------------------------------------------------------------------
    def bias(self, true_counts, items=None) -> np.ndarray:
        X, A = self.design(items)
        f = check_counts(self.name, true_counts, X.shape[1]).astype(float)
        return (A @ X) @ f - f

    def variance(self, true_counts, items=None) -> np.ndarray:
        X, A = self.design(items)
        f = check_counts(self.name, true_counts, X.shape[1]).astype(float)
        C, k = self.cohorts, self.num_bits
        M = np.einsum("vci,ciw->cvw", A.reshape(-1, C, k), X.reshape(C, k, -1))
        cohort_part = (C * (M ** 2).sum(axis=0) - M.sum(axis=0) ** 2) @ f
        qs, ps = self.bit_probabilities()
        row_var = X @ f * qs * (1 - qs) + (f.sum() - X @ f) * ps * (1 - ps)
        return cohort_part + C * (A ** 2) @ row_var / (qs - ps) ** 2

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        """Exact: cohorts f_{w,c} ~ Multinomial(f_w, 1/C); then per (c, i), with n1 = Σ_w f_{w,c}X_{ci,w},
        c_ci = Bin(n1, q*) + Bin(N_c − n1, p*), independent (bits of a report are independent given B).

        Parameters
        ----------
        true_counts : array_like of non-negative ints
            Users holding each item (aligned with ``items``).
        rng : numpy.random.Generator, int or None
            Source of randomness.
        items : array_like, optional
            The items (tokens for RAPPOR).

        Returns
        -------
        Aggregate
        """
        X, _ = self.design(items)
        f = check_counts(self.name, true_counts, X.shape[1])
        rng = as_generator(rng)
        C, k = self.cohorts, self.num_bits
        split = rng.multinomial(f, np.full(C, 1.0 / C))                      # (K, C)
        n1 = np.einsum("ciw,wc->ci", X.reshape(C, k, -1), split).round().astype(np.int64)
        N = split.sum(axis=0)
        qs, ps = self.bit_probabilities()
        ones = rng.binomial(n1, qs) + rng.binomial(N[:, None] - n1, ps)
        return Aggregate(int(f.sum()), np.concatenate([ones, N[:, None]], axis=1), self.kind)

    def all_reports(self) -> RAPPORReports:
        """Every report, cohort-major: report c·2^k + r has cohort c and bit i = bit i of r (small k)."""
        k = self.num_bits
        if k > MAX_ENUMERATED_BITS:
            raise ValueError(f"{self.name}.all_reports: 2^{k} reports are too many (k ≤ {MAX_ENUMERATED_BITS}).")
        r = ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(np.uint8)
        return RAPPORReports(np.repeat(np.arange(self.cohorts), 1 << k),
                             np.tile(np.packbits(r, axis=1), (self.cohorts, 1)))

    def report_distribution(self, items=None) -> np.ndarray:
        """``P[v, c·2^k + r]`` = P[cohort c, bits r | item v] = (1/C)·Π_i P(S_i = r_i | B_c(v)_i),
        bits r_i = bit i of the integer r (small k only)."""
        k = self.num_bits
        if k > MAX_ENUMERATED_BITS:
            raise ValueError(f"{self.name}.report_distribution: 2^{k} reports are too many "
                             f"(k ≤ {MAX_ENUMERATED_BITS}).")
        X = self.bloom_matrix(_required(items)).reshape(self.cohorts, k, -1)
        r = ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(bool)  # (2^k, k)
        qs, ps = self.bit_probabilities()
        p1 = np.where(X.transpose(2, 0, 1)[:, :, None, :] == 1, qs, ps)       # (K, C, 1, k)
        return (np.where(r[None, None], p1, 1 - p1).prod(axis=3) / self.cohorts).reshape(X.shape[2], -1)

    def decode_candidates(self, agg: Aggregate, candidates, alpha: float = 0.05, lasso_penalty=None):
        """The paper's decoding (LASSO, least squares, standard errors, Bonferroni):
        :func:`ldpsim.mechanisms.frequency.rappor_decode.decode`."""
        from ldpsim.mechanisms.frequency.rappor_decode import decode
        return decode(self, agg, candidates, alpha, lasso_penalty)

    # wire form -------------------------------------------------------------------------------
    @property
    def _cohort_bytes(self) -> int:
        return 1 if self.cohorts <= 256 else 2

    @property
    def report_bytes(self) -> int:
        """Cohort (1 byte, 2 beyond 256 cohorts, little-endian) then the ⌈k/8⌉ packed bits."""
        return self._cohort_bytes + self._n_bytes

    def encode(self, reports) -> bytes:
        cohort, bits = self._check_reports(reports, "encode")
        head = cohort.astype("<u2").view(np.uint8).reshape(-1, 2)[:, :self._cohort_bytes]
        return np.concatenate([head, bits], axis=1).tobytes()

    def decode(self, payload: bytes) -> RAPPORReports:
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        head = np.zeros((n, 2), dtype=np.uint8)
        head[:, :self._cohort_bytes] = raw[:, :self._cohort_bytes]
        cohort = head.view("<u2").ravel().astype(np.int64)
        return self._check_reports(RAPPORReports(cohort, raw[:, self._cohort_bytes:].copy()), "decode")


@functools.lru_cache(maxsize=32)
def _design(mech: RAPPOR, items: tuple) -> tuple[np.ndarray, np.ndarray]:
    X = mech.bloom_matrix(items)
    A = np.linalg.pinv(X)
    for a in (X, A):
        a.setflags(write=False)
    return X, A


def _objects(values) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def _required(items):
    if items is None:
        raise ValueError("RAPPOR: 'items' (the candidate strings) is required.")
    if np.ndim(np.asarray(items, dtype=object)) != 1:
        raise ValueError(f"RAPPOR: 'items' must be a 1-D sequence of candidate tokens; got {items!r}.")
    return items
