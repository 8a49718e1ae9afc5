"""Apple's Sequence Fragment Puzzle (SFP) — Apple Differential Privacy Team, "Learning with Privacy
at Scale", Apple Machine Learning Journal, 2017; docs/math.md §7.4, §7.4.1 (the sketches: §1.5).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int, check_real
from ldpsim.mechanisms.base import Aggregate
from ldpsim.mechanisms.sketches.cms import CMSReports, grouped_column_counts
from ldpsim.mechanisms.hashing import HashFamily
from ldpsim.mechanisms.discovery.false_discoveries import (DEFAULT_FALSE_DISCOVERIES, check_rate, count_threshold,
                                                           reach_level, selection_cut, sketch_kept, sketch_null_share)
from ldpsim.mechanisms.discovery.fragment_search import slot_fragments
from ldpsim.mechanisms.discovery.theory import UserModel
from ldpsim.mechanisms.discovery.words import (DEFAULT_ALPHABET, CodeCMS, DiscoveryProtocol, DiscoveryResult, WordCodec,
                                     cms_log_likelihood, grouped_counts, split_counts, top,
                                     word_rows)


class SFPReports(NamedTuple):
    """One report per user: a word CMS report, a fragment CMS report and the fragment's position."""

    word_bits: np.ndarray
    word_row: np.ndarray
    fragment_bits: np.ndarray
    fragment_row: np.ndarray
    position: np.ndarray  #: int64 in [0, L/2), sent in clear (independent of the word)


@dataclass(frozen=True)
class SFP(DiscoveryProtocol):
    """Sequence Fragment Puzzle over words of at most ``length`` symbols (even; padding: :mod:`.words`).

    Each user sends two count-mean sketch reports (:class:`~ldpsim.mechanisms.discovery.words.CodeCMS`):
    the padded word's code through a word CMS at ε_w = ``word_share``·ε, and a fragment token
    through a fragment CMS at ε_f = ε − ε_w, with a position l uniform in {0 .. L/2 − 1} (independent
    of the word) sent in clear. The token is (r, s_{2l} s_{2l+1}): r the ``hash_bits``-bit hash of the
    word and the two symbols at positions 2l, 2l+1 — with l, the paper's (hash(word) mod 256, position,
    2-character fragment). The position costs no privacy (it does not depend on the word) and makes the
    fragment part's likelihood a single CMS term (not a mixture over positions), whose ratio bound is
    attained.
    Privacy: ε-LDP by sequential composition; each part's likelihood ratio is at most e^{ε_w} resp.
    e^{ε_f}, attained, and both at once for reports equal to one word's one-hot vectors in both
    sketches, so the joint ratio is exactly e^ε at its boundary (:meth:`privacy_parts`,
    :meth:`log_likelihood`).
    Aggregate: the word CMS aggregate and one fragment CMS aggregate per position l, filled by the
    n_l users who sent l (each with its own row sizes N_{l,j}; data flattened and concatenated,
    :meth:`parts`); it does not depend on any candidate, so it merges by addition. Per position, a
    fragment's count (≈ 2n_w/L of a word's n_w users) meets the noise of n_l ≈ 2n/L users, not of all n
    (docs/math.md §7.4.1).
    Server (:meth:`discover`): for every position l, hash value r and valid fragment, position l's
    sketch estimate with n_l (one compiled pass: the tokens are the codes 0 … 2^bits·b² − 1, hashed
    once and read from every position's sketch, docs/math.md §7.4.1); a fragment is frequent if it is at
    least ``threshold``·σ_l (σ_l the CMS noise s.d. of a count among n_l users, docs/math.md §1.5) and
    among the ``per_slot`` largest of its (r, l).
    For each r, every combination of its frequent fragments over the L/2 positions is a candidate
    word; kept are valid padded words whose own hash is r. The word sketch estimates the candidates;
    the ``top_k`` largest are returned with those estimates (the word CMS estimator: unbiased up to
    the sketch's hash-collision bias, docs/math.md §1.5).
    Direct path (exact): the word sketch is drawn by CMS's direct sampler from the word counts; each
    word's users are split over the positions by a multinomial and each position's fragment sketch is
    drawn from that position's token counts. Given the true counts and the split, the sketches are
    independent (each user's two reports use independent randomness; a position's sketch holds only its
    own users), so the joint law equals the per-user path's.

    Parameters
    ----------
    epsilon : float in (0, inf)
        ε of one report (word and fragment parts together).
    word_share : float in (0, 1)
        Share of ε spent on the word report (default 0.3: fragments are the bottleneck, Notes).
    length : even int in [2, L_max]
        Longest word, in symbols.
    alphabet : str, or sequence of str (graphemes; see WordCodec)
        Distinct single code points (:data:`~ldpsim.mechanisms.discovery.words.DEFAULT_ALPHABET`).
    hash_bits : int in [1, 16]
        Bits of the word hash in each fragment token (the paper: 8, for a far larger population;
        default 6, Notes).
    word_k, word_m, fragment_k, fragment_m : int
        Rows and columns of the word and fragment count-mean sketches (defaults 1024 × 256 and
        64 × 1024, Notes).
    seed : int in [0, 2^32 − 2)
        Picks the sketches' and the word hash's families.

    Notes
    -----
    Defaults, measured on words-slang at n = 10⁵ … 10⁷ (README "Discovering new words"): the server
    misses words mainly because their fragments — n_w/(L/2) users each — drown among the b² fragments
    of their slot, so most of ε goes to the fragment: 70 % since the fragment sketches are per position
    (with one sketch over all n users 80 % was best; 60 % loses F1 at ε ≤ 2 and n = 10⁵). 6 hash
    bits instead of the paper's 8 give the same or better F1 (the false candidates number
    ≈ ``per_slot`` to the power L/2 whatever the hash size, since each hash value keeps 1/2^bits of its
    combinations) with 4× fewer tokens to query. The word sketch is 1024 × 256 (32-byte reports):
    its noise n(c_ε²−1)/4 dwarfs its collision term (0.9 % of it at n = 10⁶, docs/math.md §7.4.1),
    so the narrow sketch costs no accuracy and a quarter of the client's bits; each position's fragment
    sketch keeps 64 × 1024, where the collision term is already 16–31 % of the noise at n = 10⁶.

    >>> sfp = SFP(epsilon=8.0, length=4, alphabet="abc", hash_bits=2, word_k=8, word_m=64,
    ...           fragment_k=8, fragment_m=64)
    >>> agg = sfp.sample_aggregate([5000, 3000], rng=1, items=["ab", "cab"])
    >>> sfp.discover(agg, top_k=2).words.tolist()
    ['ab', 'cab']
    """

    epsilon: float
    word_share: float = 0.3
    length: int = 8
    alphabet: str | tuple = DEFAULT_ALPHABET
    hash_bits: int = 6
    word_k: int = 1024
    word_m: int = 256
    fragment_k: int = 64
    fragment_m: int = 1024
    seed: int = 0
    codec: WordCodec = field(init=False, repr=False, compare=False)
    word_cms: CodeCMS = field(init=False, repr=False, compare=False)
    fragment_cms: CodeCMS = field(init=False, repr=False, compare=False)
    word_hash: HashFamily = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        eps = check_epsilon(self.name, self.epsilon)
        share = check_real(self.name, "word_share", self.word_share, 0.0, 1.0)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "word_share", share)
        codec = WordCodec(self.alphabet, self.length)
        if codec.length % 2:
            raise ValueError(f"The 'length' parameter of SFP must be an even int (fragments are 2 symbols). "
                             f"Got {self.length!r} instead.")
        object.__setattr__(self, "codec", codec)
        object.__setattr__(self, "hash_bits", check_int(self.name, "hash_bits", self.hash_bits, low=1, high=16))
        seed = check_int(self.name, "seed", self.seed, low=0, high=2**32 - 3)
        for name in ("word_k", "fragment_k"):  # the sketches' own checks would name them 'k' and 'm'
            check_int(self.name, name, getattr(self, name), low=1, high=1 << 24)
        for name in ("word_m", "fragment_m"):
            check_int(self.name, name, getattr(self, name), low=2, high=1 << 16)
        object.__setattr__(self, "word_cms", CodeCMS(eps * share, self.word_k, self.word_m, seed))
        object.__setattr__(self, "fragment_cms", CodeCMS(eps * (1 - share), self.fragment_k, self.fragment_m, seed + 1))
        object.__setattr__(self, "word_hash", HashFamily(1, 1 << self.hash_bits, seed + 2))

    @property
    def positions(self) -> int:
        return self.length // 2

    def user_model(self) -> UserModel:
        """The word sketch's per-user terms (docs/math.md §1.5); every user reports a word, no split."""
        return self.word_cms.user_model()

    # tokens ------------------------------------------------------------------------------------
    def _word_hash(self, codes: np.ndarray) -> np.ndarray:
        return self.word_hash.evaluate(0, np.asarray(codes, dtype=np.int64).astype(np.uint64))

    def word_tokens(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What a word is counted as in the word sketch and in each position's fragment sketch
        (docs/math.md §7.4.1).

        Parameters
        ----------
        rows : ndarray of int
            (D, L) padded symbol rows of D words (:meth:`WordCodec.symbols`).

        Returns
        -------
        codes : ndarray of int
            (D,) word codes, counted in the word sketch.
        tokens : ndarray of int
            (D, L/2) fragment tokens: column l is (r, fragment at l) = r·b² + fragment, with r the word's
            hash, counted in position l's sketch.
        """
        codes = self.codec.prefix_codes(rows, self.length)
        frag = rows[:, 0::2] * self.codec.base + rows[:, 1::2]
        return codes, self._word_hash(codes)[:, None] * self.codec.base ** 2 + frag

    # client ------------------------------------------------------------------------------------
    def perturb(self, values, rng=None) -> SFPReports:
        rng = as_generator(rng)
        rows, inv = self.codec.symbols(values)
        codes, tokens = self.word_tokens(rows)
        position = rng.integers(0, self.positions, size=inv.size)
        word = self.word_cms.perturb(codes[inv], rng)
        frag = self.fragment_cms.perturb(tokens[inv, position] if inv.size else codes[:0], rng)
        return SFPReports(*word, *frag, position)

    # server ------------------------------------------------------------------------------------
    def _check_reports(self, reports, what: str) -> SFPReports:
        if not (isinstance(reports, tuple) and len(reports) == 5):
            raise TypeError(f"{self.name}.{what}: reports must be SFPReports(word_bits, word_row, "
                            f"fragment_bits, fragment_row, position).")
        word = self.word_cms._check_reports(CMSReports(*reports[:2]), what)
        frag = self.fragment_cms._check_reports(CMSReports(*reports[2:4]), what)
        position = np.asarray(reports[4])
        if word.row.size != frag.row.size or position.shape != frag.row.shape:
            raise ValueError(f"{self.name}.{what}: {word.row.size} word reports, {frag.row.size} fragment "
                             f"reports and {position.size} positions.")
        if position.size and (not np.issubdtype(position.dtype, np.integer) or position.min() < 0
                              or position.max() >= self.positions):
            raise ValueError(f"{self.name}.{what}: position must hold ints in [0, {self.positions}).")
        return SFPReports(*word, *frag, position.astype(np.int64))

    def _join(self, word: Aggregate, frag: np.ndarray) -> Aggregate:
        """The SFP aggregate of the word aggregate and the stacked fragment sketches (L/2, k, m+1)."""
        return Aggregate(word.n, np.concatenate([word.data.ravel(), frag.ravel()]), self.kind)

    def _fragment_tables(self, agg: Aggregate) -> np.ndarray:
        """Position l's fragment sketch data at [l] (L/2 × k × (m+1)); column m: row sizes N_{l,j}."""
        return agg.data[self.word_k * (self.word_m + 1):].reshape(self.positions, self.fragment_k,
                                                                    self.fragment_m + 1)

    def parts(self, agg: Aggregate) -> tuple[Aggregate, tuple[Aggregate, ...]]:
        """(word CMS aggregate, the L/2 fragment CMS aggregates: position l's of its n_l users)."""
        self._check_aggregate(agg)
        word = agg.data[:self.word_k * (self.word_m + 1)].reshape(self.word_k, self.word_m + 1)
        frags = tuple(Aggregate(int(t[:, -1].sum()), t, self.fragment_cms.kind) for t in self._fragment_tables(agg))
        return Aggregate(agg.n, word, self.word_cms.kind), frags

    def aggregate(self, reports) -> Aggregate:
        r = self._check_reports(reports, "aggregate")
        k, m = self.fragment_k, self.fragment_m
        row = r.position * k + r.fragment_row  # row j of position l's sketch is row l·k + j of the stack
        frag = np.empty((self.positions * k, m + 1), dtype=np.int64)
        frag[:, :m] = grouped_column_counts(r.fragment_bits, row, self.positions * k, m)
        frag[:, m] = np.bincount(row, minlength=self.positions * k)
        return self._join(self.word_cms.aggregate(CMSReports(*r[:2])), frag)

    def sample_aggregate(self, true_counts, rng=None, items=None) -> Aggregate:
        rng = as_generator(rng)
        rows, counts = word_rows(self, true_counts, items)
        codes, tokens = self.word_tokens(rows)
        word = self.word_cms.sample_aggregate(counts, rng, codes)
        split = split_counts(counts, self.positions, rng)  # (D, L/2): each word's users per position
        frags = [self.fragment_cms.sample_aggregate(c, rng, uniq).data
                 for uniq, c in (grouped_counts(tokens[:, l], split[:, l]) for l in range(self.positions))]
        return self._join(word, np.stack(frags))

    def _valid_fragments(self) -> np.ndarray:
        """valid[l, s·b + t]: the fragment can occur at position l (no letter after ∅; no word starts
        with ∅)."""
        b = self.codec.base
        s, t = np.divmod(np.arange(b * b), b)
        valid = np.broadcast_to(~((s == 0) & (t != 0)), (self.positions, b * b)).copy()
        valid[0] &= s != 0
        return valid

    def frequent_fragments(self, agg: Aggregate, threshold: float = 1.5, per_slot: int = 4) -> np.ndarray:
        """F[r, l, j]: the ``per_slot`` most frequent fragments of hash r at position l (−1: none);
        :meth:`fragment_slots` without the count of dropped fragments."""
        return self.fragment_slots(agg, threshold, per_slot)[0]

    def fragment_slots(self, agg: Aggregate, threshold: float = 1.5, per_slot: int = 4,
                       false_discoveries: float = DEFAULT_FALSE_DISCOVERIES) -> tuple[np.ndarray, int]:
        """(F, dropped): F[r, l, j] the ``per_slot`` most frequent fragments of hash r at position l
        (−1: none); dropped, how many fragments above threshold·σ_l whose sum also reaches position l's
        false-discovery bar (t_l, the smallest with |tokens_l|·P[Bin(n_l, q₀) ≥ t_l] ≤
        ``false_discoveries``, docs/math.md §10.10) fell outside their slot's ``per_slot`` cap — an upper
        bound on the live fragments cut: under the fixed family an empty token that collides with loud
        fragments in some rows clears the bar too, and on a skewed vocabulary such tokens dominate.

        The R·b² tokens (r, fragment) are the codes 0 … R·b² − 1 (:meth:`_word_tokens`); one compiled
        pass over them (:func:`~.fragment_search.slot_fragments`), each key hashed once and read from
        every position's sketch, gives every slot's fragments. Within a position the estimate increases
        with the integer sum S, so the cut-off threshold·σ_l is the least S whose estimate reaches it
        (position l's estimates and σ_l use its own n_l users, docs/math.md §7.4.1), and a slot keeps
        the ``per_slot`` valid fragments of largest S above it, ties broken towards the smaller
        fragment code."""
        self._check_aggregate(agg)
        false_discoveries = check_rate(self.name, false_discoveries)
        per_slot = check_int(self.name, "per_slot", per_slot, low=1, high=16)
        tables = self._fragment_tables(agg)
        n = tables[:, :, -1].sum(axis=1)  # n_l
        c, m, b2 = self.fragment_cms.c_eps, self.fragment_m, self.codec.base ** 2
        cut = threshold * m / (m - 1) * np.sqrt(n * (c * c - 1) / 4 + n / m)
        least = [self._least_sum(n_l, cut_l) for n_l, cut_l in zip(n, cut)]
        valid = self._valid_fragments()
        hash_values = 1 << self.hash_bits
        q0 = sketch_null_share(self.fragment_cms.flip, m)
        bar = [math.ceil(reach_level(count_threshold(int(n_l), q0, hash_values * int(v.sum()), false_discoveries)))
               for n_l, v in zip(n, valid)]
        return slot_fragments(self.fragment_cms.family, tables, valid, least, bar, per_slot, hash_values)

    def _least_sum(self, n_l: int, cut: float) -> int:
        """The least sum S whose fragment estimate among n_l users reaches ``cut`` (n_l + 1: none; the
        estimate is increasing in S and S ≤ n_l)."""
        if n_l == 0:
            return 1
        low, high = 0, int(n_l) + 1  # est(high) ≥ cut is taken as true: S never exceeds n_l
        while low < high:
            mid = (low + high) // 2
            if self.fragment_cms.estimates_from_sums(n_l, mid) >= cut:
                high = mid
            else:
                low = mid + 1
        return low

    def discover(self, agg: Aggregate, top_k: int = 20, threshold: float = 1.5, per_slot: int = 4,
                 false_discoveries: float = DEFAULT_FALSE_DISCOVERIES) -> DiscoveryResult:
        """Fragments → candidate words → word sketch (class docstring). A candidate word is kept only if its
        word-sketch sum reaches t, the smallest with |C|·P[Bin(n, q₀) ≥ t] ≤ ``false_discoveries``
        (expected invented words per run; q₀ = f + (1 − 2f)/m of the word sketch, docs/math.md §10.10).
        Fragments cut by the ``per_slot`` cap though their sums reach their position's bar are counted in
        ``dropped`` (:meth:`fragment_slots`)."""
        top_k = check_int(self.name, "top_k", top_k, low=1)
        rate = check_rate(self.name, false_discoveries)
        threshold = check_real(self.name, "threshold", threshold, 0.0, math.inf, low_open=False)
        per_slot = check_int(self.name, "per_slot", per_slot, low=1, high=16)
        frags, dropped = self.fragment_slots(agg, threshold, per_slot, rate)
        combos = np.array(list(itertools.product(range(per_slot), repeat=self.positions)))  # (C, L/2)
        pick = frags[:, np.arange(self.positions), combos]  # (R, C, L/2)
        b2 = self.codec.base ** 2
        codes = (pick * b2 ** np.arange(self.positions - 1, -1, -1)).sum(axis=2)
        r = np.broadcast_to(np.arange(frags.shape[0])[:, None], codes.shape)
        ok = (pick >= 0).all(axis=2)
        codes, r = codes[ok], r[ok]
        cand = np.unique(codes[(self._word_hash(codes) == r) & _valid_words(codes, self.codec)])
        word_agg, _ = self.parts(agg)
        est = self.word_cms.estimate(word_agg, cand) if cand.size else np.zeros(0)
        t, invented = selection_cut(word_agg.n, sketch_null_share(self.word_cms.flip, self.word_m), cand.size, rate)
        keep = sketch_kept(self.word_cms, cand, est, word_agg.n, t, top_k)
        words, est = top(cand[keep], est[keep], top_k)
        return DiscoveryResult(self.codec.decode(words, self.length), est, agg.n, invented, dropped)

    def privacy_parts(self) -> dict[str, float]:
        """ε of each part of one report: the word CMS and the fragment CMS (position: input-independent)."""
        return {name: 2 * math.log((1 - cms.flip) / cms.flip)
                for name, cms in (("word", self.word_cms), ("fragment", self.fragment_cms))}

    def log_likelihood(self, reports, values) -> np.ndarray:
        """log P[report | word] = −log(L/2) + word CMS term + fragment CMS term (token at the sent position)."""
        r = self._check_reports(reports, "log_likelihood")
        rows, inv = self.codec.symbols(values)
        codes, tokens = self.word_tokens(rows)
        return (-math.log(self.positions) + cms_log_likelihood(self.word_cms, r.word_bits, r.word_row, codes[inv])
                + cms_log_likelihood(self.fragment_cms, r.fragment_bits, r.fragment_row, tokens[inv, r.position]))

    # wire form ---------------------------------------------------------------------------------
    @property
    def report_bytes(self) -> int:
        """The word CMS report, the fragment CMS report, then the position (one byte)."""
        return self.word_cms.report_bytes + self.fragment_cms.report_bytes + 1

    def encode(self, reports) -> bytes:
        r = self._check_reports(reports, "encode")
        n = r.word_row.size
        word = np.frombuffer(self.word_cms.encode(CMSReports(*r[:2])), np.uint8).reshape(n, -1)
        frag = np.frombuffer(self.fragment_cms.encode(CMSReports(*r[2:4])), np.uint8).reshape(n, -1)
        return np.concatenate([word, frag, r.position.astype(np.uint8)[:, None]], axis=1).tobytes()

    def decode(self, payload: bytes) -> SFPReports:
        n = self._check_payload(payload)
        raw = np.frombuffer(payload, dtype=np.uint8).reshape(n, self.report_bytes)
        w = self.word_cms.report_bytes
        word = self.word_cms.decode(raw[:, :w].tobytes())
        frag = self.fragment_cms.decode(raw[:, w:-1].tobytes())
        return self._check_reports(SFPReports(*word, *frag, raw[:, -1].astype(np.int64)), "decode")


def _valid_words(codes: np.ndarray, codec: WordCodec) -> np.ndarray:
    """True for codes of valid padded words (first symbol not ∅, no letter after ∅)."""
    digits = np.empty((codes.size, codec.length), dtype=np.int64)
    c = codes.copy()
    for i in range(codec.length - 1, -1, -1):
        c, digits[:, i] = np.divmod(c, codec.base)
    pad = digits == 0
    return ~pad[:, 0] & ~(pad[:, :-1] & ~pad[:, 1:]).any(axis=1)
