"""Gboard's private discovery of out-of-vocabulary words: the LDP trie of :mod:`.ldp_trie` with the
device-side samplers, several passes and secure-aggregation cohorts — after Sun, Kairouz, Sun, Gascón,
Suresh, "Private federated discovery of out-of-vocabulary words for Gboard" (arXiv 2404.11607);
docs/math.md §10.5–§10.6.

A device holds *several* words, each with the number of times it was typed over the collection
period. Round r of a pass (r = 1..L):

* **local sampler** (:meth:`GboardTrie.choose`): among the device's words that are still *eligible* —
  their (r − 1)-prefix is in the trie, and no earlier pass found them — the device picks one:
  ``"random"``: a typed word drawn at random, so word w with probability c_w / Σ c; ``"top"``: its
  most typed eligible word (ties uniformly at random). A device with no eligible word answers "none".
  Both are the contribution-bounding family with one word per device and round
  (:class:`~ldpsim.mechanisms.bounding.ContributionBound`), drawn exactly with one uniform integer per
  device.
* **report**: k-ary randomized response over the round's candidates and "none"
  (:class:`~.ldp_trie.LDPTrie`, GRR at ε₀ per round). The sampler's choice is a function of the
  device's data, so the report is ε₀-LDP about the device's whole word list, whatever it holds.
* **aggregation**: secure aggregation of the one-hot reports over a cohort of at least
  ``min_cohort`` devices; a smaller round is not published (nothing survives it).
* **server**: as :class:`~.ldp_trie.LDPTrie` (counts past the round's threshold t_r, at most
  ``survivors``); ``false_discoveries`` is shared by the passes·L rounds of the run.
* **passes**: ``passes`` runs of the L rounds; the words found by earlier passes leave every device's
  eligible set, so later passes reach the words that were hidden behind them.

**Paths.** Direct: each device's choice is drawn (vectorized over devices), and the round's aggregate
from the category counts exactly (``GRR.sample_aggregate``); per device: every device's own GRR
report. Given the choices both have the same law.

**Privacy.** Local: ε₀-LDP per round, R·ε₀ over R rounds (pure). Central, after secure aggregation of
at least ``min_cohort`` reports: the shuffle amplification bound, composed over the rounds —
:func:`ldpsim.evaluation.privacy.secagg_rounds.round_guarantees` (docs/math.md §10.6).

>>> t = GboardTrie(epsilon=6.0, length=3, alphabet="abc", sampler="top", passes=2)
>>> res = t.run_devices(devices=[d for d in range(1500) for _ in "ab"], words=["ab", "c"] * 1500,
...                     counts=[3, 1] * 1500, rng=1)
>>> sorted(res.words.tolist())
['ab', 'c']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_counts, check_int
from ldpsim.mechanisms.bounding import BOUNDING, ContributionBound
from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from ldpsim.mechanisms.discovery.triehh import TrieResult
from ldpsim.runtime.errors import InputError

#: the device-side samplers (module docstring)
SAMPLERS = tuple(BOUNDING)


@dataclass(frozen=True)
class GboardTrie(LDPTrie):
    """Gboard 2024's discovery: LDP trie rounds, device samplers, passes, cohorts (module docstring).

    Parameters
    ----------
    epsilon : float in (0, inf)
        ε₀ of one round's report (local).
    length : int in [2, L_max]
        Longest word in symbols; the rounds of one pass.
    sampler : {"random", "top"}
        How a device picks one of its eligible words.
    passes : int ≥ 1
        Runs of the L rounds; later ones exclude the words found before.
    min_cohort : int ≥ 1
        Fewest reports a secure-aggregation round needs to be published.
    false_discoveries, survivors, alphabet
        As :class:`~.ldp_trie.LDPTrie` (``false_discoveries``: per run of all passes).
    """

    sampler: str = "random"
    passes: int = 1
    min_cohort: int = 1

    def __post_init__(self):
        super().__post_init__()
        if self.sampler not in SAMPLERS:
            raise InputError(f"{self.name}: 'sampler' must be one of {list(SAMPLERS)}; got {self.sampler!r}.")
        object.__setattr__(self, "passes", check_int(self.name, "passes", self.passes, low=1))
        object.__setattr__(self, "min_cohort", check_int(self.name, "min_cohort", self.min_cohort, low=1))

    # device side ---------------------------------------------------------------------------------
    def choose(self, device: np.ndarray, counts: np.ndarray, eligible: np.ndarray, rng=None) -> np.ndarray:
        """Which (device, word) entries the devices' samplers pick: a boolean mask, at most one True per
        device (none where the device has no eligible word).

        Parameters
        ----------
        device : int array, non-decreasing
            The device of each entry (entries of a device are contiguous).
        counts : int array ≥ 1
            Times the entry's word was typed.
        eligible : bool array
            Whether the entry's word may be chosen this round.
        """
        mask = np.zeros(np.asarray(device).size, dtype=bool)
        mask[self._picks(device, counts, eligible, rng)] = True
        return mask

    def _picks(self, device, counts, eligible, rng=None) -> np.ndarray:
        """The entry each device with an eligible word picks (:meth:`choose`), in device order: the
        contribution-bounding family with one item per device and round
        (:class:`~ldpsim.mechanisms.bounding.ContributionBound`, ``"random"`` its ``"occurrence"`` sampler,
        ``"top"`` its ``"top"``; docs/math.md §8.7, §10.5) — exact, one uniform integer per device."""
        device = np.asarray(device)
        weight = np.where(np.asarray(eligible, dtype=bool), np.asarray(counts, dtype=np.int64), 0)
        if device.size == 0:
            return np.zeros(0, dtype=np.int64)
        return ContributionBound(l0=1, sampler=BOUNDING[self.sampler]).picks(device, weight, as_generator(rng))

    def device_categories(self, rows, entry_row, device, counts, trie, level, excluded, rng=None):
        """(candidates, each device's category: the candidate index of its chosen word's prefix, or
        "none") for one round; ``device`` ids are 0..n−1, ``excluded`` marks distinct words found before."""
        candidates, cat_row = self.categories(rows, trie, level)
        cat_row = np.where(excluded, candidates.size, cat_row)
        chosen = self.choose(device, counts, cat_row[entry_row] < candidates.size, rng)
        cat = np.full(int(device[-1]) + 1 if device.size else 0, candidates.size, dtype=np.int64)
        cat[device[chosen]] = cat_row[entry_row[chosen]]
        return candidates, cat

    def vote(self, rows: np.ndarray, trie: np.ndarray, level: int, rng=None) -> np.ndarray:
        """Each device's GRR report (a category index) for the round, one device per row holding that row's
        word: its sampler (:meth:`device_categories`; with one word it picks that word when eligible, else
        "none"), then the round's randomizer — the per-device path of :meth:`run_devices` for such devices."""
        rng, n = as_generator(rng), rows.shape[0]
        ids = np.arange(n)
        candidates, cat = self.device_categories(rows, ids, ids, np.ones(n, dtype=np.int64), trie, level,
                                                 np.zeros(n, dtype=bool), rng)
        return self.oracle(candidates).perturb(cat, rng)

    # server ----------------------------------------------------------------------------------------
    @property
    def tests(self) -> int:
        """R = passes·L rounds share ``false_discoveries``."""
        return self.passes * self.rounds

    def read(self, candidates: np.ndarray, agg) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`LDPTrie.read`, but a round of fewer than ``min_cohort`` reports is not published."""
        if agg.n < self.min_cohort:
            return candidates[:0], np.zeros(0)
        return super().read(candidates, agg)

    def round_aggregate(self, candidates: np.ndarray, cat: np.ndarray, per_device: bool, rng=None):
        """The round's secure sum of GRR reports of categories ``cat``: drawn exactly from the category
        counts (direct) or from every device's own report."""
        grr = self.oracle(candidates)
        if per_device:
            return grr.aggregate(grr.perturb(cat, as_generator(rng)))
        return grr.sample_aggregate(np.bincount(cat, minlength=candidates.size + 1), as_generator(rng))

    def run_devices(self, devices, words, counts=None, rng=None, per_device: bool = False) -> TrieResult:
        """All passes over devices holding several words each.

        Parameters
        ----------
        devices : sequence of int
            The device of each entry (any labels; one entry per device and word).
        words : sequence of str
            The entry's word.
        counts : sequence of int ≥ 1, optional
            Times the device typed the word (default 1).
        per_device : bool
            Every device's own GRR report (True) or the exact aggregate law (False).

        Returns
        -------
        TrieResult
            The words in the order found (pass, round, estimate), with their estimates.
        """
        rng = as_generator(rng)
        labels, device = np.unique(np.asarray(devices), return_inverse=True)
        counts = np.ones(device.size, dtype=np.int64) if counts is None else check_counts(self.name, counts, device.size,
                                                                                          name="counts")
        if device.size != len(words) or (counts < 1).any():
            raise InputError(f"{self.name}.run_devices: 'devices', 'words' and 'counts' must have one entry per "
                             f"device and word, with counts >= 1; got {device.size}, {len(words)} and {counts.size}.")
        order = np.argsort(device, kind="stable")
        rows, entry_row = self.codec.symbols(np.asarray(words, dtype=object)[order])
        device, counts = device[order], counts[order]
        excluded = np.zeros(rows.shape[0], dtype=bool)
        full = self.codec.decode(self.codec.prefix_codes(rows, self.length), self.length)
        words_out, votes, sizes, dropped = [], [], [], 0
        for _ in range(self.passes):
            trie = self.root()
            for level in range(1, self.rounds + 1):
                if trie.size:
                    candidates, cat = self.device_categories(rows, entry_row, device, counts, trie, level, excluded, rng)
                    codes, est = self.read(candidates, self.round_aggregate(candidates, cat, per_device, rng))
                else:
                    codes, est = trie, np.zeros(0)
                trie, done, done_est = self.advance(codes, est, level)
                dropped += self.passing(codes, est) - trie.size - done.size
                found = self.codec.decode(done, level)
                words_out.append(found)
                votes.append(done_est)
                sizes.append(trie.size)
                excluded |= np.isin(full, found)
        votes = np.concatenate(votes)
        return TrieResult(np.concatenate(words_out), votes, self.estimates(votes), np.array(sizes, dtype=np.int64),
                          self.false_bound(), dropped)

    def run(self, values=None, rng=None, *, items=None, true_counts=None) -> TrieResult:
        """All passes over devices holding one word each: ``values`` (one word per device, per-device
        reports) or ``items`` with ``true_counts`` (the direct path)."""
        if values is not None:
            return self.run_devices(np.arange(len(values)), values, rng=rng, per_device=True)
        if items is None:
            raise InputError(f"{self.name}.run: pass the devices' words as 'values', or 'items' with 'true_counts'.")
        n = check_counts(self.name, true_counts, len(items))
        return self.run_devices(np.arange(int(n.sum())), np.repeat(np.asarray(items, dtype=object), n), rng=rng)

    def privacy(self, epsilon_device: float | None = None, rounds: int | None = None) -> dict[str, float]:
        """Local guarantee over ``rounds`` rounds (default passes·L): R·ε₀, pure; the central one after
        secure aggregation is :func:`ldpsim.evaluation.privacy.secagg_rounds.round_guarantees`."""
        return super().privacy(epsilon_device, self.passes * self.rounds if rounds is None else rounds)
