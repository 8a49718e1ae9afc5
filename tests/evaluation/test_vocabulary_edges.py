"""Vocabulary files at the edges: header-only tables, UTF-16, integral decimal counts, huge fields and
numbers, classic Mac line ends — each read correctly or refused with a message naming the file, the line,
the column and the value (exit 2 on the command line, never an internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ldpsim.evaluation.workloads import load_vocabulary
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.cli import main

TABLE = "item,count\nlol,3\nbrb,2\n😂,1\n"


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_a_header_only_table_says_it_has_no_rows(tmp_path):
    for name, text in (("h.csv", "item,count\n"), ("h.tsv", "item\tcount\n\n")):
        with pytest.raises(InputError, match=rf"{name}: has a header \(line 1\) but no rows"):
            load_vocabulary(_write(tmp_path / name, text))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_a_byte_order_mark_are_read(tmp_path, encoding):
    text = TABLE if encoding != "utf-16-be" else "\ufeff" + TABLE  # Python writes the BOM for utf-16 and utf-32
    v = load_vocabulary(_write(tmp_path / "u.csv", text, encoding))
    assert v.items == ("lol", "brb", "😂") and v.counts.tolist() == [3, 2, 1]


def test_utf16_without_a_byte_order_mark_is_named(tmp_path):
    with pytest.raises(InputError, match=r"line 1: holds NUL bytes.*UTF-16 without a byte-order mark"):
        load_vocabulary(_write(tmp_path / "u.csv", TABLE, "utf-16-le"))


def test_integral_decimal_counts_are_whole_numbers(tmp_path):
    v = load_vocabulary(_write(tmp_path / "d.csv", "item,count\nlol,100.0\nbrb,1e3\nsmh,7\n"))
    assert v.items == ("brb", "lol", "smh") and v.counts.tolist() == [1000, 100, 7]
    v = load_vocabulary(_write(tmp_path / "d.txt", "lol 100.0\nbrb\t2\n"))
    assert v.items == ("lol", "brb") and v.counts.tolist() == [100, 2]


def test_a_fractional_count_is_refused_clearly(tmp_path):
    with pytest.raises(InputError, match=r"f\.csv, line 3, column 'count': count must be a whole number >= 0; "
                                         r"got '100\.5', which is not whole"):
        load_vocabulary(_write(tmp_path / "f.csv", "item,count\nlol,2\nbrb,100.5\n"))


@pytest.mark.parametrize("count", ["1" + "0" * 400, "1e400", str(2 ** 53 + 1), "9" * 5000])
def test_a_count_beyond_two_to_the_53_is_refused(tmp_path, count):
    with pytest.raises(InputError, match=r"big\.csv, line 2, column 'count': count must be at most 2\*\*53"):
        load_vocabulary(_write(tmp_path / "big.csv", f"item,count\nlol,{count}\n"))


def test_counts_whose_total_passes_two_to_the_53_are_refused(tmp_path):
    with pytest.raises(InputError, match=r"the counts add up to .* more than 2\*\*53"):
        load_vocabulary(_write(tmp_path / "t.csv", f"item,count\na,{2 ** 53}\nb,{2 ** 53}\n"))


def test_a_field_beyond_the_csv_limit_names_its_line(tmp_path):
    with pytest.raises(InputError, match=r"long\.csv, line 3: a field is longer than 131,072 characters"):
        load_vocabulary(_write(tmp_path / "long.csv", "item,count\nok,1\n" + "x" * 200_000 + ",2\n"))


@pytest.mark.parametrize("name, text", [
    ("mac.csv", "item,count\rlol,3\rbrb,2\r😂,1\r"),
    ("mac.txt", "lol\t3\rbrb\t2\r😂\t1\r"),
    ("mixed.csv", "item,count\r\nlol,3\rbrb,2\n😂,1"),
])
def test_classic_mac_line_ends_are_line_ends(tmp_path, name, text):
    v = load_vocabulary(_write(tmp_path / name, text))
    assert v.items == ("lol", "brb", "😂") and v.counts.tolist() == [3, 2, 1]


def test_a_classic_mac_corpus_and_its_error_lines(tmp_path):
    v = load_vocabulary(_write(tmp_path / "m.corpus.txt", "lol brb\rlol\r"))
    assert v.items == ("lol", "brb") and v.counts.tolist() == [2, 1]
    with pytest.raises(InputError, match=r"m\.csv, line 3, column 'count'.*got 'x'"):
        load_vocabulary(_write(tmp_path / "m.csv", "item,count\rlol,3\rbrb,x\r"))


@pytest.mark.parametrize("name, text, message", [
    ("h.csv", "item,count\n", "has a header (line 1) but no rows"),
    ("f.csv", "item,count\na,100.5\n", "got '100.5', which is not whole"),
    ("b.csv", "item,count\na,1" + "0" * 400 + "\n", "count must be at most 2**53"),
    ("l.csv", "item,count\n" + "x" * 200_000 + ",2\n", "line 2: a field is longer than"),
])
def test_the_command_line_exits_2_naming_the_file(tmp_path, monkeypatch, capsys, name, text, message):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / name, text)
    assert main(["run", "my_emoji", "--vocabulary", name, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert name in err and message in err and "Traceback" not in err


def test_the_command_line_reads_utf16_and_mac_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "u.csv", TABLE, "utf-16")
    _write(tmp_path / "m.csv", TABLE.replace("\n", "\r"))
    for name in ("u.csv", "m.csv"):
        assert main(["run", "my_emoji", "--vocabulary", name, "--dry-run"]) == 0
        assert "items: 3; most frequent first: 'lol' 50%, 'brb' 33.3%, '😂' 16.7%" in capsys.readouterr().out
