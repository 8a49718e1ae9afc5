"""Words in any script: symbols are user-perceived characters (docs/math.md §7.4), and every one-shot
discovery protocol finds Chinese words, digits and apostrophes, and emoji sequences."""

import numpy as np
import pytest

import ldpsim
from ldpsim.mechanisms.discovery.words import WordCodec, graphemes

MIXED = ["中文", "你好", "谢谢", "gr8", "don't", "👨‍👩‍👧", "👍🏽", "🇫🇷", "café", "拜拜"]


@pytest.mark.parametrize("text, expected", [
    ("👨‍👩‍👧", ["👨‍👩‍👧"]),                  # ZWJ family: one symbol
    ("👍🏽ok", ["👍🏽", "o", "k"]),             # skin-tone modifier stays with its emoji
    ("🇫🇷🇩🇪", ["🇫🇷", "🇩🇪"]),                # regional-indicator pairs
    ("1️⃣", ["1️⃣"]),                          # keycap sequence
    ("❤️", ["❤️"]),                            # variation selector
    ("cafe\u0301", ["c", "a", "f", "é"]),     # NFC: e + combining acute is é
    ("中文gr8", ["中", "文", "g", "r", "8"]),
])
def test_graphemes_keep_emoji_sequences_whole(text, expected):
    assert graphemes(text) == expected


def test_codec_for_a_vocabulary_in_any_script_round_trips():
    codec = WordCodec.for_words(MIXED)
    assert codec.length == 5 and len(codec.alphabet) == 21
    codes, inverse = codec.word_codes(MIXED)
    assert codec.decode(codes, codec.length)[inverse].tolist() == MIXED


def test_a_word_outside_the_alphabet_or_too_long_is_named():
    codec = WordCodec.for_words(["中文"])
    with pytest.raises(ValueError, match="'你好' holds '你'"):
        codec.check_word("你好")
    with pytest.raises(ValueError, match="1 to 2 symbols.*it has 3"):
        codec.check_word("中文中")


def test_an_alphabet_too_large_for_the_length_says_what_fits():
    big = [chr(0x4E00 + i) * 2 for i in range(3000)]           # 3 000 Chinese characters
    assert WordCodec.for_words(big).length == 2
    with pytest.raises(ValueError, match="3000 symbols allows words of at most 5"):
        WordCodec.for_words(big, length=6)


@pytest.mark.parametrize("name", ["pem", "treehist", "sfp"])
def test_every_one_shot_protocol_discovers_words_in_any_script(name):
    """At ε = 8 every word here has ≥ 7 000 users, many noise standard deviations above every cut-off
    (docs/math.md §7.4.1): the whole list is found, by the direct sampler and by the clients."""
    codec = WordCodec.for_words(MIXED)
    proto = ldpsim.make(name, epsilon=8.0, alphabet=codec.alphabet, length=codec.length + (name == "sfp"))
    counts = np.array([40000, 30000, 25000, 20000, 15000, 12000, 10000, 9000, 8000, 7000])
    found = proto.discover(proto.sample_aggregate(counts, np.random.default_rng(1), MIXED), top_k=10)
    assert sorted(found.words.tolist()) == sorted(MIXED)
    users = np.repeat(np.array(MIXED, dtype=object), counts // 10)
    top6 = proto.discover(proto.aggregate(proto.perturb(users, rng=2)), top_k=6)
    assert sorted(top6.words.tolist()) == sorted(MIXED[:6])


@pytest.mark.parametrize("name", sorted(ldpsim.mechanisms.INTERACTIVE))
def test_every_interactive_protocol_discovers_words_in_any_script(name):
    """Every interactive protocol, set as the days comparison sets it (ε = 40 per device over one pass,
    δ = 10⁻⁹), finds all ten words — Chinese, digits and apostrophes, emoji sequences — when each is
    held by ≥ 7 000 of 10⁵ devices: far above every protocol's threshold (docs/math.md §10). The tries of
    local reports admit a few false positives by design (a 3σ cut-off, or 0.1 expected per round): up
    to two extra strings are allowed."""
    from ldpsim.evaluation.discovery.equal_privacy import equal_privacy_protocols

    codec = WordCodec.for_words(MIXED)
    proto, _ = equal_privacy_protocols(codec, 40.0, 1e-9, 1, codec.length, gamma=0.5, names=(name,),
                                       cohort=100_000)[name]
    counts = np.array([16000, 14000, 12000, 10000, 9000, 8000, 8000, 8000, 8000, 7000])
    found = set(proto.run(items=MIXED, true_counts=counts, rng=3).words.tolist())
    assert set(MIXED) <= found and len(found - set(MIXED)) <= 2
