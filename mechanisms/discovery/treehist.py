"""TreeHist: heavy hitters by walking a prefix tree with one frequency oracle per level —
Bassily, Nissim, Stemmer, Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS 2017;
docs/math.md §7.4, §7.4.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int, check_real
from ldpsim.mechanisms.base import Aggregate, decode_uints
from ldpsim.mechanisms.sketches.cms import CMSReports
from ldpsim.mechanisms.discovery.false_discoveries import (DEFAULT_FALSE_DISCOVERIES, check_rate, over_cap,
                                                           selection_cut, sketch_counts, sketch_kept,
                                                           sketch_null_share)
from ldpsim.mechanisms.discovery.theory import UserModel
from ldpsim.mechanisms.discovery.words import (DEFAULT_ALPHABET, CodeCMS, DiscoveryProtocol, DiscoveryResult, WordCodec, cms_log_likelihood,
                                     grouped_counts, split_counts, top, word_rows)


class TreeHistReports(NamedTuple):
    """One report per user: the tree level (prefix length − 1) and that level's CMS report."""

    level: np.ndarray  #: int64 in [0, L)
    bits: np.ndarray   #: uint8 (n, ⌈m/8⌉), CMS bits
    row: np.ndarray    #: int64 in [0, k), CMS row


@dataclass(frozen=True)
class TreeHist(DiscoveryProtocol):
    """TreeHist over words of at most ``length`` symbols (padding rules: :mod:`.words`).

    Client: the user picks a level ℓ uniform in {1..L} (independent of the word) and reports the
    length-ℓ prefix code of the padded word through the level's ε-LDP count-mean sketch
    (:class:`~ldpsim.mechanisms.discovery.words.CodeCMS`, docs/math.md §1.5) — the paper's per-level frequency
    oracle is Hashtogram, a hashed sketch with Hadamard response; CMS is the sketch this project
    already has, with an exact direct sampler. The tree is |Σ|+1-ary (one symbol per level) rather
    than binary: L levels instead of L·log2 b.
    Privacy: ε-LDP. The level is independent of the input; the CMS part is ε-LDP with ratio exactly
    e^ε at its boundary (:meth:`privacy_parts`).
    Server (:meth:`discover`): level 1 estimates every first symbol; each level keeps the prefixes
    whose estimate is at least ``threshold``·σ_ℓ (σ_ℓ the CMS noise s.d. of a count in the level's
    group of n_ℓ users: (m/(m−1))·sqrt(n_ℓ(c_ε²−1)/4 + n_ℓ/m)), at most ``survivors`` of them (largest
    first), and extends each by every symbol; the last level's ``top_k`` largest are the result.
    Estimates are scaled to the population: f̂ = n/n_ℓ·f̂_ℓ, unbiased up to the sketch's hash-collision
    bias (given the group sizes the group's true count is hypergeometric with mean f·n_ℓ/n).
    Aggregate: the L per-level CMS aggregates stacked, data shape (L, k, m+1); it does not depend on
    any candidate, so it merges by addition and the tree walk is post-processing.
    Direct path (exact): each word's users are split over the levels by a multinomial (the law of
    the users' uniform level choice); each level's CMS aggregate is then drawn by
    :meth:`CMS.sample_aggregate <ldpsim.mechanisms.sketches.cms.CMS.sample_aggregate>` from the true counts of
    that group's prefixes. Levels use disjoint users and independent randomness, so the joint law of the
    stacked aggregate is the per-user path's, and ``discover`` (deterministic) has the same law too.

    Parameters
    ----------
    epsilon : float in (0, inf)
        ε of one report.
    length : int in [2, L_max]
        Longest word, in symbols (``L_max``: b^L < 2^63); also the number of levels.
    alphabet : str, or sequence of str (graphemes; see WordCodec)
        Distinct single code points (:data:`~ldpsim.mechanisms.discovery.words.DEFAULT_ALPHABET`).
    k : int in [1, 2^24]
        Rows of each level's count-mean sketch.
    m : int in [2, 2^16]
        Columns of each level's sketch.
    seed : int in [0, 2^32)
        Picks the sketch's hash family.

    >>> th = TreeHist(epsilon=4.0, length=4, alphabet="abc", k=8, m=64)
    >>> agg = th.sample_aggregate([5000, 3000], rng=1, items=["ab", "cab"])
    >>> th.discover(agg, top_k=2).words.tolist()
    ['ab', 'cab']
    """

    epsilon: float
    length: int = 8
    alphabet: str | tuple = DEFAULT_ALPHABET
    k: int = 128
    m: int = 1024
    seed: int = 0
    codec: WordCodec = field(init=False, repr=False, compare=False)
    cms: CodeCMS = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.name, self.epsilon))
        object.__setattr__(self, "codec", WordCodec(self.alphabet, self.length))
        object.__setattr__(self, "cms", CodeCMS(self.epsilon, self.k, self.m, self.seed))

    @property
    def levels(self) -> int:
        return self.length

    @property
    def estimate_groups(self) -> int:
        return self.levels

    def user_model(self) -> UserModel:
        """The level sketch's per-user terms (docs/math.md §1.5, §7.4.1)."""
        return self.cms.user_model()

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> TreeHistReports:
        rng = as_generator(rng)
        rows, inv = self.codec.symbols(values)
        level = rng.integers(0, self.levels, size=inv.size)
        codes = np.stack([self.codec.prefix_codes(rows, l + 1) for l in range(self.levels)], axis=1)
        user_code = codes[inv, level] if inv.size else np.zeros(0, dtype=np.int64)
        bits = np.empty((inv.size, self.cms._n_bytes), dtype=np.uint8)
        row = np.empty(inv.size, dtype=np.int64)
        for l in range(self.levels):
            sel = np.flatnonzero(level == l)
            bits[sel], row[sel] = self.cms.perturb(user_code[sel], rng)
        return TreeHistReports(level, bits, row)

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> TreeHistReports:
        if not (isinstance(reports, tuple) and len(reports) == 3):
            raise TypeError(f"{self.name}.{what}: reports must be TreeHistReports(level, bits, row).")
        level = np.asarray(reports[0])
        cms = self.cms._check_reports(CMSReports(reports[1], reports[2]), what)
        if level.shape != cms.row.shape or (level.size and (not np.issubdtype(level.dtype, np.integer)
                                                            or level.min() < 0 or level.max() >= self.levels)):
            raise ValueError(f"{self.name}.{what}: level must hold {cms.row.size} ints in [0, {self.levels}).")
        return TreeHistReports(level.astype(np.int64), cms.bits, cms.row)

    def aggregate(self, reports) -> Aggregate:
        level, bits, row = self._check_reports(reports, "aggregate")
        data = np.stack([self.cms.aggregate(CMSReports(bits[level == l], row[level == l])).data
                         for l in range(self.levels)])
        return Aggregate(int(level.size), data, self.kind)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        rng = as_generator(rng)
        rows, counts = word_rows(self, true_counts, items)
        split = split_counts(counts, self.levels, rng)
        data = np.empty((self.levels, self.k, self.m + 1), dtype=np.int64)
        for l in range(self.levels):
            codes, c = grouped_counts(self.codec.prefix_codes(rows, l + 1), split[:, l])
            data[l] = self.cms.sample_aggregate(c, rng, codes).data
        return Aggregate(int(counts.sum()), data, self.kind)

    def level_aggregate(self, agg: Aggregate, level: int) -> Aggregate:
        """The CMS aggregate of one level (0-based), n = the users who reported at that level."""
        self._check_aggregate(agg)
        data = agg.data[level]
        return Aggregate(int(data[:, self.m].sum()), data, self.cms.kind)

    def noise_sd(self, n_level: int) -> float:
        """σ_ℓ: CMS noise s.d. of one count estimate among n_level users, collisions ≈ n/m (§1.5)."""
        m, c = self.m, self.cms.c_eps
        return m / (m - 1) * math.sqrt(n_level * (c * c - 1) / 4 + n_level / m)

    def discover(self, agg: Aggregate, top_k: int = 20, threshold: float = 3.0,
                 survivors: int | None = None, false_discoveries: float = DEFAULT_FALSE_DISCOVERIES) -> DiscoveryResult:
        """Walk the tree (class docstring); ``survivors`` defaults to 4·top_k. A whole word of the last level
        is kept only if, besides, its sketch sum reaches t, the smallest with |C|·P[Bin(n_L, q₀) ≥ t] ≤
        ``false_discoveries`` (expected invented words per run; q₀ = f + (1 − 2f)/m, docs/math.md §10.10).
        A prefix of an earlier level that passes the level's test and whose sum reaches that level's bar
        (the same rule over its own candidates) but falls outside the ``survivors`` cap is counted in
        ``dropped``."""
        top_k = check_int(self.name, "top_k", top_k, low=1)
        threshold = check_real(self.name, "threshold", threshold, 0.0, math.inf, low_open=False)
        survivors = check_int(self.name, "survivors", 4 * top_k if survivors is None else survivors, low=1)
        rate = check_rate(self.name, false_discoveries)
        alive, dropped = np.zeros(0, dtype=np.int64), 0
        for l in range(self.levels):
            level_agg = self.level_aggregate(agg, l)
            cand = self.codec.extend(alive, l)
            est = self.cms.estimate(level_agg, cand) if cand.size else np.zeros(0)
            last = l == self.levels - 1
            ok = est >= threshold * self.noise_sd(level_agg.n)
            t, invented = selection_cut(level_agg.n, sketch_null_share(self.cms.flip, self.m), cand.size, rate)
            if last:
                cand, est = cand[ok], est[ok]
                ok = sketch_kept(self.cms, cand, est, level_agg.n, t, top_k)
            else:
                dropped += over_cap(sketch_counts(self.cms, est[ok], level_agg.n), t, survivors)
            alive, est = top(cand[ok], est[ok], top_k if last else survivors)
        scale = agg.n / max(level_agg.n, 1)
        return DiscoveryResult(self.codec.decode(alive, self.length), est * scale, agg.n, invented, dropped)

    def privacy_parts(self) -> dict[str, float]:
        """ε of each part of one report: the level (input-independent) and the CMS report."""
        return {"level": 0.0, "cms": 2 * math.log((1 - self.cms.flip) / self.cms.flip)}

    def log_likelihood(self, reports, values) -> np.ndarray:
        """log P[report | word] = −log L + the CMS report's log-likelihood of the word's prefix at the level."""
        level, bits, row = self._check_reports(reports, "log_likelihood")
        rows, inv = self.codec.symbols(values)
        codes = np.stack([self.codec.prefix_codes(rows, l + 1) for l in range(self.levels)], axis=1)
        return -math.log(self.levels) + cms_log_likelihood(self.cms, bits, row, codes[inv, level])

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """One byte for the level, then the CMS report (⌈m/8⌉ bit bytes + the row)."""
        return 1 + self.cms.report_bytes

    def encode(self, reports) -> bytes:
        level, bits, row = self._check_reports(reports, "encode")
        body = np.frombuffer(self.cms.encode(CMSReports(bits, row)), np.uint8).reshape(level.size, -1)
        return np.concatenate([level.astype(np.uint8)[:, None], body], axis=1).tobytes()

    def decode(self, payload: bytes) -> TreeHistReports:
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        bits, row = self.cms.decode(raw[:, 1:].tobytes())
        return self._check_reports(TreeHistReports(decode_uints(raw[:, :1].tobytes(), 1), bits, row), "decode")
