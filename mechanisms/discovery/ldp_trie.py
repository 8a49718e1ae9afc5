"""A prefix tree grown with locally randomized votes summed by secure aggregation — after Gboard's
private discovery of new words (arXiv 2404.11607); docs/math.md §10.5.

The rounds of :class:`~.triehh.TrieHH`, but every device answers every round with local noise, so the
guarantee is pure ε-LDP per round, whatever the server or the aggregation does:

* **candidates**: round r's candidates C_r are all one-symbol extensions of the trie's prefixes
  (:meth:`WordCodec.extend`), plus one category "none" (index |C_r|) for a device whose
  (r − 1)-prefix is not in the trie — it must answer too, or its silence would tell.
* **client**: each device reports its category through k-ary randomized response
  (:class:`~ldpsim.mechanisms.frequency.grr.GRR`, docs/math.md §1.2) over D = |C_r| + 1 values at
  ε per round.
* **aggregation**: secure aggregation of one-hot reports is the vector of output counts — GRR's
  aggregate; the direct path draws it exactly from the category counts (``GRR.sample_aggregate``).
* **server**: a candidate nobody holds has the output count c ~ Bin(n, q) exactly, so a candidate
  survives when its count reaches t_r, the smallest count with |C_r|·P[Bin(n, q) ≥ t_r] ≤ φ/R
  (φ = ``false_discoveries``, R the run's rounds; docs/math.md §10.10): the run publishes at most φ
  invented words on average, however many candidates its rounds test. At most ``survivors`` of them
  stay (largest unbiased estimates (c − n·q)/(p − q) first; the others are counted in
  ``TrieResult.dropped``); completed words leave the trie as in TrieHH.

Privacy: ε-LDP per round (GRR's ratio p/q = e^ε exactly, :meth:`LDPTrie.privacy_parts`); a device
answers every round, so R rounds cost R·ε, pure (δ = 0). Secure aggregation and the threshold only
post-process; their further (central) protection is counted by :class:`~.gboard_trie.GboardTrie`, which
adds Gboard's device samplers, passes and cohorts.

>>> t = LDPTrie(epsilon=6.0, length=3, alphabet="ab")
>>> sorted(t.run(items=["ab", "b"], true_counts=[3000, 2000], rng=2).words.tolist())
['ab', 'b']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int
from ldpsim.mechanisms.discovery.false_discoveries import DEFAULT_FALSE_DISCOVERIES, check_rate, count_threshold
from ldpsim.mechanisms.discovery.triehh import TrieHH
from ldpsim.mechanisms.discovery.words import DEFAULT_ALPHABET, WordCodec, top
from ldpsim.mechanisms.frequency.grr import GRR


@dataclass(frozen=True)
class LDPTrie(TrieHH):
    """Prefix-tree discovery with GRR votes in every round (module docstring).

    Parameters
    ----------
    epsilon : float in (0, inf)
        ε of one round's report.
    length : int in [2, L_max]
        Longest word, in symbols; also the number of rounds.
    alphabet : str, or sequence of str (graphemes; see :class:`~.words.WordCodec`)
    false_discoveries : float in (0, inf)
        Expected invented words (typed by no device) per run, at most; default 0.05 (docs/math.md §10.10).
    survivors : int ≥ 1
        At most this many prefixes survive a round.
    """

    epsilon: float = 1.0
    gamma: float = 1.0
    theta: int = 1
    length: int = 8
    alphabet: str | tuple = DEFAULT_ALPHABET
    false_discoveries: float = DEFAULT_FALSE_DISCOVERIES
    survivors: int = 64
    codec: WordCodec = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "epsilon", check_epsilon(self.name, self.epsilon))
        object.__setattr__(self, "false_discoveries", check_rate(self.name, self.false_discoveries))
        object.__setattr__(self, "survivors", check_int(self.name, "survivors", self.survivors, low=1))
        if self.gamma != 1.0 or self.theta != 1:
            raise ValueError(f"{self.name}: every device answers every round (gamma = 1, theta = 1); got "
                             f"gamma = {self.gamma}, theta = {self.theta}.")

    def oracle(self, candidates: np.ndarray) -> GRR:
        """The round's randomizer over the candidates and "none"."""
        return GRR(self.epsilon, int(candidates.size) + 1)

    def categories(self, rows: np.ndarray, trie: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(the round's candidate codes, sorted; each row's category: its candidate index, or "none")."""
        candidates = np.unique(self.codec.extend(trie, level - 1))
        code = self.codec.prefix_codes(rows, level)
        if candidates.size == 0:                       # an empty trie: no candidate, every row is "none"
            return candidates, np.zeros(np.shape(code), dtype=np.intp)
        pos = np.minimum(np.searchsorted(candidates, code), candidates.size - 1)
        # a prefix is a candidate exactly when its (level − 1)-prefix is in the trie
        return candidates, np.where(candidates[pos] == code, pos, candidates.size)

    def vote(self, rows: np.ndarray, trie: np.ndarray, level: int, rng=None) -> np.ndarray:
        """Each device's GRR report (a category index) for the round."""
        candidates, cat = self.categories(rows, trie, level)
        return self.oracle(candidates).perturb(cat, as_generator(rng))

    @property
    def tests(self) -> int:
        """R, the rounds of a run whose tests share ``false_discoveries`` (LDPTrie: one pass, L rounds)."""
        return self.rounds

    def read(self, candidates: np.ndarray, agg) -> tuple[np.ndarray, np.ndarray]:
        """(candidates, estimates) of those whose count reaches t_r (module docstring)."""
        grr = self.oracle(candidates)
        t = count_threshold(agg.n, grr.q, candidates.size, self.false_discoveries / self.tests)
        keep = agg.data[:-1] >= t
        return candidates[keep], grr.estimate(agg)[:-1][keep]

    def passing(self, codes: np.ndarray, votes: np.ndarray) -> int:
        """Every prefix :meth:`read` returns has passed the round's test."""
        return int(np.shape(votes)[0])

    def false_bound(self) -> float:
        """Expected invented words per run, at most: ``false_discoveries`` (docs/math.md §10.10)."""
        return self.false_discoveries

    def direct_aggregate(self, rows: np.ndarray, counts: np.ndarray, trie: np.ndarray, level: int, rng=None):
        """(candidates, the round's GRR aggregate drawn exactly from the category counts)."""
        candidates, cat = self.categories(rows, trie, level)
        per_cat = np.bincount(cat, weights=counts, minlength=candidates.size + 1).astype(np.int64)
        return candidates, self.oracle(candidates).sample_aggregate(per_cat, as_generator(rng))

    def device_aggregate(self, rows: np.ndarray, trie: np.ndarray, level: int, rng=None):
        """(candidates, the round's GRR aggregate of every device's own report)."""
        candidates, _ = self.categories(rows, trie, level)
        return candidates, self.oracle(candidates).aggregate(self.vote(rows, trie, level, rng))

    def sample_votes(self, rows: np.ndarray, counts: np.ndarray, trie: np.ndarray, level: int,
                     rng=None) -> tuple[np.ndarray, np.ndarray]:
        """The round read from its exactly drawn aggregate (the direct path); an empty trie asks nothing."""
        if not trie.size:
            return trie, np.zeros(0)
        return self.read(*self.direct_aggregate(rows, counts, trie, level, rng))

    def device_votes(self, rows, trie, level, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """The round read from every device's own GRR report (the per-device path)."""
        if not trie.size:
            return trie, np.zeros(0)
        return self.read(*self.device_aggregate(rows, trie, level, rng))

    def advance(self, codes: np.ndarray, votes: np.ndarray, level: int):
        """Keep the ``survivors`` largest estimates (already past the noise threshold); completed words
        leave the trie."""
        codes, votes = top(codes, votes, self.survivors)
        done = (codes % self.codec.base == 0) | (level == self.rounds)
        return codes[~done], codes[done], votes[done]

    def estimates(self, votes: np.ndarray) -> np.ndarray:
        """The completing round's unbiased GRR estimates."""
        return np.asarray(votes, dtype=float)

    def privacy_parts(self) -> dict[str, float]:
        """ε of one round's report: GRR's log(p/q) (exactly ε for any number of candidates)."""
        grr = GRR(self.epsilon, 2)
        return {"round": math.log(grr.p / grr.q)}

    def privacy(self, epsilon_device: float | None = None, rounds: int | None = None) -> dict[str, float]:
        """Pure ε-LDP over ``rounds`` rounds (default L): R·ε, δ = 0 (``epsilon_device`` is ignored:
        the protocol's ε is per round)."""
        rounds = self.rounds if rounds is None else check_int(self.name, "rounds", rounds, low=1)
        return {"epsilon": rounds * self.epsilon, "delta": 0.0, "epsilon_round": self.epsilon,
                "delta_round": 0.0, "rounds": rounds}
