"""Words and emoji of a text the way a keyboard sees them: the corpus tokenizer of :mod:`.vocabulary`.

Rules (docs/howto/your-own-vocabulary.md states them for users):

1. The text is normalised to Unicode NFC first.
2. **Emoji** are whole grapheme clusters (Unicode's extended grapheme clusters, ``\\X`` of the
   ``regex`` package) that start with a pictographic character, a regional indicator or a skin-tone
   modifier, or are a keycap (``1️⃣``, ``#️⃣``): a ZWJ family 👨‍👩‍👧, a flag 🇫🇷, a skin tone 👍🏽 or a
   rainbow flag 🏳️‍🌈 is one token. Presentation variants are one item: U+FE0E is dropped and an emoji
   whose fully-qualified form (per the ``emoji`` package's data) adds U+FE0F is written that way, so
   ❤ and ❤️ are both counted as ❤️. Pictographic text symbols (©, ™) count as emoji too.
3. **Words** are maximal runs of letters, marks and digits (``gr8``, ``café``, ``2024``) joined by
   inner apostrophes or hyphens (``don't``, ``well-known``); the typographic apostrophe ’ is written
   as '. Leading or trailing apostrophes and hyphens are not part of the word.
4. **Chinese** (runs of Han characters, written without spaces) is split into the most probable
   sequence of words of ``wordfreq``'s Chinese frequency list (a unigram model: the split maximises
   the product of the words' frequencies, :func:`segment_han`); a character the list does not hold is
   a word of its own. ``wordfreq.tokenize(text, "zh")`` would need the ``jieba`` package, which
   ldpsim does not require; the list is the same data wordfreq ranks words with. The list is in
   simplified characters: traditional text splits mostly into single characters.
5. A run of hiragana, or of katakana, is one word (no Japanese dictionary is used: Japanese text gives
   rough vocabularies; kanji are split like Chinese).
6. Words are lowercased (``lowercase=True``, the default; scripts without case are unchanged);
   emoji never are.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Iterable

import regex

#: one emoji (a whole grapheme cluster), one word of a spaced script, a Han run, or a kana run
_WORD = r"[[\p{L}\p{M}\p{N}]--[\p{Han}\p{Hiragana}\p{Katakana}]]"
TOKEN = regex.compile(
    r"(?V1)(?P<emoji>(?=[\p{Extended_Pictographic}\p{Regional_Indicator}\p{Emoji_Modifier}]|[0-9#*]\uFE0F?\u20E3)\X)"
    rf"|(?P<word>{_WORD}+(?:['’\-‐]{_WORD}+)*)"
    r"|(?P<han>\p{Han}+)"
    r"|(?P<kana>\p{Hiragana}+|[\p{Katakana}ー]+)")
#: the longest dictionary word tried when splitting Chinese (longer list entries are rare phrases)
MAX_WORD = 6


def emoji_item(token: str) -> str:
    """The item an emoji token counts as: U+FE0E dropped, U+FE0F added where that is the fully-qualified form.

    >>> emoji_item("\\u2764") == emoji_item("\\u2764\\ufe0f") == "\\u2764\\ufe0f"
    True
    """
    import emoji

    token = token.replace("\ufe0e", "")
    if "\ufe0f" not in token and emoji.EMOJI_DATA.get(token + "\ufe0f", {}).get("status") == \
            emoji.STATUS["fully_qualified"]:
        return token + "\ufe0f"
    return token


@lru_cache(maxsize=1)
def _han_costs() -> tuple[dict[str, float], float]:
    """−log frequency of every word of wordfreq's Chinese list, and the cost of an unknown character."""
    import wordfreq

    freqs = wordfreq.get_frequency_dict("zh")
    costs = {w: -math.log(f) for w, f in freqs.items() if f > 0 and len(w) <= MAX_WORD}
    return costs, -math.log(min(freqs.values())) + 1.0


def segment_han(run: str) -> list[str]:
    """Split a run of Han characters into its most probable words (rule 4 of the module docstring).

    Dynamic programming over the run: ``best[j]`` is the least total cost Σ −log f(w) of a split of
    ``run[:j]``, each word at most :data:`MAX_WORD` characters; unknown characters cost more than any
    listed word.

    >>> segment_han("我们今天很高兴")
    ['我们', '今天', '很', '高兴']
    """
    costs, unknown = _han_costs()
    best = [0.0] + [math.inf] * len(run)
    back = [0] * (len(run) + 1)
    for j in range(1, len(run) + 1):
        for i in range(max(0, j - MAX_WORD), j):
            c = costs.get(run[i:j], unknown if j - i == 1 else math.inf)
            if best[i] + c < best[j]:
                best[j], back[j] = best[i] + c, i
    words, j = [], len(run)
    while j > 0:
        words.append(run[back[j]:j])
        j = back[j]
    return words[::-1]


def tokenize(text: str, lowercase: bool = True) -> list[str]:
    """The words and emoji of ``text``, in order (rules in the module docstring).

    Parameters
    ----------
    text : str
        Any UTF-8 text.
    lowercase : bool
        Lowercase the words (emoji are never changed).

    Examples
    --------
    >>> tokenize("Don’t stop, gr8 café! 👍🏽👍🏽 🇫🇷")
    ["don't", 'stop', 'gr8', 'café', '👍🏽', '👍🏽', '🇫🇷']
    """
    out: list[str] = []
    for m in TOKEN.finditer(unicodedata.normalize("NFC", text)):
        kind, token = m.lastgroup, m.group()
        if kind == "emoji":
            out.append(emoji_item(token))
        elif kind == "han":
            out.extend(segment_han(token))
        else:
            token = token.replace("’", "'")
            out.append(token.lower() if lowercase else token)
    return out


def count_tokens(lines: Iterable[str], lowercase: bool = True) -> Counter:
    """Token counts of a text given line by line (a corpus file is never held whole in memory)."""
    counts: Counter = Counter()
    for line in lines:
        counts.update(tokenize(line, lowercase))
    return counts
