"""Real categorical workloads from measured English frequencies (the ``wordfreq`` package) — docs/math.md §5.

* ``words``: the ``top`` most frequent English words of ``wordfreq.top_n_list('en', ·)`` with emoji
  removed, weighted by ``wordfreq.word_frequency(w, 'en')``.
* ``emoji``: the ``top`` most frequent tokens of the same English list for which
  ``emoji.is_emoji`` is true, less the text symbols ©, ® and ™ (Latin-1 and Letterlike Symbols
  code points) that ``emoji`` counts as emoji but a keyboard's emoji panel does not collect
  (``symbols=True`` keeps them: they would otherwise be ranks 1, 3 and 4). wordfreq 3.x's English
  list (319,938 tokens) holds only **807** emoji tokens (804 without the symbols); beyond the first
  ~200 many share wordfreq's smallest bucket.

``word_frequency`` is rounded to three significant digits (the top 2,000 words have only 193
distinct values), so real workloads have many exact ties; ties keep wordfreq's list order, which
also fixes their true ranks. Shares are renormalised over the chosen tokens, then rounded to an
exact population by largest remainder.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ldpsim.mechanisms._validation import check_int

from ldpsim.evaluation.workloads.types import Workload

#: the whole English list (wordfreq caps it well below this)
_ALL = 10 ** 7


@lru_cache(maxsize=1)
def _split_wordlist() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """wordfreq's English list split into (words, emoji), each in wordfreq's frequency order."""
    import emoji
    import wordfreq

    tokens = wordfreq.top_n_list("en", _ALL)
    is_emoji = [emoji.is_emoji(t) for t in tokens]
    words = tuple(t for t, e in zip(tokens, is_emoji) if not e)
    emojis = tuple(t for t, e in zip(tokens, is_emoji) if e)
    return words, emojis


def _from_tokens(name: str, pool: tuple[str, ...], top, n: int) -> Workload:
    import wordfreq

    top = check_int(name, "top", top, low=1, high=len(pool))
    tokens = pool[:top]
    freqs = np.array([wordfreq.word_frequency(t, "en") for t in tokens])
    return Workload.from_frequencies(name, np.array(tokens, dtype=object), freqs, n,
                                     {"top": top, "source": "wordfreq en"})


def words(n: int, rng=None, top: int = 2000) -> Workload:
    """The ``top`` most frequent English words (emoji excluded); seed 003 uses top = 2000."""
    return _from_tokens("words", _split_wordlist()[0], top, n)


def _is_text_symbol(token: str) -> bool:
    """©, ®, ™ and the like: every code point in Latin-1 or the Letterlike Symbols block."""
    return all(ord(c) < 0x2000 or 0x2100 <= ord(c) <= 0x214F for c in token)


def emoji(n: int, rng=None, top: int = 100, symbols: bool = False) -> Workload:
    """The ``top`` most frequent emoji of wordfreq's English list (804 exist; 807 with ``symbols``)."""
    pool = _split_wordlist()[1]
    if not symbols:
        pool = tuple(t for t in pool if not _is_text_symbol(t))
    return _from_tokens("emoji", pool, top, n)


def letter_frequencies(top: int = 2000) -> dict[str, float]:
    """Share of each letter a–z among the letters typed for the ``top`` words (frequency-weighted)."""
    import wordfreq

    top = check_int("letter_frequencies", "top", top, low=1, high=len(_split_wordlist()[0]))
    shares = dict.fromkeys("abcdefghijklmnopqrstuvwxyz", 0.0)
    for w in _split_wordlist()[0][:top]:
        f = wordfreq.word_frequency(w, "en")
        for ch in w:
            if ch in shares:
                shares[ch] += f
    total = sum(shares.values())
    return {ch: v / total for ch, v in shares.items()}
