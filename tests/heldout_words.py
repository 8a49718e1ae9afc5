"""A held-out vocabulary in eight scripts for the discovery tests: Hindi, Arabic, Korean, Japanese,
Vietnamese, Thai, emoji sequences (skin tones, ZWJ families, flags) and Latin words with digits and
apostrophes, plus synthetic slang words at 0.04–2 % of the devices.

Words are built from each script's syllables or letters with a seeded generator (none of them is in a
shipped corpus), split into user-perceived characters by the project's codec (``WordCodec.for_words``),
and given Zipf-distributed holders over ``devices`` devices (exact integer counts summing to it).
"""

from __future__ import annotations

from typing import NamedTuple

import unicodedata

import numpy as np

from ldpsim.mechanisms.discovery.words import WordCodec, graphemes


def _span(first: int, last: int) -> list[str]:
    return [chr(c) for c in range(first, last + 1)]


_HINDI_CONSONANTS = _span(0x915, 0x928) + _span(0x92A, 0x930) + ["ल", "व", "श", "स", "ह"]
_HINDI_SIGNS = ["", "ा", "ि", "ी", "ु", "ू", "े", "ै", "ो", "ं"]
_ARABIC = _span(0x628, 0x63A) + _span(0x641, 0x64A)
_HIRAGANA = _span(0x3042, 0x3093)
_KATAKANA = _span(0x30A2, 0x30F3)
_KANJI = list("日本語人大小中山川田水火木金土月年時間気天空雨電車話見食飲行来学生先今何私友達好")
_THAI_CONSONANTS = _span(0xE01, 0xE2E)
_THAI_VOWELS = ["", "ั", "ิ", "ี", "ึ", "ื", "ุ", "ู", "่", "้"]
_VI_VOWELS = list("aăâeêioôơuưy")
_VI_TONES = ["", "\u0300", "\u0301", "\u0303", "\u0309", "\u0323"]
_VI_ONSETS = ["b", "c", "d", "đ", "g", "h", "k", "l", "m", "n", "ng", "nh", "ph", "qu", "r", "s", "t", "th", "tr", "v", "x"]
_EMOJI = list("😂❤🔥👍😭🙏😊😍🥺✨🎉💯😎🤔🙌👀💀🥰😅🤣")
_TONES = ["", "\U0001F3FB", "\U0001F3FC", "\U0001F3FD", "\U0001F3FE", "\U0001F3FF"]
_ZWJ = ["👨\u200d👩\u200d👧", "👩\u200d💻", "🧑\u200d🚀", "👨\u200d🍳", "🏳️\u200d🌈", "❤️\u200d🔥", "🇫🇷", "🇯🇵", "🇧🇷"]
_LATIN = list("abcdefghijklmnopqrstuvwxyz")


#: the eight scripts of the held-out set
SCRIPTS = ("hindi", "arabic", "korean", "japanese", "vietnamese", "thai", "emoji", "digits")


def _script_words(rng: np.random.Generator, per_script: int, scripts) -> list[list[str]]:
    """``per_script`` distinct words in each of ``scripts`` (one list a script)."""

    def hindi():
        return "".join(rng.choice(_HINDI_CONSONANTS) + rng.choice(_HINDI_SIGNS) for _ in range(rng.integers(2, 4)))

    def arabic():
        return "".join(rng.choice(_ARABIC, size=rng.integers(3, 6)))

    def korean():
        return "".join(chr(0xAC00 + int(rng.integers(0, 11172))) for _ in range(rng.integers(2, 4)))

    def japanese():
        pool = (_HIRAGANA, _KATAKANA, _KANJI)[int(rng.integers(0, 3))]
        return "".join(rng.choice(pool, size=rng.integers(2, 5)))

    def vietnamese():
        syllable = rng.choice(_VI_ONSETS) + rng.choice(_VI_VOWELS) + rng.choice(_VI_TONES)
        return syllable + ("" if rng.random() < 0.5 else rng.choice(["c", "n", "m", "t", "p"]))

    def thai():
        return "".join(rng.choice(_THAI_CONSONANTS) + rng.choice(_THAI_VOWELS) for _ in range(rng.integers(2, 5)))

    def emoji():
        if rng.random() < 0.3:
            return str(rng.choice(_ZWJ)) + str(rng.choice(_EMOJI))
        return "".join(str(rng.choice(_EMOJI[:8])) + str(rng.choice(_TONES)) for _ in range(rng.integers(1, 4)))

    def digits():
        core = "".join(rng.choice(_LATIN, size=rng.integers(1, 4)))
        return (core + str(rng.integers(0, 10)) if rng.random() < 0.5 else core + "'" + str(rng.choice(_LATIN)))

    out = []
    makers = dict(zip(SCRIPTS, (hindi, arabic, korean, japanese, vietnamese, thai, emoji, digits)))
    for name in SCRIPTS:  # every script draws, so a subset has the same words as the whole set
        make = makers[name]
        words: dict[str, None] = {}
        while len(words) < per_script:
            w = unicodedata.normalize("NFC", make())
            if 1 <= len(graphemes(w)) <= 5:
                words[w] = None
        if name in scripts:
            out.append(list(words))
    return out


class Heldout(NamedTuple):
    """Words (vocabulary then slang), their holders among ``devices``, and the codec of all of them."""

    words: tuple
    counts: np.ndarray
    slang: tuple
    codec: WordCodec


def heldout(devices: int = 1_000_000, per_script: int = 320, n_slang: int = 20, seed: int = 2024,
            scripts=SCRIPTS) -> Heldout:
    """The held-out set: ``per_script`` words of each of ``scripts`` with Zipf(1) holders and ``n_slang``
    slang words (two characters of a word and the last of another, from two scripts, never in the
    vocabulary) at shares spread log-evenly over 0.04–2 %."""
    rng = np.random.default_rng(seed)
    scripts = _script_words(rng, per_script, scripts)
    vocab = [w for ws in scripts for w in ws]
    slang: dict[str, None] = {}
    while len(slang) < n_slang:
        a, b = rng.choice(len(scripts), size=2, replace=False)
        w = "".join(graphemes(scripts[a][int(rng.integers(per_script))])[:2]
                    + graphemes(scripts[b][int(rng.integers(per_script))])[-1:])
        if w not in vocab and 1 <= len(graphemes(w)) <= 5:
            slang[w] = None
    shares = np.geomspace(0.0004, 0.02, n_slang)
    slang_counts = np.floor(shares * devices).astype(np.int64)
    rest = devices - int(slang_counts.sum())
    zipf = 1.0 / np.arange(1, len(vocab) + 1) ** 1.0
    order = rng.permutation(len(vocab))
    vocab_counts = np.floor(zipf / zipf.sum() * rest).astype(np.int64)
    vocab_counts[0] += rest - int(vocab_counts.sum())
    words = tuple(np.asarray(vocab, dtype=object)[order].tolist()) + tuple(slang)
    counts = np.concatenate([vocab_counts, slang_counts])
    return Heldout(words, counts, tuple(slang), WordCodec.for_words(words))


def invented(found, words) -> int:
    """How many of the ``found`` words no device holds (not in ``words``)."""
    known = set(words)
    return sum(w not in known for w in found)
