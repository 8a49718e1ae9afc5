"""Strings as fixed-length symbol sequences, and what the discovery protocols share — docs/math.md §7.4.

Discovery protocols (:mod:`.sfp`, :mod:`.pem`, :mod:`.treehist`) find frequent strings that no
dictionary holds. They all see a word the same way:

* **Symbols are user-perceived characters** (Unicode extended grapheme clusters, UAX #29): a letter,
  an accented letter, a Chinese character, a digit, and an emoji *sequence* — a skin-tone modified
  emoji (👍🏽), a ZWJ family (👨‍👩‍👧), a flag (🇫🇷), a keycap — are each one symbol. Words are NFC-normalized
  before they are split. The alphabet Σ is a string (each code point a symbol) or a sequence of
  distinct graphemes; :meth:`WordCodec.for_words` builds it from a vocabulary in any script.
  Symbol id 0 is the padding symbol ∅; alphabet symbol i has id i + 1, so there are b = |Σ| + 1 ids.
* **Padding / termination.** A word of 1 ≤ len ≤ L symbols, all in the alphabet, is padded on the
  right with ∅ to exactly L symbols; ∅ doubles as the terminator. A word that is empty, longer than L
  or holds a symbol outside the alphabet is a ``ValueError`` naming it (workloads filter such
  words; nothing is silently truncated). Hence in a valid padded word no letter follows ∅.
* **Codes.** The prefix of length ℓ of a padded word is the integer Σ_{i<ℓ} s_i·b^{ℓ−1−i} (base-b
  digits, first symbol most significant); the code of the whole word is its length-L prefix. Codes are
  exact int64 (b^L < 2^63 is checked), so prefixes never collide; extending a prefix by symbol s is
  code·b + s.

:class:`CodeCMS` is the count-mean sketch of :mod:`.cms` with these integer codes as its 64-bit hash
keys (no mmh3 call per token: SFP queries millions of fragment tokens).

>>> codec = WordCodec(alphabet="abc", length=3)
>>> codec.decode(codec.word_codes(["ab", "c"])[0], 3).tolist()
['ab', 'c']
>>> codec = WordCodec.for_words(["gr8", "中文", "👨‍👩‍👧"])
>>> codec.length, codec.decode(codec.word_codes(["中文"])[0], codec.length).tolist()
(3, ['中文'])
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import regex

from ldpsim.mechanisms._validation import check_counts, check_int
from ldpsim.mechanisms.base import Mechanism
from ldpsim.mechanisms.sketches.cms import CMS
from ldpsim.mechanisms.discovery.theory import UserModel, split_moments
from ldpsim.mechanisms.hashing import HashFamily, factorize

#: 26 letters, the apostrophe, 9 accented letters and 6 one-code-point emoji (b = 43 with ∅)
DEFAULT_ALPHABET = "abcdefghijklmnopqrstuvwxyz'éèáíóñüöç😂❤🔥👍😭🙏"

_GRAPHEME = regex.compile(r"\X")


def graphemes(word: str) -> list[str]:
    """The user-perceived characters of ``word`` (NFC, extended grapheme clusters of UAX #29)."""
    return _GRAPHEME.findall(unicodedata.normalize("NFC", word))


def max_length(base: int) -> int:
    """The largest L with base^L < 2^63: prefix codes stay exact int64 numbers."""
    length = int(63 * math.log(2) / math.log(base))
    while base ** length >= 2 ** 63:
        length -= 1
    return length


class DiscoveryResult(NamedTuple):
    """What ``discover`` returns: discovered strings, most frequent first, with estimates."""

    words: np.ndarray   #: object array of str
    counts: np.ndarray  #: estimated number of users holding each word (float)
    n: int              #: users in the aggregate
    #: expected invented words (typed by no user) among ``words``, an upper bound (docs/math.md §10.10)
    expected_false: float = 0.0
    #: live prefixes cut by a survivors cap: their count cleared their round's false-discovery bar but they
    #: fell outside the cap, so no word of theirs can be found, and their words' hash collisions are not
    #: taken off the candidates' counts: ``expected_false`` assumes it is 0 (docs/math.md §10.10)
    dropped: int = 0

    @property
    def frequencies(self) -> np.ndarray:
        """Estimated shares counts / n."""
        return self.counts / max(self.n, 1)


@dataclass(frozen=True)
class WordCodec:
    """Alphabet + length L: words ↔ padded symbol rows ↔ int64 prefix codes (module docstring).

    Parameters
    ----------
    alphabet : str, or sequence of str
        The symbols: a string of distinct code points, or distinct graphemes (each one user-perceived
        character, e.g. ``("中", "文", "👨‍👩‍👧")``); none of them NUL.
    length : int
        L, the longest word in symbols, in [2, L_max] with (|alphabet| + 1)^L_max < 2^63.
    """

    alphabet: str | tuple = DEFAULT_ALPHABET
    length: int = 8
    base: int = field(init=False, repr=False)
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        symbols = self.alphabet
        if isinstance(symbols, str):
            symbols = tuple(symbols)
        elif isinstance(symbols, (list, tuple)) and all(isinstance(c, str) and len(graphemes(c)) == 1
                                                       for c in symbols):
            symbols = tuple(unicodedata.normalize("NFC", c) for c in symbols)
        else:
            raise TypeError(f"The 'alphabet' parameter of WordCodec must be a non-empty str or a sequence of "
                            f"single graphemes. Got {self.alphabet!r} instead.")
        if not symbols or len(set(symbols)) != len(symbols) or "\x00" in symbols:
            raise ValueError(f"The 'alphabet' parameter of WordCodec must hold distinct symbols other "
                             f"than NUL. Got {self.alphabet!r} instead.")
        base = len(symbols) + 1
        object.__setattr__(self, "alphabet", self.alphabet if isinstance(self.alphabet, str) else symbols)
        object.__setattr__(self, "length", check_int("WordCodec", "length", self.length, low=2,
                                                     high=max(2, max_length(base))))
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "_index", {c: i + 1 for i, c in enumerate(symbols)})

    @classmethod
    def for_words(cls, words, length: int | None = None) -> "WordCodec":
        """The codec of a vocabulary in any script: its alphabet is every grapheme the words use (in
        order of first appearance) and L the longest word, unless ``length`` is given.

        Raises ``ValueError`` when the alphabet is too large for L (b^L must stay below 2^63): a
        vocabulary of 3 000 Chinese characters allows words of up to 5 of them.
        """
        split = [graphemes(w) for w in words]
        symbols = tuple(dict.fromkeys(c for g in split for c in g))
        longest = max((len(g) for g in split), default=0)
        want = max(2, longest if length is None else length)
        limit = max_length(len(symbols) + 1)
        if want > limit:
            raise ValueError(f"WordCodec: an alphabet of {len(symbols)} symbols allows words of at most "
                             f"{limit} symbols (prefix codes are exact 63-bit numbers); the words need "
                             f"{want}. Drop the longest words or pass a smaller length.")
        return cls(symbols, want)

    def check_word(self, word) -> list[int]:
        """Symbol ids of one word, padded to L; ValueError naming the word if it cannot be encoded."""
        if not isinstance(word, str):
            raise TypeError(f"WordCodec: words must be str; got {word!r} of type {type(word).__name__}.")
        symbols = graphemes(word)
        if not 1 <= len(symbols) <= self.length:
            raise ValueError(f"WordCodec: word {word!r} must have 1 to {self.length} symbols "
                             f"(user-perceived characters); it has {len(symbols)}.")
        try:
            ids = [self._index[c] for c in symbols]
        except KeyError as err:
            raise ValueError(f"WordCodec: word {word!r} holds {err.args[0]!r}, which is not in the "
                             f"alphabet.") from None
        return ids + [0] * (self.length - len(ids))

    def symbols(self, words) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, inverse)``: padded symbol ids of the distinct words (int64, D × L) and the index of
        each input word among them (one Python-level encoding per *distinct* word)."""
        arr = np.empty(len(words), dtype=object)
        arr[:] = list(words.tolist() if isinstance(words, np.ndarray) else words)
        uniq, inv = factorize(arr) if arr.size else (arr, np.zeros(0, dtype=np.intp))
        rows = np.array([self.check_word(w) for w in uniq.tolist()], dtype=np.int64).reshape(-1, self.length)
        return rows, inv

    def prefix_codes(self, rows: np.ndarray, length: int) -> np.ndarray:
        """Codes of the length-``length`` prefixes of symbol rows (Horner, exact int64)."""
        code = np.zeros(rows.shape[0], dtype=np.int64)
        for i in range(length):
            code = code * self.base + rows[:, i]
        return code

    def word_codes(self, words) -> tuple[np.ndarray, np.ndarray]:
        """``(codes of the distinct words, inverse)``."""
        rows, inv = self.symbols(words)
        return self.prefix_codes(rows, self.length), inv

    def extend(self, codes: np.ndarray, length: int) -> np.ndarray:
        """All valid one-symbol extensions of length-``length`` prefix codes (``length`` = 0: the
        first symbols). A prefix ending in ∅ extends only by ∅; no word starts with ∅."""
        codes = np.asarray(codes, dtype=np.int64)
        if length == 0:
            return np.arange(1, self.base, dtype=np.int64)
        ext = codes[:, None] * self.base + np.arange(self.base)
        ok = np.ones(ext.shape, dtype=bool)
        ended = codes % self.base == 0
        ok[ended, 1:] = False
        return ext[ok]

    def decode(self, codes, length: int) -> np.ndarray:
        """Strings of prefix codes of ``length`` symbols (∅ dropped), as an object array."""
        codes = np.asarray(codes, dtype=np.int64)
        digits = np.empty((codes.size, length), dtype=np.int64)
        c = codes.copy()
        for i in range(length - 1, -1, -1):
            c, digits[:, i] = np.divmod(c, self.base)
        chars = np.array([""] + list(self.alphabet), dtype=object)
        out = np.empty(codes.size, dtype=object)
        out[:] = ["".join(r) for r in chars[digits].tolist()] if codes.size else []
        return out


def split_counts(counts: np.ndarray, n_groups: int, rng) -> np.ndarray:
    """(D × G) counts of each item's users in each of G groups, every user in a uniform group
    independently: row d ~ Multinomial(counts[d], 1/G each) — the law of the per-user path's
    ``rng.integers(0, G)`` group choice."""
    return rng.multinomial(np.asarray(counts, dtype=np.int64), np.full(n_groups, 1.0 / n_groups))


def grouped_counts(codes: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct codes, summed weights) of the codes with positive total weight."""
    uniq, inv = np.unique(codes, return_inverse=True)
    total = np.bincount(inv.ravel(), weights=np.asarray(weights).ravel(), minlength=uniq.size)
    keep = total > 0
    return uniq[keep], np.rint(total[keep]).astype(np.int64)


def word_rows(protocol, true_counts, items) -> tuple[np.ndarray, np.ndarray]:
    """(padded symbol rows of the distinct ``items``, their summed true counts) for a direct sampler."""
    if items is None:
        raise ValueError(f"{protocol.name}: 'items' (the words) is required by sample_aggregate.")
    rows, inv = protocol.codec.symbols(items)
    counts = check_counts(protocol.name, true_counts, inv.size)
    return rows, np.bincount(inv, weights=counts, minlength=rows.shape[0]).astype(np.int64)


def top(codes: np.ndarray, estimates: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``keep`` codes with the largest estimates, largest first (ties: smaller code first)."""
    order = np.lexsort((codes, -estimates))[:keep]
    return codes[order], estimates[order]


#: (row, key) pairs per block of the sketch queries: the block's temporaries stay in cache
_PAIRS = 1 << 16


def sketch_sums(family: HashFamily, table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Σ_l table[l, h_l(key)] for each 64-bit key (table: k rows of ≥ m columns, C-contiguous),
    vectorized over blocks of (row, key) pairs. A stack of P such tables (P × k × columns) gives the
    P × keys sums of every table, the keys hashed once.

    The hash is :meth:`HashFamily.evaluate`'s, written out so that each block of ≈ 2^16 (row, key)
    pairs — every row of a block of keys — stays in cache and the sum over rows runs along contiguous
    rows: g_l = (A_l·x₀ + B_l·x₁ + C_l) mod 2^64 with x₀, x₁ the key's 32-bit halves (x₁ = 0 for keys
    below 2^32 — SFP's fragment tokens, short prefixes — whose B_l term is skipped), then
    ⌊(g_l >> 32)·m / 2^32⌋, which for m = 2^w is g_l >> (64 − w). How the tables are read:
    :func:`_stack_sums`.
    """
    keys = np.asarray(keys, dtype=np.uint64)
    low, high = keys & np.uint64(0xFFFFFFFF), keys >> np.uint64(32)
    wide = bool(high.any())
    a, b, c = family.row_params

    def blocks(rows, step):
        for k0 in range(0, keys.size, step):
            block = slice(k0, k0 + step)
            v = a[rows, None] * low[None, block]
            if wide:
                v += b[rows, None] * high[None, block]
            v += c[rows, None]
            yield block, v

    return _stack_sums(family, table, keys.size, blocks)


def _stack_sums(family: HashFamily, table: np.ndarray, n_keys: int, blocks) -> np.ndarray:
    """The sums of :func:`sketch_sums` from ``blocks(rows, step)``, which yields (key slice, g) with
    g = A_l·x + … mod 2^64 of the block (rows × keys, uint64) for every key of the slice.

    Reading the tables: integer tables whose counts fit in int32 are read as int32 (half the memory
    traffic of the gathers; the sums stay int64). A stack of non-negative integer tables is packed:
    with w the bits of the largest possible sum (Σ_l of each row's largest cell, over the tables),
    ⌊63/w⌋ tables share one int64 word per cell, table i in bits [i·w, (i + 1)·w) — one gather and one
    sum per (row, key) serve them all, and no field's sum can carry into the next, so unpacking the
    summed words gives every table's sums exactly.
    """
    stack = table.reshape((-1,) + table.shape[-2:])           # (P, k, columns), P = 1 for one table
    total = np.zeros((stack.shape[0], n_keys), dtype=table.dtype)
    if not n_keys:
        return total.reshape(table.shape[:-2] + (0,))
    words, width, fields = _packed(stack)
    m, cols = family.m, stack.shape[2]
    power = m & (m - 1) == 0
    shift, s32, m64 = np.uint64(64 - (m.bit_length() - 1)), np.uint64(32), np.uint64(m)
    offset = np.arange(family.k, dtype=np.uint64) * np.uint64(cols)
    rows_step = min(family.k, _PAIRS)
    keys_step = max(1, _PAIRS // rows_step)
    sums = np.zeros((len(words), n_keys), dtype=total.dtype if fields == 1 else np.int64)
    with np.errstate(over="ignore"):
        for l0 in range(0, family.k, rows_step):
            rows = np.arange(l0, min(l0 + rows_step, family.k))
            off_l = offset[rows, None]
            for block, v in blocks(rows, keys_step):
                if power:
                    v >>= shift
                else:
                    v >>= s32
                    v *= m64
                    v >>= s32
                v += off_l
                cells = v.view(np.int64)
                for p, word in enumerate(words):
                    sums[p, block] += word.take(cells).sum(axis=0, dtype=sums.dtype)
    if fields == 1:
        return sums.reshape(table.shape[:-2] + (n_keys,))
    mask = (1 << width) - 1
    for p in range(stack.shape[0]):
        total[p] = (sums[p // fields] >> (width * (p % fields))) & mask
    return total.reshape(table.shape[:-2] + (n_keys,))


def _packed(stack: np.ndarray) -> tuple[list, int, int]:
    """(flat tables to gather from, field width w, tables per word) — :func:`_stack_sums`."""
    flats = stack.reshape(stack.shape[0], -1)
    if not (flats.size and np.issubdtype(flats.dtype, np.integer) and flats.min() >= 0):
        return list(flats), 0, 1
    width = int(stack.max(axis=2).sum(axis=1).max()).bit_length()
    fields = 63 // max(width, 1)
    if stack.shape[0] == 1 or fields < 2:
        return [f.astype(np.int32) if f.max() < 2 ** 31 else f for f in flats], width, 1
    words = []
    for g in range(0, stack.shape[0], fields):
        word = np.zeros(flats.shape[1], dtype=np.int64)
        for i, flat in enumerate(flats[g:g + fields]):
            word |= flat.astype(np.int64) << (width * i)
        words.append(word)
    return words, width, fields


@dataclass(frozen=True)
class CodeCMS(CMS):
    """:class:`~ldpsim.mechanisms.sketches.cms.CMS` whose tokens are non-negative int64 codes used directly as
    the 64-bit keys of its hash family (the family is strongly universal over any distinct 64-bit
    keys, so no mmh3 digest is needed); everything else — client, aggregate, estimate, theory and the
    exact direct sampler — is CMS's own."""

    def value_keys(self, values) -> np.ndarray:
        """The codes themselves as the family's keys (codes are integers already: no digest)."""
        arr = np.asarray(values)
        return np.asarray(arr.tolist() if arr.dtype == object else arr, dtype=np.int64).astype(np.uint64)

    def _query_sums(self, table: np.ndarray, items) -> np.ndarray:
        return sketch_sums(self.family, table, self.value_keys(items))

    def collision_fractions(self, items) -> np.ndarray:
        """γ[i, j] = share of the k rows where codes ``items[i]`` and ``items[j]`` hash alike (D × D)."""
        return self.family.key_collision_counts(self.value_keys(items)) / self.k

    def _collision_sums(self, items: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = self.collision_fractions(items)  # the codes are the keys (CMS's own hashes mmh3 digests)
        np.fill_diagonal(g, 0.0)
        return g @ f, (g * g) @ f

    def user_model(self) -> UserModel:
        """One user's term in an estimate (docs/math.md §1.5): w = m/(m−1)·(γ − 1/m),
        τ = (m/(m−1))²·((c_ε²−1)/4 + γ − γ²)."""
        r = self.m / (self.m - 1)
        return UserModel(self.family, r, 1.0 / self.m, (r * r * (self.c_eps ** 2 - 1) / 4, r * r, -r * r))


def cms_log_likelihood(cms: CodeCMS, bits: np.ndarray, row: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """log P[(bits_u, row_u) | token code_u] of CMS reports: −log k + (m − d)·log(1−f) + d·log f, d the
    number of bits that differ from the unflipped one-hot vector at h_row(code) (docs/math.md §1.5)."""
    pos = cms.family.evaluate(row, np.asarray(codes, dtype=np.int64).astype(np.uint64))
    onehot = np.zeros_like(bits)
    onehot[np.arange(bits.shape[0]), pos >> 3] = (0x80 >> (pos & 7)).astype(np.uint8)
    d = np.unpackbits(bits ^ onehot, axis=1, count=cms.m).sum(axis=1)
    return -math.log(cms.k) + (cms.m - d) * math.log(1 - cms.flip) + d * math.log(cms.flip)


class DiscoveryProtocol(Mechanism):
    """A protocol that finds frequent strings without a candidate list.

    Same client/server split as a frequency oracle: ``perturb(words, rng)`` → reports,
    ``aggregate(reports)`` → a mergeable :class:`~ldpsim.mechanisms.base.Aggregate` whose content does
    not depend on any candidate list, ``sample_aggregate(true_counts, rng, items)`` draws that aggregate
    from its exact law given the true word counts, ``encode``/``decode``/``report_bytes``; the server
    side is ``discover(agg, top_k)`` → :class:`DiscoveryResult`, a deterministic function of the
    aggregate (all the adaptivity of PEM/TreeHist lives there). ``epsilon`` is the ε-LDP guarantee of
    one user's whole report; ``privacy_parts()`` lists the parts it composes. ``bias``/``variance``/``mse``
    give the exact theory of the count reported for a discovered word (docs/math.md §7.4.1).
    """

    takes_tokens = True
    codec: WordCodec

    def perturb(self, values, rng=None):  # pragma: no cover - overridden
        """Privatize one word per user (the client side), vectorized over users.

        Parameters
        ----------
        values : sequence or 1-D array of str
            One word per user: 1 to ``length`` characters of the alphabet (:mod:`.words`).
        rng : int, SeedSequence, Generator or None

        Returns
        -------
        NamedTuple of arrays
            The protocol's reports (``*Reports``), one entry per user.
        """
        raise NotImplementedError

    def aggregate(self, reports):  # pragma: no cover - overridden
        """The server's mergeable, candidate-free aggregate of a batch of reports.

        Parameters
        ----------
        reports : the protocol's ``*Reports`` NamedTuple

        Returns
        -------
        Aggregate
            Adds with ``+`` to aggregates of other batches, days or shards.
        """
        raise NotImplementedError

    def sample_aggregate(self, true_counts, rng=None, items=None):  # pragma: no cover - overridden
        """Draw the aggregate of ``sum(true_counts)`` users from its exact law (the class docstring
        says how), without per-user reports.

        Parameters
        ----------
        true_counts : 1-D array of int
            Users holding each word of ``items``.
        rng : int, SeedSequence, Generator or None
        items : sequence of str
            The words (required).

        Returns
        -------
        Aggregate
            Distributed as ``aggregate(perturb(users))`` for those users.
        """
        raise NotImplementedError

    def encode(self, reports) -> bytes:  # pragma: no cover - overridden
        """Wire form: ``report_bytes`` bytes per report, concatenated.

        Parameters
        ----------
        reports : the protocol's ``*Reports`` NamedTuple

        Returns
        -------
        bytes
        """
        raise NotImplementedError

    def decode(self, payload: bytes):  # pragma: no cover - overridden
        """Inverse of :meth:`encode`; raises ``ValueError`` on a malformed payload.

        Parameters
        ----------
        payload : bytes
            A whole number of ``report_bytes``-byte reports.

        Returns
        -------
        NamedTuple of arrays
            The reports.
        """
        raise NotImplementedError

    def discover(self, agg, top_k: int = 20) -> DiscoveryResult:  # pragma: no cover - overridden
        """The server: the ``top_k`` most frequent strings found in ``agg``, with estimated counts.

        Parameters
        ----------
        agg : Aggregate
            Of this protocol (any merge of batches).
        top_k : int >= 1

        Returns
        -------
        DiscoveryResult
            ``words`` (most frequent first), ``counts`` (estimated users), ``n``.
        """
        raise NotImplementedError

    def perturb_aggregate(self, values, rng=None):
        """``aggregate(perturb(values, rng))`` (the population engine's per-user path).

        Parameters
        ----------
        values : 1-D array of str
        rng : int, SeedSequence, Generator or None

        Returns
        -------
        Aggregate
        """
        return self.aggregate(self.perturb(values, rng))

    # theory of the reported estimates ------------------------------------------------------------
    @property
    def estimate_groups(self) -> int:
        """Users are split uniformly over this many groups; the reported estimate uses the last one."""
        return 1

    def user_model(self) -> UserModel:  # pragma: no cover - overridden
        """The per-user terms of the final frequency oracle's estimate of a whole word."""
        raise NotImplementedError

    def _words(self, true_counts, items) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(full-word codes of the distinct ``items``, their summed counts, inverse)."""
        if items is None:
            raise ValueError(f"{self.name}: 'items' (the words) is required by bias and variance.")
        rows, inv = self.codec.symbols(items)
        counts = np.bincount(inv, weights=check_counts(self.name, true_counts, inv.size), minlength=rows.shape[0])
        if counts.sum() < 1:
            raise ValueError(f"{self.name}: 'true_counts' must hold at least one user; got {counts.sum():g}.")
        return self.codec.prefix_codes(rows, self.length), counts, inv

    def _theory(self, true_counts, items) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        codes, counts, inv = self._words(true_counts, items)
        bias, var = split_moments(counts, *self.user_model().moments(codes), self.estimate_groups)
        return bias[inv], var[inv], counts

    def bias(self, true_counts, items=None) -> np.ndarray:
        """E[estimate] − truth of the count ``discover`` reports for each of ``items`` when it is found
        (parameters, what is conditioned on: :meth:`variance`); zero on average over families."""
        return self._theory(true_counts, items)[0]

    def variance(self, true_counts, items=None) -> np.ndarray:
        """Exact variance of the count ``discover`` reports for each of ``items`` when it is found.

        Over the users' randomness (group split, hash choice, flips) for this hash family, given the
        true counts and a non-empty final group; docs/math.md §7.4.1.

        Parameters
        ----------
        true_counts : array_like of non-negative numbers
            Users holding each of ``items`` (the whole population).
        items : sequence of str
            The words (required), aligned with ``true_counts``.

        Returns
        -------
        numpy.ndarray of float
            Count-scale variance per word.
        """
        return self._theory(true_counts, items)[1]

    def mse(self, true_counts, items=None) -> np.ndarray:
        """variance + bias² (parameters of :meth:`variance`)."""
        bias, var, _ = self._theory(true_counts, items)
        return var + bias ** 2

    def family_averaged_mse(self, true_counts, items=None) -> np.ndarray:
        """Mean squared error of the reported count over random hash families as well (a fresh
        ``seed``), for an ideal family (:meth:`UserModel.family_averaged`); parameters of :meth:`variance`."""
        _, counts, inv = self._words(true_counts, items)
        return self.user_model().family_averaged(counts, self.estimate_groups)[inv]

    def privacy_parts(self) -> dict[str, float]:  # pragma: no cover - overridden
        """Part name → the largest log likelihood ratio of that part between two inputs."""
        raise NotImplementedError

    def log_likelihood(self, reports, values) -> np.ndarray:  # pragma: no cover - overridden
        """log P[report_u | word values_u] per user, from the mechanism's own probabilities."""
        raise NotImplementedError
