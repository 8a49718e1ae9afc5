"""Prefix-tree heavy hitters with adaptive segments, adaptive thresholds and a deny list — after Chadha,
Chen, Duchi, Feldman, Hashemi, Javidbakht, McMillan, Talwar, "Differentially Private Heavy Hitter
Detection using Federated Analytics", SaTML 2024 (arXiv 2307.11749); docs/math.md §10.7.

Words are the padded symbol sequences of :mod:`.words`. A pass has ``rounds`` rounds; every device
answers every round. Round r, with the trie T of live prefixes, all of length ℓ:

* **segment** (:meth:`PrefixTree.segment`): the server extends every prefix by the largest number s of
  symbols (1 ≤ s ≤ L − ℓ) whose candidate set C = all s-symbol extensions of T stays within
  ``max_candidates`` — the communication cap (a report is |C| + 1 bits) and the server's computation.
  Short tries jump several symbols in one round. The number of rounds is chosen so that a pass reaches
  every word length the codec allows even when every round's trie is full (:meth:`PrefixTree.reach`);
  a ``rounds`` too small for that is refused, naming the lengths it would reach.
* **client**: each device's category is the candidate its word starts with, or "none" when its
  ℓ-prefix left the trie or its word is on the deny list (data selection: a device reports only a word
  not found before). It reports the category through optimized unary encoding
  (:class:`~ldpsim.mechanisms.frequency.oue.OUE`, docs/math.md §7.1) over |C| + 1 bits at ε per round.
* **aggregation**: secure aggregation of the bit vectors is their column sums — OUE's aggregate, drawn
  exactly on the direct path: c_j = Bin(N_j, ½) + Bin(n − N_j, q), q = 1/(e^ε + 1).
* **server** (:meth:`PrefixTree.threshold_count`): a candidate held by nobody has c_j ~ Bin(n, q)
  exactly, so the server keeps the candidates with c_j ≥ t, t the smallest count with
  |C|·P[Bin(n, q) ≥ t] ≤ φ/R (φ = ``false_discoveries``, R = ``rounds``) — at most φ invented words per
  run on average, whatever n, ε and |C| (docs/math.md §10.10). At most ``survivors`` (largest
  estimates) stay, the others counted in ``TrieResult.dropped``; those ending in ∅, and all at length L,
  are words; a word's estimate is OUE's unbiased (c_j − nq)/(½ − q).

Codes: a live prefix p of length ℓ is kept as its word code padded with ∅ to L (p·b^{L−ℓ}); it holds no
∅, so ℓ is L minus its trailing ∅ digits. A round's tally is a (2, k) array: padded codes and the
round's prefix length ℓ + s.

**Repeated runs** (:meth:`PrefixTree.runs_with_deny_list`): each run adds the words it found to the deny
list of the next, so later runs report other words.

**Devices with several words** (:meth:`PrefixTree.run_profiles`): a device reports one of its eligible
words (prefix in the trie, not denied), a random one weighted by how often it typed it or its most typed
one, ties uniformly at random (``selection``: the contribution-bounding family of
:mod:`ldpsim.mechanisms.bounding`, one word per device); a denied word's device then reports another
word. Devices of one profile choose independently, so a round's category counts are a sum of multinomials — drawn exactly.

**Privacy.** Local: a round's report is ε-LDP (OUE's largest likelihood ratio ½(1 − q)/(q·½) = e^ε,
attained, "none" included; :meth:`PrefixTree.privacy_parts`), R rounds R·ε, pure — whatever the server
sees. Aggregate: the server sees only the sum of a round's n reports, a function of the shuffled
reports, so the round is also central (ε_c, δ)-DP by amplification by shuffling
(:func:`ldpsim.evaluation.privacy.secagg_rounds.round_guarantees`).

>>> t = PrefixTree(epsilon=4.0, length=3, alphabet="ab", rounds=2, max_candidates=16, survivors=4)
>>> sorted(t.run(items=["ab", "b"], true_counts=[3000, 2000], rng=2).words.tolist())
['ab', 'b']
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int
from ldpsim.mechanisms.bounding import BOUNDING, ContributionBound
from ldpsim.mechanisms.discovery.false_discoveries import DEFAULT_FALSE_DISCOVERIES, check_rate, count_threshold
from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from ldpsim.mechanisms.discovery.triehh import TrieHH, TrieResult
from ldpsim.mechanisms.discovery.words import DEFAULT_ALPHABET, WordCodec, top
from ldpsim.mechanisms.frequency.oue import OUE
from ldpsim.runtime.errors import InputError


#: the default ``max_candidates`` when survivors·b is smaller: 2¹⁶ candidates, an 8 KiB report a round
MAX_CANDIDATES = 1 << 16


@dataclass(frozen=True)
class PrefixTree(TrieHH):
    """Prefix-tree heavy hitters with adaptive segments and thresholds (module docstring).

    Parameters
    ----------
    epsilon : float in (0, inf)
        ε of one round's report (local).
    length : int in [2, L_max]
        Longest word, in symbols.
    alphabet : str, or sequence of str (graphemes; see :class:`~.words.WordCodec`)
    rounds : int in [1, L], optional
        Rounds in a pass; default the fewest that reach words of L symbols (:meth:`reach`). Fewer are
        refused (an ``InputError`` naming the word lengths they reach).
    max_candidates : int ≥ survivors·b, optional
        Most candidates a round may ask about (report bits − 1); default max(2¹⁶, survivors·b), so that
        one symbol always fits whatever the alphabet's size.
    survivors : int ≥ 1
        At most this many prefixes survive a round.
    false_discoveries : float in (0, inf)
        Expected invented words (typed by no device) per run, at most; default 0.05 (docs/math.md §10.10).
    deny : tuple of str
        Words no device reports (found by earlier runs).
    selection : {"random", "top"}
        Which of its eligible words a device with several reports (:meth:`choice_probabilities`).
    """

    epsilon: float = 1.0
    gamma: float = 1.0
    theta: int = 1
    length: int = 8
    alphabet: str | tuple = DEFAULT_ALPHABET
    rounds: int | None = None
    max_candidates: int | None = None
    survivors: int = 64
    false_discoveries: float = DEFAULT_FALSE_DISCOVERIES
    deny: tuple = ()
    selection: str = "random"
    codec: WordCodec = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        super().__post_init__()
        name = self.name
        object.__setattr__(self, "epsilon", check_epsilon(name, self.epsilon))
        object.__setattr__(self, "survivors", check_int(name, "survivors", self.survivors, low=1))
        fits = self.survivors * self.codec.base  # a full trie's one-symbol extensions
        if self.max_candidates is None:
            object.__setattr__(self, "max_candidates", max(MAX_CANDIDATES, fits))
        elif check_int(name, "max_candidates", self.max_candidates, low=1) < fits:
            raise InputError(f"{name}: 'max_candidates' must be at least survivors·b = {self.survivors}·"
                             f"{self.codec.base} = {fits} (a round must fit one symbol after every live prefix "
                             f"of an alphabet of {self.codec.base - 1} symbols); got {self.max_candidates}. "
                             f"Leave it unset (default max({MAX_CANDIDATES}, survivors·b)), raise it, or lower "
                             f"'survivors'.")
        needed = next(r for r in range(1, self.length + 1) if self.reach(r) == self.length)
        if self.rounds is None:
            object.__setattr__(self, "rounds", needed)
        elif check_int(name, "rounds", self.rounds, low=1, high=self.length) < needed:
            depth = self.reach(self.rounds)
            raise InputError(f"{name}: with rounds = {self.rounds}, a pass whose tries hold survivors = "
                             f"{self.survivors} prefixes reaches prefixes of {depth} symbols (alphabet of "
                             f"{self.codec.base - 1} symbols, max_candidates = {self.max_candidates}), so it finds "
                             f"words of 1 to {depth - 1} symbols only; the codec allows words of up to "
                             f"{self.length}. Leave 'rounds' unset (the fewest that reach them all: {needed}), "
                             f"pass rounds >= {needed}, or a smaller 'length'.")
        object.__setattr__(self, "false_discoveries", check_rate(name, self.false_discoveries))
        object.__setattr__(self, "deny", tuple(self.deny))
        if self.selection not in BOUNDING:
            raise InputError(f"{name}: 'selection' must be 'random' or 'top'; got {self.selection!r}.")
        if self.gamma != 1.0 or self.theta != 1:
            raise InputError(f"{name}: every device answers every round (gamma = 1, theta = 1); got "
                             f"gamma = {self.gamma}, theta = {self.theta}.")

    # the server's plan of a round ------------------------------------------------------------------
    def depth(self, trie: np.ndarray) -> int:
        """ℓ, the length of the trie's prefixes (all equal): L minus the trailing ∅ digits of one code."""
        code, zeros = int(trie[0]), 0
        if code == 0:
            return 0
        while code % self.codec.base == 0:
            code //= self.codec.base
            zeros += 1
        return self.length - zeros

    def extensions(self, depth: int, s: int) -> int:
        """Number of s-symbol extensions of one length-``depth`` prefix: Σ_j (b − 1)^j over the j letters
        before ∅ fills the rest (j ≥ 1 at the root: no word is empty)."""
        return sum((self.codec.base - 1) ** j for j in range(1 if depth == 0 else 0, s + 1))

    def reach(self, rounds: int) -> int:
        """The prefix length a pass of ``rounds`` rounds reaches whatever the data: round 1 extends the root,
        every later round a trie of at most ``survivors`` prefixes. A smaller trie takes segments at least
        as long, and ℓ + s = min(L, ℓ + s_free) grows with ℓ, so a real pass is never behind this one."""
        depth = 0
        for r in range(rounds):
            if depth == self.length:
                break
            depth += self.segment(1 if r == 0 else self.survivors, depth)
        return depth

    def segment(self, size: int, depth: int) -> int:
        """s: the most symbols (≤ L − ``depth``) whose candidates for ``size`` prefixes fit ``max_candidates``."""
        for s in range(self.length - depth, 1, -1):
            if size * self.extensions(depth, s) <= self.max_candidates:
                return s
        return 1

    def candidates(self, trie: np.ndarray) -> tuple[np.ndarray, int]:
        """(the round's candidate codes, padded to L and sorted; their length ℓ + s)."""
        depth = self.depth(trie)
        s = self.segment(trie.size, depth)
        b, letters = self.codec.base, np.arange(1, self.codec.base, dtype=np.int64)
        runs = [np.zeros(1, dtype=np.int64)]  # letter runs of length j = 0..s
        for _ in range(s):
            runs.append((runs[-1][:, None] * b + letters).ravel())
        offsets = np.sort(np.concatenate([runs[j] * b ** (s - j) for j in range(1 if depth == 0 else 0, s + 1)]))
        step = b ** (self.length - depth - s)
        return np.add.outer(np.sort(trie), offsets * step).ravel(), depth + s

    @property
    def tests(self) -> int:
        """R, the rounds of a run whose tests share ``false_discoveries`` (one pass)."""
        return self.rounds

    def threshold_count(self, n: int, n_candidates: int) -> int:
        """t: the smallest count with n_candidates·P[Bin(n, q) ≥ t] ≤ φ/R (module docstring)."""
        return count_threshold(n, self.oracle(1).q, n_candidates, self.false_discoveries / self.tests)

    def oracle(self, n_candidates: int) -> OUE:
        """The round's randomizer: OUE over the candidates and "none"."""
        return OUE(self.epsilon, int(n_candidates) + 1)

    # client ----------------------------------------------------------------------------------------
    def categories(self, rows: np.ndarray, trie: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
        """(candidates, their length m, each row's category: its candidate's index, or "none" = |C|)."""
        candidates, m = self.candidates(trie)
        code = self.codec.prefix_codes(rows, m) * self.codec.base ** (self.length - m)
        pos = np.minimum(np.searchsorted(candidates, code), candidates.size - 1)
        held = candidates[pos] == code
        if self.deny:
            held &= ~np.isin(self.codec.prefix_codes(rows, self.length), self.codec.word_codes(self.deny)[0])
        return candidates, m, np.where(held, pos, candidates.size)

    def vote(self, rows: np.ndarray, trie: np.ndarray, level: int, rng=None) -> np.ndarray:
        """Each device's OUE report (bit-packed rows) for the round."""
        candidates, _, cat = self.categories(rows, trie)
        return self.oracle(candidates.size).perturb(cat, as_generator(rng))

    # aggregate -------------------------------------------------------------------------------------
    def direct_aggregate(self, rows: np.ndarray, counts: np.ndarray, trie: np.ndarray, rng=None):
        """(candidates, m, the round's OUE aggregate drawn exactly from the category counts)."""
        candidates, m, cat = self.categories(rows, trie)
        per_cat = np.bincount(cat, weights=counts, minlength=candidates.size + 1).astype(np.int64)
        return candidates, m, self.oracle(candidates.size).sample_aggregate(per_cat, as_generator(rng))

    def device_aggregate(self, rows: np.ndarray, trie: np.ndarray, rng=None):
        """(candidates, m, the round's OUE aggregate of every device's own report)."""
        candidates, m, cat = self.categories(rows, trie)
        return candidates, m, self.oracle(candidates.size).perturb_aggregate(cat, as_generator(rng))

    # server ----------------------------------------------------------------------------------------
    def read(self, candidates: np.ndarray, m: int, agg) -> tuple[np.ndarray, np.ndarray]:
        """((2, k) tally: codes and length of the candidates whose count reaches the threshold; estimates)."""
        keep = agg.data[:-1] >= self.threshold_count(agg.n, candidates.size)
        est = self.oracle(candidates.size).estimate(agg)[:-1]
        return np.vstack([candidates[keep], np.full(int(keep.sum()), m, dtype=np.int64)]), est[keep]

    def sample_votes(self, rows, counts, trie, level, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """The round read from its exactly drawn aggregate (the direct path); an empty trie asks nothing."""
        if not trie.size:
            return np.zeros((2, 0), dtype=np.int64), np.zeros(0)
        return self.read(*self.direct_aggregate(rows, counts, trie, rng))

    def device_votes(self, rows, trie, level, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """The round read from every device's own OUE report (the per-device path)."""
        if not trie.size:
            return np.zeros((2, 0), dtype=np.int64), np.zeros(0)
        return self.read(*self.device_aggregate(rows, trie, rng))

    def advance(self, codes: np.ndarray, votes: np.ndarray, level: int):
        """(next trie, completed word codes, their estimates): the ``survivors`` largest estimates stay;
        those whose last symbol is ∅, and all at length L, are words (largest first)."""
        if not codes.shape[1]:
            return codes[0], codes[0], votes
        m = int(codes[1, 0])
        kept, votes = top(codes[0], votes, self.survivors)
        last = kept // self.codec.base ** (self.length - m) % self.codec.base
        done = (last == 0) | (m == self.length)
        return np.sort(kept[~done]), kept[done], votes[done]

    def decode_found(self, codes: np.ndarray, level: int) -> np.ndarray:
        """The words of completed codes (padded to L whatever the round)."""
        return self.codec.decode(codes, self.length)

    estimates = LDPTrie.estimates
    privacy = LDPTrie.privacy
    passing = LDPTrie.passing
    false_bound = LDPTrie.false_bound

    def privacy_parts(self) -> dict[str, float]:
        """ε of one round's report: OUE's log(p(1 − q)/(q(1 − p))) (exactly ε for any number of candidates)."""
        return {"round": self.oracle(1).epsilon_report}

    # devices with several words ------------------------------------------------------------------------
    def choice_probabilities(self, rows: np.ndarray, holdings: np.ndarray, trie: np.ndarray):
        """(candidates, m, P × (|C| + 1) chance that a device of each profile reports each category).

        ``holdings[p, w]``: how often a device of profile p typed word w (``rows``). Only eligible words
        count (a prefix in the trie, not denied). ``selection`` "random": a device reports one of its
        eligible words with chance ∝ how often it typed it; "top": its most typed eligible word, ties
        uniformly at random; with no eligible word, "none". Both are the contribution-bounding family's
        law with one word per device (:meth:`~ldpsim.mechanisms.bounding.ContributionBound.inclusion`,
        docs/math.md §8.7).
        """
        candidates, m, cat = self.categories(rows, trie)
        h = np.asarray(holdings, dtype=float) * (cat < candidates.size)
        bound = ContributionBound(l0=1, sampler=BOUNDING[self.selection])
        share = bound.inclusion(np.repeat(np.arange(h.shape[0]), h.shape[1]), h.ravel()).reshape(h.shape)
        probs = np.zeros((h.shape[0], candidates.size + 1))
        np.add.at(probs.T, cat, share.T)
        probs[:, -1] += ~(h > 0).any(axis=1)
        return candidates, m, probs

    def profile_aggregate(self, rows, holdings, devices, trie, rng=None):
        """(candidates, m, the round's OUE aggregate drawn exactly): the category counts are
        Σ_p Multinomial(devices_p, choice probabilities of p), then OUE's column sums given them."""
        rng = as_generator(rng)
        candidates, m, probs = self.choice_probabilities(rows, holdings, trie)
        per_cat = rng.multinomial(np.asarray(devices, dtype=np.int64), probs).sum(axis=0)
        return candidates, m, self.oracle(candidates.size).sample_aggregate(per_cat, rng)

    def profile_device_aggregate(self, rows, holdings, profile, trie, rng=None):
        """(candidates, m, the OUE aggregate of devices that each pick their own word): device i has
        profile ``profile[i]`` and draws its category from that profile's choice probabilities."""
        rng = as_generator(rng)
        candidates, m, probs = self.choice_probabilities(rows, holdings, trie)
        cum = probs.cumsum(axis=1)[np.asarray(profile)]
        cat = np.minimum((rng.random(cum.shape[0])[:, None] >= cum).sum(axis=1), candidates.size)
        return candidates, m, self.oracle(candidates.size).perturb_aggregate(cat, rng)

    def run_profiles(self, items, holdings, devices=None, rng=None, *, per_device: bool = False) -> TrieResult:
        """One pass over devices with several words: ``holdings`` (P × words) per profile, ``devices``
        devices of each profile (direct path), or with ``per_device`` every row one device."""
        rng = as_generator(rng)
        rows, inv = self.codec.symbols(items)
        h = np.zeros((len(holdings), rows.shape[0]))
        np.add.at(h.T, inv, np.asarray(holdings, dtype=float).T)  # a word listed twice adds up

        def tally(trie, level):
            if not trie.size:
                return np.zeros((2, 0), dtype=np.int64), np.zeros(0)
            if per_device:
                return self.read(*self.profile_device_aggregate(rows, h, np.arange(h.shape[0]), trie, rng))
            return self.read(*self.profile_aggregate(rows, h, devices, trie, rng))

        return self.walk(tally)

    # repeated runs -----------------------------------------------------------------------------------
    def runs_with_deny_list(self, items, counts_by_run, rng=None) -> list[TrieResult]:
        """One run per row of ``counts_by_run`` (holders of each of ``items`` in that run; direct path),
        each with the words found by the runs before it added to the deny list."""
        rng = as_generator(rng)
        results, proto = [], self
        for counts in np.atleast_2d(np.asarray(counts_by_run)):
            res = proto.run(items=items, true_counts=counts, rng=rng)
            results.append(res)
            proto = replace(proto, deny=proto.deny + tuple(res.words.tolist()))
        return results
