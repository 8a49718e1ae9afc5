"""The multiscript workload (evaluation/workloads/multiscript.py): eight scripts, each an eighth of the
users, over an alphabet of more than a thousand graphemes that the 6-symbol prefix codes can carry."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.workloads.multiscript import SCRIPTS, multiscript_words, script_words
from ldpsim.mechanisms.discovery.words import WordCodec, graphemes, max_length


@pytest.mark.slow
def test_eight_scripts_share_the_users_over_a_big_alphabet():
    n = 10 ** 6
    w = multiscript_words(n)
    alphabet = w.params["alphabet"]
    assert len(SCRIPTS) == 8 and set(w.params["scripts"]) == set(SCRIPTS)
    assert all(size > 0 for size in w.params["scripts"].values())
    assert 1000 <= len(alphabet) and max_length(len(alphabet) + 1) >= 6
    assert w.n == n and w.domain_size == sum(w.params["scripts"].values())
    codec = WordCodec(alphabet, 6)
    rows, _ = codec.symbols(w.items)  # every word is 1..6 graphemes of the alphabet
    assert rows.shape == (w.domain_size, 6)
    assert all(len(graphemes(c)) == 1 for c in alphabet)
    # each script holds n/8 users (up to a user of rounding per word); a word an earlier script listed is
    # the earlier script's
    share = dict(zip(w.items.tolist(), w.counts.tolist()))
    taken: set = set()
    for name, words, weights in script_words(400, 6):
        fresh = [i for i, x in enumerate(words) if x not in taken]
        want = n / 8
        assert abs(sum(share[words[i]] for i in fresh) - want) <= len(fresh), name
        taken.update(words)
    assert np.all(np.diff(w.counts) <= 0)
