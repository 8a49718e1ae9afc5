"""Lines and numbers of the text files a user hands ldpsim (vocabularies, per-device activity).

* **Encodings.** A file is UTF-8 (a byte-order mark is allowed), or UTF-16 or UTF-32 when it starts
  with that encoding's byte-order mark (what spreadsheet programs and Windows editors write as
  "Unicode text"). Bytes that do not decode name their line.
* **Line ends.** ``\\n`` (Unix), ``\\r\\n`` (Windows) and a lone ``\\r`` (classic Mac OS) all end a line;
  every line is handed on ending in ``\\n``.
* **Numbers** (:func:`parse_number`). A count is a whole number written as an integer (``100``) or
  as a number with nothing after the point (``100.0``, ``1e3``); ``100.5`` is refused. Counts and
  shares are at most :data:`MAX_NUMBER` = 2⁵³, the largest range in which every whole number is exact
  in floating point (the estimators' arithmetic): a count of 10⁴⁰⁰ is refused, not overflowed.
"""

from __future__ import annotations

import codecs
import io
import math
import re

from ldpsim.runtime.errors import InputError

#: the largest count or share accepted: every whole number up to it is exact in float64
MAX_NUMBER = 2 ** 53
#: byte-order marks → the codec that reads the rest (UTF-32's are tried first: UTF-32-LE's starts with UTF-16-LE's)
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"), (codecs.BOM_UTF8, "utf-8-sig"))
_LINE_END = re.compile(r"\r\n|\r|\n")


def encoding_of(real: str) -> str:
    """The codec of a file by its byte-order mark: ``"utf-32"``, ``"utf-16"``, ``"utf-8-sig"`` or ``"utf-8"``."""
    with open(real, "rb") as fh:
        head = fh.read(4)
    return next((name for bom, name in BOMS if head.startswith(bom)), "utf-8")


def _split(text: str):
    """The lines of ``text`` (one physical line of the file, which may hold lone ``\\r``), each ending in ``\\n``."""
    parts = _LINE_END.split(text)
    if parts[-1] == "":
        parts.pop()
    return [p + "\n" for p in parts]


def text_lines(real: str, shown: str, what: str = "vocabulary file"):
    """(line number, text ending in ``\\n``) of a text file, streamed (rules in the module docstring).

    Parameters
    ----------
    real : str
        The file's path.
    shown : str
        How messages name the file.
    what : str
        What the file is, for messages.

    Raises
    ------
    InputError
        Bytes that do not decode, naming the line (and for UTF-8 the byte).
    """
    encoding = encoding_of(real)
    number = 0
    with open(real, "rb") as fh:
        if encoding in ("utf-8", "utf-8-sig"):
            for raw in fh:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"{what} {shown}, line {number + 1}: byte {exc.start + 1} of the line "
                                     f"({raw[exc.start:exc.start + 1]!r}) is not UTF-8; text files are UTF-8 "
                                     "(or UTF-16 with a byte-order mark).") from None
                if "\x00" in text:
                    raise InputError(f"{what} {shown}, line {number + 1}: holds NUL bytes, so it is not UTF-8 text; "
                                     "is it UTF-16 without a byte-order mark? Save it as UTF-8.")
                for line in _split(text.lstrip("\ufeff") if number == 0 else text):
                    number += 1
                    yield number, line
            return
        reader = io.TextIOWrapper(fh, encoding=encoding, newline="")
        try:
            for text in reader:
                for line in _split(text.lstrip("\ufeff") if number == 0 else text):
                    number += 1
                    yield number, line
        except UnicodeDecodeError:
            raise InputError(f"{what} {shown}, line {number + 1}: is not valid {encoding.upper()} although the "
                             f"file starts with a {encoding.upper()} byte-order mark.") from None


def parse_number(text: str, where: str, name: str, whole: bool = False) -> float:
    """``text`` as a finite number in [0, :data:`MAX_NUMBER`] (a whole number when ``whole``; rules in the
    module docstring); errors name ``where`` and ``name``.

    >>> parse_number("100.0", "here", "count", whole=True), parse_number("1e3", "here", "count", whole=True)
    (100.0, 1000.0)
    """
    allowed = "a whole number >= 0" if whole else "a finite number >= 0"
    plain = text.strip()
    if re.fullmatch(r"\+?\d+", plain):  # an integer: compared exactly (a float would round 2**53 + 1 down)
        value = int(plain) if len(plain) <= 20 else math.inf
    else:
        try:
            value = float(plain)
        except ValueError:
            raise InputError(f"{where}: {name} must be {allowed}; got {text!r}.") from None
        if math.isnan(value) or value < 0 or (math.isinf(value) and not re.search(r"\d", plain)):
            raise InputError(f"{where}: {name} must be {allowed}; got {text!r}.")
    if value > MAX_NUMBER:
        shown = plain if len(plain) <= 30 else f"{plain[:24]}... ({len(plain)} characters)"
        raise InputError(f"{where}: {name} must be at most 2**53 = {MAX_NUMBER:,} (larger numbers are not exact "
                         f"in floating point); got {shown}.")
    if whole and not float(value).is_integer():
        raise InputError(f"{where}: {name} must be {allowed}; got {text!r}, which is not whole (a column of "
                         "fractions is headed 'share').")
    return float(value)
