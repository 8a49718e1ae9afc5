"""Real categorical workloads from measured English frequencies (the ``wordfreq`` package) — docs/math.md §5.

* ``words``: the ``top`` most frequent English words of ``wordfreq.top_n_list('en', ·)`` with emoji
  removed, weighted by ``wordfreq.word_frequency(w, 'en')``.
* ``emoji``: the ``top`` most frequent emoji of the same English list (tokens for which
  ``emoji.is_emoji`` is true), one item per emoji whatever its presentation, text symbols left out:

  1. *Variants merge.* U+FE0F (emoji presentation) and U+FE0E (text presentation) selectors are
     stripped and the frequencies of the tokens that then coincide are added: ❤️ + ❤, ☺️ + ☺, ♥️ + ♥
     are one item each. The item is written in its fully-qualified form (❤️), the form an emoji
     keyboard inserts.
  2. *Text symbols are left out.* An item is kept when its default presentation is emoji (Unicode
     ``Emoji_Presentation``: the bare form is fully qualified in the ``emoji`` package's data, e.g.
     😂), or when its emoji form (with U+FE0F) is typed at least as often as its text form (❤️ 2.95e-6
     vs ❤ 1.17e-6; ☺️ vs ☺). Text-default characters typed mostly as text are symbols, not emoji:
     © ® ™ ♦ ♠ ♣ ▪ ▶ ✔ ☑ and also ♥ (1.58e-6 as text vs 3.8e-7 as ♥️). ``symbols=True`` keeps them.

  wordfreq 3.x's English list (319,938 tokens) holds 807 emoji tokens: 777 items after merging, 721
  of them emoji by the rule above. Beyond the first ~200 many share wordfreq's smallest bucket.

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


def _from_tokens(name: str, pool: tuple[str, ...], top, n: int, freqs=None) -> Workload:
    import wordfreq

    top = check_int(name, "top", top, low=1, high=len(pool))
    tokens = pool[:top]
    freqs = np.array([wordfreq.word_frequency(t, "en") for t in tokens]) if freqs is None else freqs[:top]
    return Workload.from_frequencies(name, np.array(tokens, dtype=object), freqs, n,
                                     {"top": top, "source": "wordfreq en"})


def words(n: int, rng=None, top: int = 2000) -> Workload:
    """The ``top`` most frequent English words (emoji excluded); seed 003 uses top = 2000."""
    return _from_tokens("words", _split_wordlist()[0], top, n)


def strip_presentation(token: str) -> str:
    """``token`` without U+FE0F / U+FE0E variation selectors: ``strip_presentation("❤️") == "❤"``."""
    return token.replace("\ufe0f", "").replace("\ufe0e", "")


@lru_cache(maxsize=2)
def emoji_items(symbols: bool = False) -> tuple[tuple[str, ...], np.ndarray]:
    """(items, frequencies) of wordfreq's English emoji, variants merged, most frequent first (stable);
    text symbols left out unless ``symbols`` (rule in the module docstring)."""
    import emoji as emoji_data
    import wordfreq

    qualified = emoji_data.STATUS["fully_qualified"]
    groups: dict[str, list[str]] = {}
    for token in _split_wordlist()[1]:
        groups.setdefault(strip_presentation(token), []).append(token)
    items, freqs = [], []
    for bare, tokens in groups.items():
        f = {t: wordfreq.word_frequency(t, "en") for t in tokens}
        is_q = {t: emoji_data.EMOJI_DATA.get(t, {}).get("status") == qualified for t in tokens}
        as_emoji = sum(v for t, v in f.items() if is_q[t])
        default_emoji = emoji_data.EMOJI_DATA.get(bare, {}).get("status") == qualified
        typed_as_emoji = as_emoji >= sum(f.values()) - as_emoji
        if not (symbols or default_emoji or typed_as_emoji):
            continue
        shown = bare if default_emoji else next((t for t in tokens if is_q[t]), None)
        items.append(shown if shown is not None and (default_emoji or typed_as_emoji) else tokens[0])
        freqs.append(sum(f.values()))
    order = np.argsort(-np.asarray(freqs), kind="stable")
    return tuple(items[i] for i in order), np.asarray(freqs)[order]


def emoji(n: int, rng=None, top: int = 100, symbols: bool = False) -> Workload:
    """The ``top`` most frequent emoji of wordfreq's English list, presentation variants merged
    (721 exist; 777 with the text symbols, ``symbols=True``)."""
    pool, freqs = emoji_items(bool(symbols))
    return _from_tokens("emoji", pool, top, n, freqs)


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
