"""Words + slang: real English words and new strings no dictionary holds — docs/math.md §5, §7.4.

The discovery protocols (SFP, PEM, TreeHist) are judged on this workload:

* **Real words**: wordfreq's English list in frequency order (emoji excluded, as the ``words``
  workload), keeping only words the protocols can carry — 1 to ``length`` characters, every character
  in the alphabet (:data:`ldpsim.mechanisms.discovery.words.DEFAULT_ALPHABET`: a–z, the apostrophe, accented
  letters and one-code-point emoji); the first ``top`` such words, weighted by
  ``wordfreq.word_frequency``. Longer words and words with other characters are *dropped*, not
  truncated (a truncated word would be a different string).
* **Slang**: ``len(slang_shares)`` generated strings, 4 to ``length`` − 1 characters drawn from the
  whole alphabet, each holding at least one accented letter or emoji, and each rejected and redrawn
  if wordfreq knows it (frequency > 0) — so no dictionary holds them. Slang word i is typed by a
  share ``slang_shares[i]`` of the users (the real words share the rest, in their wordfreq
  proportions) from day ``start_day`` on (used by the deployment; a sweep sees every word).
* **Padding / termination** (the protocols' rule, :mod:`ldpsim.mechanisms.discovery.words`): each word is padded
  on the right with the padding symbol ∅ to ``length`` symbols; ∅ is also the terminator, so "a" and
  "ab" are different padded strings.

The generated words are recorded in ``params["slang"]`` (the first one is the *planted* word the
discovery metrics follow) with ``params["start_day"]``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.discovery.words import DEFAULT_ALPHABET, WordCodec

from ldpsim.evaluation.workloads.types import Workload

_ASCII = frozenset("abcdefghijklmnopqrstuvwxyz'")


@lru_cache(maxsize=4)
def carried_words(alphabet: str = DEFAULT_ALPHABET, length: int = 8, top: int = 2000) -> tuple[tuple, tuple]:
    """(words, wordfreq frequencies) of the ``top`` most frequent English words the codec can carry."""
    import wordfreq

    from ldpsim.evaluation.workloads.real import _split_wordlist

    codec = WordCodec(alphabet, length)
    allowed = set(alphabet)
    words = []
    for w in _split_wordlist()[0]:
        if len(w) <= length and set(w) <= allowed:
            words.append(w)
            if len(words) == top:
                break
    codec.symbols(words)  # every kept word is valid for the protocols
    return tuple(words), tuple(wordfreq.word_frequency(w, "en") for w in words)


def generate_slang(count: int, rng, alphabet: str = DEFAULT_ALPHABET, length: int = 8) -> list[str]:
    """``count`` distinct new strings (module docstring), deterministic given ``rng``."""
    import wordfreq

    rng = as_generator(rng)
    chars = np.array(list(alphabet), dtype=object)
    special = [c for c in alphabet if c not in _ASCII]
    if not special:
        raise ValueError("generate_slang: the alphabet has no accented letter or emoji to mark slang with.")
    out: list[str] = []
    while len(out) < count:
        size = int(rng.integers(4, length))  # 4 .. length − 1 characters
        word = list(rng.choice(chars, size=size))
        word[int(rng.integers(1, size))] = special[int(rng.integers(len(special)))]
        text = "".join(word)
        if text not in out and wordfreq.word_frequency(text, "en") == 0:
            out.append(text)
    return out


def words_slang(n: int, rng=None, top: int = 2000, slang_shares=(0.01, 0.002, 0.001), start_day: int = 0,
                length: int = 8) -> Workload:
    """Real words + generated slang for ``n`` users (module docstring)."""
    top = check_int("words-slang", "top", top, low=1)
    length = check_int("words-slang", "length", length, low=5, high=11)
    start_day = check_int("words-slang", "start_day", start_day, low=0)
    shares = np.array([check_real("words-slang", "slang_shares", s, 0.0, 1.0) for s in slang_shares])
    if shares.sum() >= 1.0:
        raise ValueError(f"The 'slang_shares' parameter of words-slang must sum to less than 1. Got {slang_shares!r} instead.")
    words, freqs = carried_words(DEFAULT_ALPHABET, length, top)
    slang = generate_slang(shares.size, rng, DEFAULT_ALPHABET, length)
    real = np.asarray(freqs) / np.sum(freqs) * (1.0 - shares.sum())
    items = np.array(list(words) + slang, dtype=object)
    params = {"top": top, "slang": tuple(slang), "slang_shares": tuple(shares.tolist()), "start_day": start_day,
              "length": length, "source": "wordfreq en + generated slang"}
    return Workload.from_frequencies("words-slang", items, np.concatenate([real, shares]), n, params)
