"""Vocabularies in every script: words of scripts written without spaces, one rule for emoji variants."""

from __future__ import annotations

from pathlib import Path

import pytest

from ldpsim.evaluation.workloads import load_vocabulary, tokenize

HEART_TEXT = "\u2764"             # ❤ (no selector: text presentation by default)
HEART = "\u2764\ufe0f"            # ❤️ (fully qualified)
KEYCAP_1 = "1\ufe0f\u20e3"        # 1️⃣

THAI = ("ฉันรักภาษาไทยมาก\n"
        "วันนี้อากาศร้อนมาก ฉันอยากกินข้าวเหนียวมะม่วง\n"
        "เพื่อนของฉันชอบกินข้าวผัด 😂😂\n")
JAPANESE = ("今日はとても暑いですね。\n"
            "私の本を読みましたか？\n"
            "明日は友達と映画を見に行きます。\n"
            "東京の天気はどうですか 😂\n")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_thai_corpus_gives_words_not_phrases(tmp_path):
    v = load_vocabulary(_write(tmp_path / "th.corpus.txt", THAI))
    assert {"ฉัน", "รัก", "ภาษา", "ไทย", "มาก", "อากาศ", "ร้อน", "กิน", "ข้าว", "มะม่วง", "เพื่อน", "ชอบ"} <= set(v.items)
    counts = dict(zip(v.items, v.counts.tolist()))
    assert counts["ฉัน"] == 3 and counts["มาก"] == 2 and counts["กิน"] == 2 and counts["😂"] == 2
    assert max(len(item) for item in v.items) <= 7  # no phrase-long item (the longest word here: มะม่วง, 6)
    assert v.notices == ()


def test_japanese_corpus_gives_words(tmp_path):
    v = load_vocabulary(_write(tmp_path / "ja.corpus.txt", JAPANESE))
    assert {"今日", "とても", "暑い", "です", "私", "本", "明日", "友達", "映画", "東京", "天気"} <= set(v.items)
    counts = dict(zip(v.items, v.counts.tolist()))
    assert counts["は"] == 3 and counts["の"] == 2 and counts["を"] == 2
    assert "ですね" not in counts and "はとても" not in counts  # kana runs are split into their words


@pytest.mark.parametrize("text, words", [
    ("ສະບາຍດີຂ້ອຍຮັກພາສາລາວ", ["ສະບາຍດີ", "ຂ້ອຍ", "ຮັກ", "ພາສາ", "ລາວ"]),   # Lao
    ("ខ្ញុំស្រឡាញ់", ["ខ្ញុំ", "ស្រឡាញ់"]),                                   # Khmer
    ("စကားကိုချစ်တယ်", ["စကား", "ကို", "ချစ်", "တယ်"]),                       # Burmese
])
def test_lao_khmer_and_burmese_are_split_into_words(text, words):
    assert tokenize(text) == words


def test_chinese_without_kana_keeps_its_own_segmenter():
    assert tokenize("我们今天很高兴") == ["我们", "今天", "很", "高兴"]


def test_a_script_without_a_segmenter_gets_a_notice(tmp_path):
    tai_tham = "\u1a20\u1a74\u1a60\u1a36\u1a6e\u1a6c"  # a run of Tai Tham letters and vowel signs
    v = load_vocabulary(_write(tmp_path / "lanna.corpus.txt", f"ok {tai_tham}\nok\n"))
    assert tai_tham in v.items and v.counts[v.ids["ok"]] == 2
    (note,) = v.notices
    assert "1 run(s) of Tai Tham text kept whole" in note and "no word segmenter" in note and "line 1" in note


# one presentation-variant rule for every format ------------------------------------------------------
@pytest.mark.parametrize("name, text", [
    ("v.csv", f"item,count\n{HEART},3\n{HEART_TEXT},2\nlol,1\n"),
    ("v.txt", f"{HEART}\t3\n{HEART_TEXT}\t2\nlol\t1\n"),
    ("v.corpus.txt", f"{HEART} {HEART} {HEART}\n{HEART_TEXT} {HEART_TEXT} lol\n"),
])
def test_emoji_variants_are_one_item_in_every_format_with_a_note(tmp_path, name, text):
    v = load_vocabulary(_write(tmp_path / name, text))
    assert v.items == (HEART, "lol") and v.counts.tolist() == [5, 1]
    (note,) = v.notices
    assert "fully-qualified emoji" in note and repr(HEART_TEXT) in note and repr(HEART) in note


def test_a_text_selector_and_a_keycap_without_its_selector_are_the_emoji():
    assert tokenize(f"{HEART_TEXT}\ufe0e 1\u20e3 {KEYCAP_1}") == [HEART, KEYCAP_1, KEYCAP_1]


def test_variants_inside_a_table_item_follow_the_same_rule(tmp_path):
    v = load_vocabulary(_write(tmp_path / "p.csv", f"item,count\ni {HEART_TEXT} u,1\ni {HEART} u,2\n"))
    assert v.items == (f"i {HEART} u",) and v.counts.tolist() == [3]
    assert "1 of them merged with another row" in v.notices[0]


def test_a_file_already_in_the_rule_gets_no_note(tmp_path):
    v = load_vocabulary(_write(tmp_path / "ok.csv", f"item,count\n{HEART},3\n{KEYCAP_1},1\n"))
    assert v.notices == ()


# --dry-run shows the vocabulary ----------------------------------------------------------------------
def test_dry_runs_show_the_vocabularys_size_and_first_items(tmp_path, monkeypatch, capsys):
    from ldpsim.scenarios.cli import main
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "th.corpus.txt", THAI)
    assert main(["sweep", "my-emoji-sweep", "--vocabulary", "th.corpus.txt", "--dry-run"]) == 0
    assert "th.corpus.txt (corpus): 19 items, 25 counted; most frequent first: 'ฉัน' 3, 'มาก' 2" in \
        capsys.readouterr().out
    assert main(["run", "my-emoji", "--vocabulary", "th.corpus.txt", "--dry-run"]) == 0
    assert "items: 19; most frequent first: 'ฉัน' 12%, 'มาก' 8%" in capsys.readouterr().out
