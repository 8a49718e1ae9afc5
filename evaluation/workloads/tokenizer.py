"""Words and emoji of a text the way a keyboard sees them: the corpus tokenizer of :mod:`.vocabulary`.

Rules (docs/howto/your-own-vocabulary.md states them for users):

1. The text is normalised to Unicode NFC first.
2. **Emoji** are whole grapheme clusters (Unicode's extended grapheme clusters, ``\\X`` of the
   ``regex`` package) that start with a pictographic character, a regional indicator or a skin-tone
   modifier, or are a keycap (``1️⃣``, ``#️⃣``): a ZWJ family 👨‍👩‍👧, a flag 🇫🇷, a skin tone 👍🏽 or a
   rainbow flag 🏳️‍🌈 is one token. **Presentation variants are one item** (:func:`emoji_item`, the rule
   every vocabulary format follows): an emoji is written in its fully-qualified form, the one the
   ``emoji`` package's data lists once every variation selector (U+FE0E text, U+FE0F emoji
   presentation) is set aside, so ❤, ❤︎ and ❤️ are all ❤️, and 1⃣ is 1️⃣; an emoji that data does not
   know is written without variation selectors. Pictographic text symbols (©, ™) count as emoji too.
3. **Words** are maximal runs of letters, marks and digits (``gr8``, ``café``, ``2024``) joined by
   inner apostrophes or hyphens (``don't``, ``well-known``); the typographic apostrophe ’ is written
   as '. Leading or trailing apostrophes and hyphens are not part of the word.
4. **Thai, Lao, Khmer and Burmese**, written without spaces, are split into words by ICU's
   dictionary-based word break (:mod:`.segmenter`). Runs of the other scripts of Unicode's
   ``Complex_Context`` class (Tai Tham, New Tai Lue, Tai Viet, Tai Le, Ahom), which ICU has no
   dictionary for, stay whole and are reported (:class:`CorpusCounts` ``unsegmented``).
5. **Japanese**: in a text (a corpus line) holding hiragana or katakana, each run of kanji and kana
   is split into words by ICU's Japanese dictionary (``今日はとても暑い`` → 今日 · は · とても · 暑い).
6. **Chinese** (runs of Han characters in a text without kana) is split into the most probable
   sequence of words of ``wordfreq``'s Chinese frequency list (a unigram model: the split maximises
   the product of the words' frequencies, :func:`segment_han`); a character the list does not hold is
   a word of its own. The list is in simplified characters: traditional text splits mostly into
   single characters.
7. Words are lowercased (``lowercase=True``, the default; scripts without case are unchanged);
   emoji never are.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Iterator

import regex

from ldpsim.evaluation.workloads.segmenter import segment_words, unsegmented_script

#: an emoji: a whole grapheme cluster starting with a pictographic character, a regional indicator or a
#: skin-tone modifier, or a keycap
_EMOJI = r"(?=[\p{Extended_Pictographic}\p{Regional_Indicator}\p{Emoji_Modifier}]|[0-9#*][\uFE0E\uFE0F]?\u20E3)\X"
EMOJI = regex.compile(rf"(?V1){_EMOJI}")
#: one emoji, one word of a spaced script, a run of a script without spaces (Unicode's Complex_Context
#: line-break class: Thai, Lao, Khmer, Burmese, …), or a run of kanji and kana
_WORD = r"[[\p{L}\p{M}\p{N}]--[\p{Han}\p{Hiragana}\p{Katakana}\p{Line_Break=Complex_Context}]]"
TOKEN = regex.compile(
    rf"(?V1)(?P<emoji>{_EMOJI})"
    rf"|(?P<word>{_WORD}+(?:['’\-‐]{_WORD}+)*)"
    r"|(?P<complex>\p{Line_Break=Complex_Context}+)"
    r"|(?P<cjk>[\p{Han}\p{Hiragana}\p{Katakana}ー]+)")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")
#: the longest dictionary word tried when splitting Chinese (longer list entries are rare phrases)
MAX_WORD = 6


def _bare(token: str) -> str:
    return token.replace("\ufe0e", "").replace("\ufe0f", "")


@lru_cache(maxsize=1)
def _qualified() -> dict[str, str]:
    """Every fully-qualified emoji of the ``emoji`` package's data, keyed by its form without variation selectors."""
    import emoji

    status = emoji.STATUS["fully_qualified"]
    return {_bare(e): e for e, data in emoji.EMOJI_DATA.items() if data["status"] == status}


def emoji_item(token: str) -> str:
    """The item an emoji token counts as (rule 2 of the module docstring): its fully-qualified form.

    >>> emoji_item("\u2764") == emoji_item("\u2764\ufe0e") == emoji_item("\u2764\ufe0f") == "\u2764\ufe0f"
    True
    >>> emoji_item("1\u20e3") == "1\ufe0f\u20e3"
    True
    """
    bare = _bare(token)
    return _qualified().get(bare, bare)


def canonical_item(text: str) -> str:
    """``text`` in NFC with each emoji in it written as :func:`emoji_item` (how every vocabulary reader
    writes an item, so that ❤ and ❤️ are one item in a corpus, a table and a list alike).

    >>> canonical_item("i \u2764 u") == "i \u2764\ufe0f u"
    True
    """
    return EMOJI.sub(lambda m: emoji_item(m.group()), unicodedata.normalize("NFC", text))


@lru_cache(maxsize=1)
def _han_costs() -> tuple[dict[str, float], float]:
    """−log frequency of every word of wordfreq's Chinese list, and the cost of an unknown character."""
    import wordfreq

    freqs = wordfreq.get_frequency_dict("zh")
    costs = {w: -math.log(f) for w, f in freqs.items() if f > 0 and len(w) <= MAX_WORD}
    return costs, -math.log(min(freqs.values())) + 1.0


def segment_han(run: str) -> list[str]:
    """Split a run of Han characters into its most probable words (rule 6 of the module docstring).

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


def scan(text: str, lowercase: bool = True) -> Iterator[tuple[str, str, str]]:
    """``(kind, item, typed)`` for each token of ``text`` (rules in the module docstring).

    ``kind`` is ``"emoji"``, ``"word"`` or ``"unsegmented"`` (a whole run of a script without spaces
    that no dictionary splits); ``typed`` is the token as written, before :func:`emoji_item` (emoji) or
    lowercasing (words).
    """
    text = unicodedata.normalize("NFC", text)
    japanese = _KANA.search(text) is not None
    for m in TOKEN.finditer(text):
        kind, token = m.lastgroup, m.group()
        if kind == "emoji":
            yield "emoji", emoji_item(token), token
            continue
        if kind == "word":
            token = token.replace("’", "'")
            yield "word", token.lower() if lowercase else token, token
            continue
        complex_ = kind == "complex"
        for word in segment_words(token) if complex_ or japanese else segment_han(token):
            kind = "unsegmented" if complex_ and len(word) > 1 and unsegmented_script(word) else "word"
            yield kind, word.lower() if lowercase else word, word


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
    >>> tokenize("ฉันรักภาษาไทย 今日はとても暑い")
    ['ฉัน', 'รัก', 'ภาษา', 'ไทย', '今日', 'は', 'とても', '暑い']
    """
    return [item for _, item, _ in scan(text, lowercase)]


@dataclass
class CorpusCounts:
    """What :func:`count_tokens` found in a corpus.

    Attributes
    ----------
    counts : collections.Counter
        Item → number of times it was typed.
    variants : dict
        Emoji typed in another presentation → (the item it counts as, the first line it is on).
    unsegmented : dict
        Script name (``"Tai_Tham"``) → (runs of it kept whole, the first such run, its line).
    """

    counts: Counter = field(default_factory=Counter)
    variants: dict = field(default_factory=dict)
    unsegmented: dict = field(default_factory=dict)


def count_tokens(lines: Iterable[tuple[int, str]], lowercase: bool = True) -> CorpusCounts:
    """Token counts of a text given as (line number, line) pairs (a corpus file is never held whole in
    memory), with the emoji variants merged and the runs no dictionary split (:class:`CorpusCounts`)."""
    found = CorpusCounts()
    for number, line in lines:
        for kind, item, typed in scan(line, lowercase):
            found.counts[item] += 1
            if kind == "emoji" and typed != item and typed not in found.variants:
                found.variants[typed] = (item, number)
            elif kind == "unsegmented":
                script = unsegmented_script(item)
                runs, first, where = found.unsegmented.get(script, (0, item, number))
                found.unsegmented[script] = (runs + 1, first, where)
    return found
