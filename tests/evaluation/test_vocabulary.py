"""Your own vocabulary: the corpus tokenizer, the file readers, their errors, and the shipped data."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ldpsim.evaluation.workloads import load_vocabulary, make_workload, tokenize
from ldpsim.evaluation.workloads.activity import load_events_per_day
from ldpsim.runtime.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "scenarios" / "data"
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"          # 👨‍👩‍👧
FLAG_FR = "\U0001F1EB\U0001F1F7"                                # 🇫🇷
THUMB_MEDIUM = "\U0001F44D\U0001F3FD"                           # 👍🏽
KEYCAP_1 = "1\ufe0f\u20e3"                                      # 1️⃣
HEART = "\u2764\ufe0f"                                          # ❤️ (fully qualified)
RAINBOW = "\U0001F3F3\ufe0f\u200d\U0001F308"                    # 🏳️‍🌈


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# tokenizer ------------------------------------------------------------------------------------------
def test_english_with_emoji_words_as_a_keyboard_sees_them():
    text = f"Don’t stop, gr8 CAFÉ! well-known -dash- {THUMB_MEDIUM}{THUMB_MEDIUM} {FLAG_FR}{FLAG_FR} 2024"
    assert tokenize(text) == ["don't", "stop", "gr8", "café", "well-known", "dash", THUMB_MEDIUM, THUMB_MEDIUM,
                              FLAG_FR, FLAG_FR, "2024"]
    assert tokenize("CAFÉ Don't", lowercase=False) == ["CAFÉ", "Don't"]


def test_each_emoji_sequence_is_one_item():
    text = f"{FAMILY}{FLAG_FR}{THUMB_MEDIUM}{KEYCAP_1}{RAINBOW}\u2764 {HEART} \u2764\ufe0e"
    assert tokenize(text) == [FAMILY, FLAG_FR, THUMB_MEDIUM, KEYCAP_1, RAINBOW, HEART, HEART, HEART]


def test_nfc_makes_one_item_of_composed_and_decomposed_letters():
    assert tokenize("cafe\u0301 café") == ["café", "café"]


def test_chinese_is_split_into_dictionary_words():
    assert tokenize("我们今天很高兴，我喜欢饺子。") == ["我们", "今天", "很", "高兴", "我", "喜欢", "饺子"]
    assert tokenize("中华人民共和国成立了") == ["中华", "人民共和国", "成立", "了"]


def test_mixed_text_keeps_scripts_and_emoji_apart():
    assert tokenize(f"OK我们走吧{HEART}go!") == ["ok", "我们", "走", "吧", HEART, "go"]


def test_shipped_corpora_give_the_vocabularies_a_person_expects():
    en = load_vocabulary(DATA / "chat_en.corpus.txt")
    assert en.items[:4] == ("the", "😂", "you", HEART) and en.weights[:2].tolist() == [11, 7]
    assert {FAMILY, FLAG_FR, THUMB_MEDIUM, KEYCAP_1, "can't", "café", "gr8"} <= set(en.items)
    zh = load_vocabulary(DATA / "chat_zh.corpus.txt")
    assert set(zh.items[:4]) == {"我", "你", "很", "我们"}
    assert {"北京", "火锅", "高兴", "吃饭", "明天", FAMILY} <= set(zh.items)


# readers --------------------------------------------------------------------------------------------
def test_shipped_emoji_list_is_500_emoji_in_descending_counts():
    v = load_vocabulary(DATA / "emoji_500.csv")
    assert v.domain_size == 500 and v.unit == "count" and v.notices == ()
    assert np.all(np.diff(v.weights) <= 0) and v.ids[v.items[7]] == 7
    assert all(tokenize(item, lowercase=False) == [item] for item in v.items)  # each one emoji


@pytest.mark.parametrize("name, text", [
    ("t.csv", "Emoji,Count,note\n😂,5,x\n我们,7,y\ncafé,7,z\n"),
    ("t.tsv", "WORD\tcount\n😂\t5\n我们\t7\ncafé\t7\n"),
    ("t.txt", "😂 5\n我们\t7\ncafé 7\n"),
])
def test_tables_and_lists_read_the_same(tmp_path, name, text):
    v = load_vocabulary(_write(tmp_path / name, text))
    assert v.items == ("我们", "café", "😂") and v.weights.tolist() == [7, 7, 5]  # ties keep the file's order
    assert v.table()["item"].tolist() == ["我们", "café", "😂"]


def test_parquet_with_shares(tmp_path):
    import pandas as pd
    pd.DataFrame({"Item": ["a", "b", "c"], "share": [0.2, 0.5, 0.3]}).to_parquet(tmp_path / "s.parquet")
    v = load_vocabulary(tmp_path / "s.parquet")
    assert v.unit == "share" and v.items == ("b", "c", "a")
    assert v.to_workload(10).counts.tolist() == [5, 3, 2]
    with pytest.raises(InputError, match="holds shares, not counts"):
        v.to_workload()


def test_list_without_counts_is_uniform_with_a_notice(tmp_path):
    v = load_vocabulary(_write(tmp_path / "l.txt", "lol\nbrb\n\nsmh\n"))
    assert v.items == ("lol", "brb", "smh") and v.weights.tolist() == [1, 1, 1]
    assert "no counts given" in v.notices[0]


def test_duplicates_are_merged_with_a_notice(tmp_path):
    v = load_vocabulary(_write(tmp_path / "d.csv", "item,count\nhi,3\ncafe\u0301,1\nhi,4\ncafé,1\n"))
    assert v.items == ("hi", "café") and v.weights.tolist() == [7, 2]
    assert "2 repeated item(s) merged" in v.notices[0] and "line 2 and line 4" in v.notices[0]
    corpus = load_vocabulary(_write(tmp_path / "c.corpus.txt", "Hi hi HI\n"))
    assert corpus.items == ("hi",) and corpus.weights.tolist() == [3] and corpus.notices == ()


def test_top_keeps_the_most_frequent(tmp_path):
    v = load_vocabulary(DATA / "emoji_500.csv", top=10)
    assert v.domain_size == 10 and v.source["top"] == 10


def test_workload_by_name_scales_to_n_users():
    w = make_workload("vocabulary", 1000, vocabulary=str(DATA / "emoji_500.csv"), top=3)
    assert w.n == 1000 and w.items.tolist() == ["😂", "🙂", HEART] and w.counts.tolist() == [567, 264, 169]


@pytest.mark.parametrize("name, content, match", [
    ("a.csv", "emoji,number\n😂,1\n", r"a\.csv, line 1 \(the header\): needs exactly one weight column"),
    ("b.csv", "count\n1\n", "needs exactly one item column"),
    ("c.csv", "item,count,share\nx,1,1\n", "needs exactly one weight column"),
    ("d.csv", "item,count\nx,1\ny,-2\n", r"line 3, column 'count': count must be a whole number >= 0; got '-2'"),
    ("e.csv", "item,count\nx,lots\n", r"line 2, column 'count': count must be a whole number >= 0; got 'lots'"),
    ("f.csv", "item,share\nx,nan\n", r"line 2, column 'share': share must be a finite number >= 0; got 'nan'"),
    ("g.csv", "item,count\nx,1,2\n", "line 2: expected 2 fields"),
    ("h.csv", "item,count\nx,0\n", "every count is 0"),
    ("i.csv", "", "is empty"),
    ("j.csv", "\n\n", "holds only blank lines"),
    ("k.txt", "a 3\nb\n", "line 1 has a count but line 2 has none"),
    ("l.txt", "a\t-1\n", r"line 1, after the tab: count must be a whole number >= 0; got '-1'"),
    ("m.xlsx", "x", r"unknown extension '\.xlsx'"),
    ("n.csv", "item,count\n ,3\n", "line 2: the item is empty"),
    ("o.corpus.txt", "... !!! ???\n", "holds no words or emoji"),
])
def test_bad_files_name_the_file_the_place_and_the_value(tmp_path, name, content, match):
    with pytest.raises(InputError, match=match):
        load_vocabulary(_write(tmp_path / name, content))


def test_undecodable_bytes_name_their_line(tmp_path):
    (tmp_path / "u.csv").write_bytes("item,count\nok,1\nbad\xff,2\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"u\.csv, line 3: byte 4 of the line \(b'\\xff'\) is not UTF-8"):
        load_vocabulary(tmp_path / "u.csv")


def test_missing_folder_and_bad_parquet(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_vocabulary(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a folder"):
        load_vocabulary(tmp_path)
    with pytest.raises(InputError, match="not a readable Parquet file"):
        load_vocabulary(_write(tmp_path / "x.parquet", "item,count\n"))
    with pytest.raises(InputError, match="format must be one of"):
        load_vocabulary(DATA / "emoji_500.csv", format="xml")
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(InputError, match="is not a regular file"):  # refused, never waited on
        load_vocabulary(tmp_path / "pipe.csv")


def test_vocabularies_are_read_only_since_they_are_shared():
    v = load_vocabulary(DATA / "emoji_500.csv")
    with pytest.raises(ValueError, match="read-only"):
        v.weights[0] = 0
    assert load_vocabulary(DATA / "emoji_500.csv").weights[0] == 2_000_000


def test_a_file_too_large_for_memory_is_refused_before_reading(tmp_path, monkeypatch):
    path = _write(tmp_path / "big.csv", "item,count\n" + "x,1\n" * 1000)
    monkeypatch.setenv("LDPSIM_MEMORY_BYTES", "10000")
    with pytest.raises(InputError, match=r"big\.csv: .* more than half of this machine's"):
        load_vocabulary(path)


def test_a_link_is_followed_and_named(tmp_path):
    outside = _write(tmp_path / "real.csv", "item,count\nx,1\ny,oops\n")
    (tmp_path / "scenario").mkdir()
    os.symlink(outside, tmp_path / "scenario" / "link.csv")
    with pytest.raises(InputError, match=r"link\.csv \(→ .*real\.csv\), line 3"):
        load_vocabulary("link.csv", base=tmp_path / "scenario")


def test_a_changed_file_is_refused_by_its_hash(tmp_path):
    path = _write(tmp_path / "v.csv", "item,count\nx,2\ny,1\n")
    digest = load_vocabulary(path).source["sha256"]
    assert make_workload("vocabulary", 3, vocabulary=str(path), sha256=digest).counts.tolist() == [2, 1]
    _write(path, "item,count\nx,2\ny,5\n")
    with pytest.raises(InputError, match="changed since the scenario was read"):
        make_workload("vocabulary", 3, vocabulary=str(path), sha256=digest)


# per-device events ------------------------------------------------------------------------------------
def test_events_per_day_files(tmp_path):
    levels, devices = load_events_per_day(_write(tmp_path / "e.txt", "3\n0\n3\n1.5\n"))
    assert levels.tolist() == [0, 1.5, 3] and devices.tolist() == [1, 1, 2]
    levels, devices = load_events_per_day(_write(tmp_path / "e.csv", "device,Events_per_day\na,2\nb,2\n"))
    assert levels.tolist() == [2] and devices.tolist() == [2]
    with pytest.raises(InputError, match=r"e2\.txt, line 2: the number must be a finite number >= 0; got 'x'"):
        load_events_per_day(_write(tmp_path / "e2.txt", "1\nx\n"))
    with pytest.raises(InputError, match="needs a column 'events_per_day'"):
        load_events_per_day(_write(tmp_path / "e3.csv", "count\n1\n"))
    with pytest.raises(InputError, match="at least one device with a number > 0"):
        load_events_per_day(_write(tmp_path / "e4.txt", "0\n0\n"))


def test_plot_labels_of_chinese_items_draw_without_missing_glyphs():
    import io

    from matplotlib.figure import Figure

    from ldpsim.evaluation.report.plots import item_label
    labels = [item_label(x) for x in ("我们", "😂", "café")]
    assert labels == ["U+6211 U+4EEC", "face with tears of joy", "café"]
    fig = Figure()
    fig.subplots().set_xticks([0, 1, 2], labels)
    fig.savefig(io.BytesIO(), format="png")  # a missing glyph would warn, and warnings are errors here
