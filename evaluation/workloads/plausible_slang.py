"""New words that look like words of a vocabulary's own script: the slang a deployment plants.

A keyboard team that watches discovery find a planted slang word should see a word its users could
type, not a string of random symbols. :func:`plausible_slang` builds each word from the vocabulary's
own user-perceived characters (grapheme clusters, so a Devanagari conjunct or a Thai vowel sign stays
attached to its consonant):

1. **Scripts.** Each word of the vocabulary belongs to the script of its first letter (the first word of
   that letter's Unicode name: LATIN, THAI, DEVANAGARI, HANGUL, CJK, …; a word without a letter belongs
   to none and is not used). Scripts are ranked by the total weight of their words; slang word *i* is
   written in the script of rank *i* mod (number of scripts), so one slang word is in the script most
   typed and ``count`` ≥ the number of scripts gives one in each.
2. **Shape.** Within a script, a word is a walk of an order-2 Markov chain over graphemes fitted to the
   script's distinct words (each word once: common short words would otherwise dominate): from the
   start, each next grapheme (or the end) is drawn in proportion to how often it follows the previous
   two in those words. Every three consecutive graphemes of a slang word (the start and end counted as
   graphemes) therefore occur in some word of the vocabulary. Where the script has too few words for the
   chain to leave them (it only reproduces known words), the walk backs off to order 1, then to
   graphemes drawn independently by their frequency.
3. **New.** A walk is kept when it has between ``min(4, median word length)`` and ``max_length``
   graphemes, and is not a word of the vocabulary, not a word wordfreq knows in English
   (``word_frequency > 0``) and not already drawn.

Deterministic given ``rng``.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.mechanisms.discovery.words import graphemes

#: walks tried at each order before backing off to a shorter context
TRIES = 2000
_START, _END = "\x02", "\x03"


def script_of(word: str) -> str | None:
    """The script of ``word``'s first letter (the first word of its Unicode name), or None without letters.

    >>> script_of("café"), script_of("ภาษา"), script_of("42")
    ('LATIN', 'THAI', None)
    """
    for ch in word:
        if unicodedata.category(ch).startswith("L"):
            return unicodedata.name(ch, "UNKNOWN").split()[0]
    return None


def _chain(words: list[list[str]], order: int) -> dict[tuple, list[str]]:
    """The order-``order`` chain fitted to ``words`` (lists of graphemes): context → the graphemes (or the
    end) that follow it, once per occurrence; order 0 maps () to every grapheme and the lengths to draw."""
    follow: dict[tuple, list[str]] = defaultdict(list)
    if order == 0:
        follow[()] = [g for w in words for g in w]
        follow["lengths"] = [len(w) for w in words]
        return follow
    for w in words:
        padded = [_START] * order + w + [_END]
        for i in range(order, len(padded)):
            follow[tuple(padded[i - order:i])].append(padded[i])
    return follow


def _walk(follow: dict, order: int, rng: np.random.Generator, max_length: int) -> str:
    """One walk of a chain of :func:`_chain` (at most ``max_length`` + 1 graphemes)."""
    if order == 0:
        pool, lengths = follow[()], follow["lengths"]
        return "".join(pool[i] for i in rng.integers(len(pool), size=lengths[int(rng.integers(len(lengths)))]))
    state, out = (_START,) * order, []
    while len(out) <= max_length:
        options = follow[state]
        nxt = options[int(rng.integers(len(options)))]
        if nxt == _END:
            break
        out.append(nxt)
        state = (*state[1:], nxt)
    return "".join(out)


def plausible_slang(words, count: int, rng, max_length: int = 8, weights=None) -> list[str]:
    """``count`` new words in the scripts of ``words`` (rules in the module docstring).

    Parameters
    ----------
    words : sequence of str
        The vocabulary (its items); words without a letter are ignored.
    count : int
        How many slang words.
    rng : int or numpy.random.Generator
        Seed or generator.
    max_length : int
        Most graphemes a slang word may have (a discovery codec's word length).
    weights : sequence of float, optional
        The words' weights, ranking the scripts (default: every word 1).

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        No word has a letter, or a script's graphemes cannot make a new word.
    """
    import wordfreq

    count = check_int("plausible_slang", "count", count, low=0)
    max_length = check_int("plausible_slang", "max_length", max_length, low=2)
    rng = as_generator(rng)
    weights = np.ones(len(words)) if weights is None else np.asarray(weights, dtype=float)
    by_script: dict[str, list[list[str]]] = defaultdict(list)
    total: dict[str, float] = defaultdict(float)
    for word, w in zip(words, weights):
        script = script_of(word)
        if script is not None:
            by_script[script].append(graphemes(word))
            total[script] += float(w)
    if not by_script:
        raise ValueError("plausible_slang: no word of the vocabulary has a letter to build slang from.")
    ranked = sorted(by_script, key=lambda s: -total[s])
    known, out = set(words), []
    for i in range(count):
        script = ranked[i % len(ranked)]
        shapes = by_script[script]
        low = min(4, int(np.median([len(g) for g in shapes])))
        for order in (2, 1, 0):
            follow = _chain(shapes, order)
            new = next((w for w in (_walk(follow, order, rng, max_length) for _ in range(TRIES))
                        if low <= len(graphemes(w)) <= max_length and w not in known and w not in out
                        and wordfreq.word_frequency(w, "en") == 0), None)
            if new is not None:
                out.append(new)
                break
        else:
            raise ValueError(f"plausible_slang: the {len(shapes)} {script} word(s) of the vocabulary give no new "
                             f"word of {low} to {max_length} characters; give the slang word yourself.")
    return out
