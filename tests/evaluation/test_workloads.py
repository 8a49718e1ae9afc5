"""Workloads: exact rounding, registry, parameters, real word/emoji lists, CSV files, numeric ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpsim.evaluation.workloads.make import (WORKLOADS, NumericWorkload, Workload, largest_remainder, make_workload,
                                  register_workload, workload_from_csv)
from ldpsim.evaluation.workloads.readings import key_centres
from ldpsim.evaluation.workloads.real import letter_frequencies
from tests.stats import assert_chisquare_gof, assert_z


# largest remainder (hand-computed) ---------------------------------------------------------------
def test_largest_remainder_hand_examples():
    # 7·(0.5, 0.3, 0.2) = (3.5, 2.1, 1.4): floors (3, 2, 1), one left over → largest remainder 0.5
    assert largest_remainder([0.5, 0.3, 0.2], 7).tolist() == [4, 2, 1]
    # 10·(1/3, 1/3, 1/3): floors 3 each, one left over, equal remainders → the earlier item
    assert largest_remainder([1, 1, 1], 10).tolist() == [4, 3, 3]
    # unnormalised input; 5·(1/6, 2/6, 3/6) = (0.833, 1.667, 2.5) → floors (0, 1, 2), two left: items 0, 1
    assert largest_remainder([1, 2, 3], 5).tolist() == [1, 2, 2]
    assert largest_remainder([2, 0, 1], 0).tolist() == [0, 0, 0]


@pytest.mark.parametrize("bad", [[], [1, -1], [0, 0], [1, np.nan], [[1, 2]]])
def test_largest_remainder_rejects_bad_frequencies(bad):
    with pytest.raises(ValueError, match="frequencies"):
        largest_remainder(bad, 10)


def test_largest_remainder_sums_to_n():
    f = np.random.default_rng(0).random(1000)
    for n in (1, 999, 10 ** 6 + 7):
        c = largest_remainder(f, n)
        assert c.sum() == n and np.all(np.abs(c - n * f / f.sum()) < 1)


# synthetic workloads -----------------------------------------------------------------------------
def test_harmonic_hand_example():
    # 1000·(1, 1/2, 1/3, 1/4)/(25/12) = (480, 240, 160, 120) exactly
    w = make_workload("harmonic", 1000, domain_size=4)
    assert w.counts.tolist() == [480, 240, 160, 120]
    assert w.items.tolist() == [0, 1, 2, 3] and w.ranks.tolist() == [1, 2, 3, 4]
    assert w.n == 1000 and w.domain_size == 4
    np.testing.assert_allclose(w.frequencies, [0.48, 0.24, 0.16, 0.12])


def test_zipf_exponential_even_shapes():
    z = make_workload("zipf", 10 ** 6, domain_size=50, s=2.0)
    expect = 10 ** 6 / np.arange(1, 51) ** 2 / (1 / np.arange(1, 51) ** 2).sum()
    assert np.all(np.abs(z.counts - expect) < 1)
    e = make_workload("exponential", 10 ** 6, domain_size=20)
    ratios = e.counts[1:6] / e.counts[:5]
    np.testing.assert_allclose(ratios, 1 / 1.3, rtol=1e-4)
    assert make_workload("even", 10, domain_size=4).counts.tolist() == [3, 3, 2, 2]


def test_values_are_a_shuffled_population():
    w = make_workload("harmonic", 1000, domain_size=4)
    v = w.values(np.random.default_rng(1))
    assert np.bincount(v).tolist() == w.counts.tolist()
    assert not np.all(np.diff(v) >= 0)  # shuffled (sorted with probability ~0)
    np.testing.assert_array_equal(v, w.values(np.random.default_rng(1)))
    labels = make_workload("census-marital", 100).values(3, as_ids=False)
    assert labels.dtype == object and isinstance(labels[0], str)


def test_unknown_name_and_parameter_list_what_is_allowed():
    with pytest.raises(ValueError, match=r"Unknown workload 'zipff'.*'harmonic'"):
        make_workload("zipff", 10)
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['top'\].*allowed: \['domain_size', 's'\]"):
        make_workload("zipf", 10, top=3)
    with pytest.raises(ValueError, match=r"'domain_size' parameter of zipf must be an int"):
        make_workload("zipf", 10, domain_size=0)
    with pytest.raises(ValueError, match=r"'x' parameter of exponential"):
        make_workload("exponential", 10, x=1.5)
    with pytest.raises(TypeError, match=r"'n' parameter"):
        make_workload("even", 10.0)


def test_workload_validates_its_fields():
    with pytest.raises(ValueError, match="descending"):
        Workload("w", np.arange(2), np.array([1, 2]))
    with pytest.raises(ValueError, match="distinct"):
        Workload("w", np.array(["a", "a"]), np.array([2, 1]))
    with pytest.raises(ValueError, match="equal length"):
        Workload("w", np.arange(3), np.array([2, 1]))


def test_register_workload():
    def two_items(n, rng=None, share=0.5):
        return Workload.from_frequencies("two", ["a", "b"], [share, 1 - share], n)

    register_workload("two-items-test", two_items)
    try:
        assert make_workload("two-items-test", 10, share=0.7).counts.tolist() == [7, 3]
        with pytest.raises(ValueError, match="already registered"):
            register_workload("two-items-test", two_items)
    finally:
        del WORKLOADS["two-items-test"]
    with pytest.raises(TypeError, match=r"must accept \(n, rng"):
        register_workload("bad", lambda k: k)


# real workloads -------------------------------------------------------------------------------------
def test_words_top_n_without_emoji():
    w = make_workload("words", 10 ** 6, top=2000)
    assert w.domain_size == 2000 and w.n == 10 ** 6
    assert w.items[:3].tolist() == ["the", "to", "and"]
    assert "😂" not in set(w.items.tolist())
    assert w.items.dtype == object


def test_emoji_workload_and_its_cap():
    e = make_workload("emoji", 1000, top=721)
    assert e.domain_size == 721 and e.items[0] == "😂"
    assert not {"©", "®", "™"} & set(e.items)
    with pytest.raises(ValueError, match=r"'top' parameter of emoji must be an int in the range \[1, 721\]"):
        make_workload("emoji", 1000, top=722)
    with_symbols = make_workload("emoji", 1000, top=777, symbols=True)
    assert list(with_symbols.items[:4]) == ["©", "😂", "®", "™"]


def test_emoji_presentation_variants_are_one_item():
    """❤️ (U+2764 U+FE0F) and ❤ (U+2764) are one emoji: one item whose frequency is their sum."""
    import wordfreq

    from ldpsim.evaluation.workloads.real import emoji_items, strip_presentation
    items, freqs = emoji_items()
    bare = [strip_presentation(t) for t in items]
    assert len(set(bare)) == len(bare)  # no two items differ only in a variation selector
    assert "❤" not in items and "☺" not in items
    for shown, text in (("❤️", "❤"), ("☺️", "☺")):
        i = items.index(shown)
        assert freqs[i] == pytest.approx(wordfreq.word_frequency(shown, "en") + wordfreq.word_frequency(text, "en"))
    assert list(freqs) == sorted(freqs, reverse=True)
    assert items.index("❤️") == 2  # 2.95e-6 + 1.17e-6 lifts it above 😍 (3.55e-6)


def test_emoji_workload_leaves_out_text_symbols():
    """Text-default characters typed mostly as text are symbols (module docstring of workloads.real);
    emoji-default ones stay, whatever their frequency."""
    import emoji as emoji_data

    top = set(make_workload("emoji", 1000, top=200).items)
    assert not {"♦", "♠", "♣", "♥", "♥️", "▪", "▶", "✔", "✔️", "☑", "©", "®", "™"} & top
    qualified = emoji_data.STATUS["fully_qualified"]
    assert all(emoji_data.EMOJI_DATA[t]["status"] == qualified for t in top)  # every item as a keyboard writes it
    assert {"😂", "❤️", "☺️", "✌️", "🔥"} <= top
    with_symbols = set(make_workload("emoji", 1000, top=40, symbols=True).items)
    assert {"♦", "♥", "✔"} <= with_symbols


def test_census_substitutes_have_the_papers_category_counts():
    assert make_workload("census-education", 2_458_285).domain_size == 18
    m = make_workload("census-marital", 2_458_285)
    assert m.domain_size == 7 and m.n == 2_458_285 and "substitute" in m.params


# CSV ------------------------------------------------------------------------------------------------
def test_workload_from_csv(tmp_path):
    p = tmp_path / "keys.csv"
    p.write_text("item,count\nb,1\na,3\nc,0\n", encoding="utf-8")
    w = workload_from_csv(p)
    assert w.items.tolist() == ["a", "b", "c"] and w.counts.tolist() == [3, 1, 0] and w.name == "keys"
    assert workload_from_csv(p, n=8).counts.tolist() == [6, 2, 0]


@pytest.mark.parametrize("text, match", [
    ("a,3\n", "needs exactly one item column"),
    ("item,count\na,x\n", "line 2, column 'count': count must be a whole number >= 0; got 'x'"),
    ("item,count\na,-1\n", "line 2, column 'count': count must be a whole number >= 0; got '-1'"),
    ("item,count\na,1,2\n", "line 2: expected 2 fields"),
    ("item,count\na,0\n", "every count is 0"),
])
def test_workload_from_csv_errors(tmp_path, text, match):
    p = tmp_path / "w.csv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        workload_from_csv(p)


def test_workload_from_csv_missing_file(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        workload_from_csv(tmp_path / "nope.csv")


# numeric ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, mean, sd, low, high", [("heights", 68.0, 1.9, 54.0, 84.0),
                                                      ("weights", 127.1, 11.7, 60.0, 200.0)])
def test_normal_workloads_use_the_fixed_public_range(name, mean, sd, low, high):
    n = 200_000
    w = make_workload(name, n, rng=5)
    assert isinstance(w, NumericWorkload) and w.values.shape == (n,)
    assert w.params["range"] == (low, high)
    # normalised reading 2(x − low)/(high − low) − 1: mean and sd follow affinely (no clipping this far in)
    scale = 2.0 / (high - low)
    assert_z(w.true_mean, (mean - low) * scale - 1.0, sd * scale / math.sqrt(n), what=f"{name} mean")
    np.testing.assert_array_equal(w.values, make_workload(name, n, rng=5).values)


def test_normal_range_does_not_come_from_the_data():
    a = make_workload("heights", 10, rng=1)
    b = make_workload("heights", 10_000, rng=2)
    assert a.params["range"] == b.params["range"]
    assert a.values.max() < 1 and a.values.min() > -1  # ten readings do not span the public range


def test_typing_speed_lognormal_moments():
    n = 200_000
    w = make_workload("typing-speed", n, rng=3, mean=36.2, sd=13.2, max_wpm=100.0)
    wpm = (w.values + 1) * 50  # back to words per minute (no clipping below 0; above 100 wpm p ≈ 1e-5)
    assert_z(wpm.mean(), 36.2, 13.2 / math.sqrt(n), what="typing speed mean (wpm)")


def test_tap_positions_follow_letter_frequencies():
    """With zero spread every tap sits on a key centre: key counts ~ Multinomial(letter shares)."""
    w = make_workload("tap-positions", 50_000, rng=4, spread=0.0)
    assert w.values.shape == (50_000, 2)
    centres = key_centres()
    letters = sorted(centres)
    xy = np.array([centres[ch] for ch in letters])
    hit = np.all(w.values[:, None, :] == xy[None, :, :], axis=2)
    assert np.all(hit.sum(axis=1) == 1)
    freqs = letter_frequencies(2000)
    assert_chisquare_gof(hit.sum(axis=0), [freqs[ch] for ch in letters], what="taps per key")
    assert max(freqs, key=freqs.get) == "e"
    assert centres["q"][1] > centres["a"][1] > centres["z"][1] and centres["a"][0] > centres["q"][0]


def test_tap_positions_spread_stays_in_the_square():
    w = make_workload("tap-positions", 20_000, rng=4, spread=0.5)
    assert np.abs(w.values).max() <= 1 and w.true_mean.shape == (2,)
