"""Generated slang looks like words of the vocabulary's own script: built from its graphemes, new, seeded."""

from __future__ import annotations

from pathlib import Path

import pytest
import wordfreq

from ldpsim.evaluation.workloads.plausible_slang import plausible_slang, script_of
from ldpsim.evaluation.workloads.slang import carried_words
from ldpsim.mechanisms.discovery.words import DEFAULT_ALPHABET, graphemes

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _trigrams(word: str, n: int = 3) -> set:
    """The runs of ``n`` graphemes of ``word`` with its start and end marked."""
    g = ["^"] * (n - 1) + [*graphemes(word), "$"]
    return {tuple(g[i:i + n]) for i in range(len(g) - n + 1)}


def test_english_slang_is_made_of_the_vocabularys_own_letter_sequences():
    words, freqs = carried_words(DEFAULT_ALPHABET, 8, 2000)
    seen = set().union(*(_trigrams(w) for w in words))
    for seed in range(3):
        slang = plausible_slang(words, 3, seed, 8, freqs)
        assert slang == plausible_slang(words, 3, seed, 8, freqs)  # seeded
        for word in slang:
            assert _trigrams(word) <= seen  # every three graphemes in a row (start and end included) occur in a word
            assert 4 <= len(word) <= 8 and set(word) <= set("abcdefghijklmnopqrstuvwxyz'")
            assert word not in words and wordfreq.word_frequency(word, "en") == 0


def test_one_slang_word_per_script_most_typed_first():
    arabic, hindi, korean = (wordfreq.top_n_list(lang, 300) for lang in ("ar", "hi", "ko"))
    words = arabic + hindi + korean
    weights = [1.0] * len(arabic) + [3.0] * len(hindi) + [2.0] * len(korean)
    slang = plausible_slang(words, 3, 7, 8, weights)
    assert [script_of(w) for w in slang] == ["DEVANAGARI", "HANGUL", "ARABIC"]
    for word, own in zip(slang, (hindi, korean, arabic)):
        assert word not in words
        # from its own script's words only: every pair in a row occurs in them (short Korean words leave the
        # order-2 chain few new walks, so it may back off to order 1)
        assert _trigrams(word, 2) <= set().union(*(_trigrams(w, 2) for w in own))


def test_a_script_with_few_words_backs_off_to_its_graphemes():
    slang = plausible_slang(["ภาษา", "ไทย"], 2, 0, 8)
    assert all(script_of(w) == "THAI" and w not in ("ภาษา", "ไทย") for w in slang)
    assert set("".join(slang)) <= set("ภาษาไทย")


def test_a_vocabulary_without_letters_is_refused():
    with pytest.raises(ValueError, match="no word of the vocabulary has a letter"):
        plausible_slang(["😂", "42"], 1, 0)


def test_the_keyboard_scenarios_slang_looks_like_an_english_word():
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    for seed in (1, 2, 2026):
        cfg, _ = load_deployment(SCENARIOS / "keyboard.toml", seed=seed)
        slang = cfg.words[-1]
        assert set(slang) <= set("abcdefghijklmnopqrstuvwxyz'") and 4 <= len(slang) <= 8, slang
        assert slang not in cfg.words[:-1]
