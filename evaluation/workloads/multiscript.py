"""Words in eight scripts over one large alphabet: the discovery protocols' big-alphabet workload —
docs/math.md §5, §7.4.1.

A keyboard that serves many languages has an alphabet of a thousand or more user-perceived
characters (grapheme clusters, :func:`ldpsim.mechanisms.discovery.words.graphemes`). This workload
builds such a population from what the ``wordfreq`` package ships (no download):

* **Scripts**: Hindi (Devanagari), Arabic, Korean (Hangul), Japanese (kana and kanji) and
  Vietnamese (Latin with stacked diacritics): the most frequent tokens of each wordfreq list that
  have 1 to ``length`` graphemes and no digit, up to ``per_script`` of them, weighted by
  wordfreq's frequency (``get_frequency_dict``); Thai (wordfreq has no Thai list): the 40 common words of
  :data:`THAI_WORDS`, weighted ∝ 1/rank; emoji sequences (flags, skin tones, ZWJ sequences, one
  grapheme each): the ``per_script`` most frequent of wordfreq's English emoji, presentation variants
  merged (:func:`~ldpsim.evaluation.workloads.real.emoji_items`); English words with digits or
  apostrophes ("2nd", "don't"), up to ``per_script``.
* **Shares**: every script holds an equal share of the users (1/8), split among its words in
  proportion to their weights; a word that two scripts both list belongs to the first.
* **Alphabet**: every grapheme the words use, in order of first appearance
  (:meth:`WordCodec.for_words <ldpsim.mechanisms.discovery.words.WordCodec.for_words>`);
  ``params["alphabet"]`` holds it. At the defaults: 2 826 words over 1 335 graphemes (b = 1 336
  with the padding symbol), words of at most 6 of them — the longest the 63-bit prefix codes allow
  for b up to 1 447.

>>> w = multiscript_words(10_000, per_script=20)
>>> len(w.params["alphabet"]) > 100, w.n
(True, 10000)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ldpsim.mechanisms._validation import check_int
from ldpsim.mechanisms.discovery.words import WordCodec, graphemes

from ldpsim.evaluation.workloads.types import Workload

#: the wordfreq lists of the lettered scripts (language code, script)
LANGUAGES = (("hi", "Devanagari"), ("ar", "Arabic"), ("ko", "Hangul"), ("ja", "Japanese"), ("vi", "Vietnamese"))

#: 40 common Thai words, most common first (wordfreq ships no Thai list)
THAI_WORDS = ("ไม่", "เป็น", "มี", "ที่", "และ", "ใน", "คน", "ไป", "มา", "ได้", "ดี", "รัก", "บ้าน", "น้ำ",
              "กิน", "ข้าว", "ใจ", "วัน", "ปี", "เวลา", "แม่", "พ่อ", "ลูก", "เพื่อน", "ภาษา", "ไทย", "รถ",
              "ทาง", "เมือง", "คิด", "พูด", "สวย", "ร้อน", "เย็น", "ช่วย", "เรียน", "ตลาด", "อาหาร",
              "ขอบคุณ", "สวัสดี")

#: the eight scripts, in the order their words enter the list
SCRIPTS = tuple(name for _, name in LANGUAGES) + ("Thai", "emoji", "digits and apostrophes")


def _fits(word: str, length: int) -> bool:
    return 1 <= len(graphemes(word)) <= length


@lru_cache(maxsize=4)
def script_words(per_script: int = 400, length: int = 6) -> tuple[tuple[str, tuple, tuple], ...]:
    """(script, words, weights) of each of :data:`SCRIPTS` (module docstring)."""
    import wordfreq

    from ldpsim.evaluation.workloads.real import _split_wordlist, emoji_items

    out = []
    for lang, name in LANGUAGES:
        freq = wordfreq.get_frequency_dict(lang)  # the list's own numbers: no tokenizer (MeCab) needed
        words = []
        for token in wordfreq.top_n_list(lang, 20 * per_script):
            if _fits(token, length) and not any(c.isdigit() for c in token):
                words.append(token)
                if len(words) == per_script:
                    break
        out.append((name, tuple(words), tuple(freq[w] for w in words)))
    thai = tuple(w for w in THAI_WORDS if _fits(w, length))[:per_script]
    out.append(("Thai", thai, tuple(1.0 / r for r in range(1, len(thai) + 1))))
    items, freqs = emoji_items()
    out.append(("emoji", tuple(items[:per_script]), tuple(freqs[:per_script].tolist())))
    marked = [w for w in _split_wordlist()[0]
              if _fits(w, length) and ("'" in w or (any(c.isdigit() for c in w) and any(c.isalpha() for c in w)))]
    marked = marked[:per_script]
    out.append(("digits and apostrophes", tuple(marked), tuple(wordfreq.word_frequency(w, "en") for w in marked)))
    return tuple(out)


def multiscript_words(n: int, rng=None, per_script: int = 400, length: int = 6) -> Workload:
    """Words of eight scripts for ``n`` users, each script 1/8 of them (module docstring).

    Parameters
    ----------
    n : int ≥ 1
        Users.
    rng : ignored
        The population is deterministic (the workloads' common signature).
    per_script : int in [1, 2000]
        Most words taken from one script.
    length : int in [2, 6]
        Longest word, in graphemes.

    Returns
    -------
    Workload
        Items sorted by count; ``params`` holds ``alphabet`` (a tuple of graphemes), ``length`` and
        ``scripts`` (script → number of its words).
    """
    per_script = check_int("multiscript", "per_script", per_script, low=1, high=2000)
    length = check_int("multiscript", "length", length, low=2, high=6)
    seen: dict[str, float] = {}
    sizes = {}
    for name, words, weights in script_words(per_script, length):
        fresh = [(w, f) for w, f in zip(words, weights) if w not in seen]
        total = sum(f for _, f in fresh)
        sizes[name] = len(fresh)
        seen.update((w, f / total / len(SCRIPTS)) for w, f in fresh)
    items = np.array(list(seen), dtype=object)
    codec = WordCodec.for_words(items.tolist(), length)
    params = {"per_script": per_script, "length": length, "alphabet": codec.alphabet, "scripts": sizes,
              "source": "wordfreq hi, ar, ko, ja, vi, en emoji, en; Thai words listed"}
    return Workload.from_frequencies("multiscript", items, np.array(list(seen.values())), n, params)
