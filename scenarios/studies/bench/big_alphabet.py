"""The benchmark's big-alphabet discovery paths: words of eight scripts over 1 335 graphemes.

Two runners of :data:`ldpsim.scenarios.studies.bench.cases.RUNNERS`, on the ``multiscript`` workload
(:func:`~ldpsim.evaluation.workloads.multiscript.multiscript_words`: 2 826 words, words of at most 6
graphemes, each script an eighth of the users):

* ``discover-big``: ``sample_aggregate`` + ``discover`` of the top 20 by a one-shot protocol (SFP,
  PEM, TreeHist; docs/math.md §7.4.1) for n users, the alphabet and L = 6 taken from the workload;
  the row's note gives the F1 of the top 20;
* ``gboard-round``: one round of Gboard's trie (docs/math.md §10.5) over n devices holding 3 words
  each (drawn from the workload's shares, typed 1 + Poisson(2) times): the devices' samplers, the
  round's exact GRR aggregate and the server's reading of it — the second round, whose candidates are
  the one-symbol extensions of the first round's survivors (set up untimed, with the devices' words
  encoded; when no prefix survives round 1 at a small n, the devices' true first symbols).
"""

from __future__ import annotations

import functools

import numpy as np

from ldpsim.mechanisms._validation import as_generator
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie

from ldpsim.scenarios.studies.bench.floors import Stopwatch
from ldpsim.evaluation.discovery.scores import run_scores
from ldpsim.evaluation.workloads.multiscript import multiscript_words

#: the longest word of the workload, in graphemes (the most 63-bit codes allow for its alphabet)
LENGTH = 6
#: words each device of the Gboard round holds
WORDS_PER_DEVICE = 3


@functools.lru_cache(maxsize=2)
def workload(n: int):
    return multiscript_words(n, length=LENGTH)


def big_alphabet(_domain_size: int) -> tuple:
    """The workload's alphabet (a case parameter; the domain size plays no part)."""
    return workload(1).params["alphabet"]


def discover_big(case, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    """One direct discovery run of the top 20 on the workload; returns the time and the F1."""
    mech = case.make(domain_size)
    w = workload(n)
    rng = as_generator(seed)
    with Stopwatch() as sw:
        res = mech.discover(mech.sample_aggregate(w.counts, rng, w.items), top_k=20)
    return sw, np.array([run_scores(w.items, w.counts, res.words, res.counts, 20)["f1"]])


@functools.lru_cache(maxsize=2)
def _round_setup(trie: GboardTrie, n: int, seed: int):
    """(rows, entry_row, device, counts, trie after round 1, excluded) for n devices (untimed)."""
    w = workload(n)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0])
    words = w.items[rng.choice(w.domain_size, size=WORDS_PER_DEVICE * n, p=w.counts / w.n)]
    device = np.repeat(np.arange(n), WORDS_PER_DEVICE)
    counts = 1 + rng.poisson(2.0, device.size)
    rows, entry_row = trie.codec.symbols(words)
    excluded = np.zeros(rows.shape[0], dtype=bool)
    cand, cat = trie.device_categories(rows, entry_row, device, counts, trie.root(), 1, excluded, rng)
    alive, _, _ = trie.advance(*trie.read(cand, trie.round_aggregate(cand, cat, False, rng)), 1)
    if alive.size == 0:  # too few devices for any prefix to clear round 1's bar: time round 2 on the true ones
        alive = np.unique(trie.codec.prefix_codes(rows, 1))
    return rows, entry_row, device, counts, alive, excluded


def gboard_round(case, n: int, domain_size: int, seed) -> tuple[Stopwatch, np.ndarray]:
    """Round 2 of Gboard's trie over n devices (module docstring); returns the time and the number of
    prefixes the round keeps."""
    trie = case.make(domain_size)
    rows, entry_row, device, counts, alive, excluded = _round_setup(trie, n, int(seed))
    rng = np.random.default_rng(np.random.SeedSequence(int(seed)).spawn(2)[1])
    with Stopwatch() as sw:
        cand, cat = trie.device_categories(rows, entry_row, device, counts, alive, 2, excluded, rng)
        codes, _ = trie.read(cand, trie.round_aggregate(cand, cat, False, rng))
    return sw, np.array([codes.size], dtype=float)
