"""TrieHH: interactive prefix-tree discovery by sampled votes above a threshold — Zhu, Kairouz,
McMahan, Sun, Li, "Federated Heavy Hitters Discovery with Differential Privacy", AISTATS 2020
(arXiv 1902.08534); docs/math.md §10.1–§10.2.

Words are padded symbol sequences (:mod:`.words`): ∅ ends a word, so the prefix "ab∅" *is* the
complete word "ab". Round r = 1..L:

* **client** (:meth:`TrieHH.vote`): each device takes part independently with probability γ
  (Poisson sampling); a sampled device whose word's prefix of length r − 1 is in the trie sends
  one vote for its prefix of length r (its code, :meth:`WordCodec.prefix_codes`); others send nothing.
* **aggregation**: the server sees only the number of votes per prefix — secure aggregation of
  one-hot votes is exactly this sum, so the model is the counts.
* **server** (:meth:`TrieHH.advance`): the prefixes with at least θ votes survive; those ending
  in ∅ (or of length L) are discovered words and leave the trie, the rest are the next trie.

**Direct path (exact).** Given the trie, the devices eligible to vote for prefix p are the N_p
holders of a word starting with p whose (r − 1)-prefix is in the trie; under Poisson sampling each
votes independently with probability γ, so V_p ~ Bin(N_p, γ), independent over prefixes
(:meth:`TrieHH.sample_votes`) — the law of :meth:`TrieHH.vote` summed. Rounds use fresh sampling,
so the whole walk has the per-user path's law.

**Privacy** (:meth:`TrieHH.privacy`): a device votes at most once per round for one prefix; one
round publishes which prefixes reached θ, which is (ε, δ(ε))-DP with the exact δ of
:func:`~.threshold_privacy.round_delta` (add/remove one device, central: what the server and
anyone reading the trie learn); L rounds compose. It is not an LDP guarantee: a vote is the
device's true prefix.

>>> t = TrieHH(gamma=0.5, theta=20, length=4, alphabet="abc")
>>> t.run(items=["ab", "cab", "b"], true_counts=[400, 300, 10], rng=1).words.tolist()
['ab', 'cab']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_int, check_real
from ldpsim.mechanisms.discovery.threshold_privacy import run_privacy
from ldpsim.mechanisms.discovery.words import DEFAULT_ALPHABET, WordCodec, grouped_counts


class TrieResult(NamedTuple):
    """What :meth:`TrieHH.run` returns: the discovered words, with their votes and estimates, how many
    invented words (typed by no device) to expect among them, and how many live prefixes were dropped."""

    words: np.ndarray     #: object array of str, in the order found (round, then most votes)
    votes: np.ndarray     #: the votes each word had in the round that completed it (LDPTrie: estimates)
    counts: np.ndarray    #: float, estimated holders (NaN where the protocol publishes none)
    trie_sizes: np.ndarray  #: int64, prefixes alive after each round
    #: expected invented words per run, an upper bound (docs/math.md §10.10; 0 for TrieHH: votes are true prefixes)
    expected_false: float = 0.0
    #: prefixes that passed a round's test but were cut (``survivors``) or still alive after the last round
    dropped: int = 0


@dataclass(frozen=True)
class TrieHH:
    """TrieHH over words of at most ``length`` symbols (module docstring).

    Parameters
    ----------
    gamma : float in (0, 1]
        A device's chance of taking part in one round (Poisson sampling).
    theta : int ≥ 1
        Votes a prefix needs to survive a round.
    length : int in [2, L_max]
        Longest word, in symbols; also the number of rounds L.
    alphabet : str, or sequence of str (graphemes; see :class:`~.words.WordCodec`)
    """

    gamma: float
    theta: int = 15
    length: int = 8
    alphabet: str | tuple = DEFAULT_ALPHABET
    codec: WordCodec = field(init=False, repr=False, compare=False)

    #: whether a round publishes the counts of the surviving prefixes (TrieHH: only the set)
    counts_released: ClassVar[bool] = False

    def __post_init__(self):
        name = type(self).__name__
        object.__setattr__(self, "gamma", check_real(name, "gamma", self.gamma, 0.0, 1.0, high_open=False))
        object.__setattr__(self, "theta", check_int(name, "theta", self.theta, low=1))
        object.__setattr__(self, "codec", WordCodec(self.alphabet, self.length))

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def rounds(self) -> int:
        """L: one round per symbol."""
        return self.length

    def root(self) -> np.ndarray:
        """The trie before round 1: the empty prefix (code 0)."""
        return np.zeros(1, dtype=np.int64)

    # client ------------------------------------------------------------------------------------
    def vote(self, rows: np.ndarray, trie: np.ndarray, level: int, rng=None) -> np.ndarray:
        """One round's votes of devices with padded symbol ``rows`` (n × L, :meth:`WordCodec.symbols`):
        the length-``level`` prefix code of each sampled, eligible device, −1 for the others."""
        rng = as_generator(rng)
        sampled = rng.random(rows.shape[0]) < self.gamma
        eligible = np.isin(self.codec.prefix_codes(rows, level - 1), trie)
        return np.where(sampled & eligible, self.codec.prefix_codes(rows, level), -1)

    @staticmethod
    def tally(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(prefix codes, votes) summed over devices: what secure aggregation gives the server."""
        return np.unique(votes[votes >= 0], return_counts=True)

    def device_votes(self, rows: np.ndarray, trie: np.ndarray, level: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """One round's tally from every device's own answer (the per-device path)."""
        return self.tally(self.vote(rows, trie, level, rng))

    # direct path -------------------------------------------------------------------------------
    def sample_votes(self, rows: np.ndarray, counts: np.ndarray, trie: np.ndarray, level: int,
                     rng=None) -> tuple[np.ndarray, np.ndarray]:
        """One round's tally drawn exactly: V_p ~ Bin(N_p, γ) (module docstring), from the distinct
        words' ``rows`` and their holders ``counts``; prefixes with no vote are left out."""
        rng = as_generator(rng)
        eligible = np.isin(self.codec.prefix_codes(rows, level - 1), trie)
        codes, n_p = grouped_counts(self.codec.prefix_codes(rows[eligible], level), counts[eligible])
        votes = rng.binomial(n_p, self.gamma)
        keep = votes > 0
        return codes[keep], votes[keep]

    # server ------------------------------------------------------------------------------------
    def advance(self, codes: np.ndarray, votes: np.ndarray, level: int):
        """(next trie, completed word codes, their votes): prefixes with ≥ θ votes survive; those
        ending in ∅, and all of them at level L, are complete words (longest votes first)."""
        keep = votes >= self.theta
        codes, votes = codes[keep], votes[keep]
        done = (codes % self.codec.base == 0) | (level == self.rounds)
        order = np.lexsort((codes[done], -votes[done]))
        return codes[~done], codes[done][order], votes[done][order]

    def passing(self, codes: np.ndarray, votes: np.ndarray) -> int:
        """How many of a round's tallied prefixes pass its test (TrieHH: ≥ θ votes); those that pass but do
        not enter the next trie or the words are dropped (:meth:`walk` counts them)."""
        return int((np.asarray(votes) >= self.theta).sum())

    def false_bound(self) -> float:
        """Expected invented words per run: 0 — every vote is a device's true prefix, so every survivor
        of the last round that completes it is a word some device typed (docs/math.md §10.10)."""
        return 0.0

    def decode_found(self, codes: np.ndarray, level: int) -> np.ndarray:
        """The words of the codes completed in round ``level`` (prefix codes of ``level`` symbols)."""
        return self.codec.decode(codes, level)

    def estimates(self, votes: np.ndarray) -> np.ndarray:
        """Holders estimated from a completed word's votes: TrieHH publishes no counts (NaN)."""
        return np.full(np.shape(votes), np.nan)

    def run(self, values=None, rng=None, *, items=None, true_counts=None) -> TrieResult:
        """All L rounds over one fleet: per device from ``values`` (one word each), or drawn
        exactly from ``items`` and ``true_counts`` (the direct path)."""
        rng = as_generator(rng)
        if values is not None:
            rows, inv = self.codec.symbols(values)
            rows = rows[inv]
        elif items is None:
            raise ValueError(f"{self.name}.run: pass the devices' words as 'values', or 'items' with 'true_counts'.")
        else:
            rows, inv = self.codec.symbols(items)
            counts = np.bincount(inv, weights=check_counts(self.name, true_counts, inv.size),
                                 minlength=rows.shape[0]).astype(np.int64)
        if values is not None:
            return self.walk(lambda trie, level: self.device_votes(rows, trie, level, rng))
        return self.walk(lambda trie, level: self.sample_votes(rows, counts, trie, level, rng))

    def walk(self, tally) -> TrieResult:
        """The rounds of one pass from the root, ``tally(trie, level)`` giving each round's (codes, votes)."""
        trie, words, votes, sizes, dropped = self.root(), [], [], [], 0
        for level in range(1, self.rounds + 1):
            codes, v = tally(trie, level)
            trie, done, done_votes = self.advance(codes, v, level)
            dropped += self.passing(codes, v) - trie.size - done.size
            words.append(self.decode_found(done, level))
            votes.append(done_votes)
            sizes.append(trie.size)
        votes = np.concatenate(votes)
        return TrieResult(np.concatenate(words), votes, self.estimates(votes), np.array(sizes, dtype=np.int64),
                          self.false_bound(), dropped + int(trie.size))

    # privacy -----------------------------------------------------------------------------------
    def privacy(self, epsilon_device: float, rounds: int | None = None) -> dict[str, float]:
        """(ε, δ) per device over ``rounds`` rounds (default L) at total ε, basic composition of
        the exact per-round δ(ε/R) (:func:`~.threshold_privacy.run_privacy`); central, add/remove."""
        rounds = self.rounds if rounds is None else rounds
        return run_privacy(epsilon_device, self.gamma, self.theta, rounds, self.counts_released)

    def threshold_for(self, epsilon_device: float, delta_total: float, rounds: int | None = None) -> int:
        """The smallest θ whose run over ``rounds`` rounds is (ε, δ)-DP per device (at this γ).

        δ falls as θ grows (a larger threshold releases less), so θ is found by doubling and then
        bisection (about 2·log₂ θ evaluations instead of θ); the θ returned always meets δ, and θ − 1
        does not."""
        delta_total = check_real(self.name, "delta_total", delta_total, 0.0, 1.0)
        rounds = self.rounds if rounds is None else rounds

        def meets(theta: int) -> bool:
            return run_privacy(epsilon_device, self.gamma, theta, rounds, self.counts_released)["delta"] <= delta_total

        high = 1
        while high < 10_000 and not meets(high):
            high *= 2
        if high < 10_000 or meets(min(high, 9_999)):
            low, high = high // 2, min(high, 9_999)       # meets(high); not meets(low) (or low = 0)
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (low, mid) if meets(mid) else (mid, high)
            return high
        raise ValueError(f"{self.name}: no threshold θ < 10000 reaches δ = {delta_total:g} at ε = "
                         f"{epsilon_device:g} over {rounds} rounds with gamma = {self.gamma:g}.")

