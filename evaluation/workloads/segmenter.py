"""Words of scripts written without spaces: ICU's dictionary-based word break, and the scripts it cannot split.

Thai, Lao, Khmer and Burmese (Myanmar) are written without spaces between words; so is Japanese. A
keyboard vocabulary needs their words, not their phrases, so the corpus tokenizer (:mod:`.tokenizer`)
hands such runs to the word-break iterator of ICU (International Components for Unicode, through the
``icu4py`` binding, whose wheels bundle ICU and its dictionaries). ICU splits these scripts with its
word dictionaries (UAX #29 word boundaries plus a dictionary for the characters of Unicode's
``Line_Break = Complex_Context`` class and for Chinese and Japanese). ICU's dictionaries do not depend
on the locale: the script chooses the dictionary.

Other ``Complex_Context`` scripts (Tai Tham, New Tai Lue, Tai Viet, Tai Le, Ahom) have no dictionary in
ICU: their runs stay whole, and the tokenizer reports them (:func:`unsegmented_script`) so the reader can
say so.

>>> segment_words("ฉันรักภาษาไทย")
['ฉัน', 'รัก', 'ภาษา', 'ไทย']
>>> segment_words("今日はとても暑いですね")
['今日', 'は', 'とても', '暑い', 'です', 'ね']
"""

from __future__ import annotations

import regex

#: scripts of Unicode's Line_Break = Complex_Context (SA) class, written without spaces; ICU holds a word
#: dictionary for the first four
SEGMENTED_SA = ("Thai", "Lao", "Khmer", "Myanmar")
UNSEGMENTED_SA = ("Tai_Tham", "New_Tai_Lue", "Tai_Viet", "Tai_Le", "Ahom")

_UNSEGMENTED = {name: regex.compile(rf"\p{{Script={name}}}") for name in UNSEGMENTED_SA}
#: a segment that is a word (ICU also returns the spaces and punctuation between words)
_WORDLIKE = regex.compile(r"[\p{L}\p{M}\p{N}]")


def segment_words(run: str) -> list[str]:
    """The words of ``run`` by ICU's word break (module docstring); spaces and punctuation are dropped.

    Parameters
    ----------
    run : str
        Text without spaces in Thai, Lao, Khmer, Burmese or Japanese (any text is accepted).

    Returns
    -------
    list of str
        The word segments, in order; a run of a script without a dictionary comes back whole.
    """
    from icu4py.breakers import WordBreaker

    return [w for w in WordBreaker(run, "und") if _WORDLIKE.search(w)]


def unsegmented_script(word: str) -> str | None:
    """The name of the script without a word dictionary that ``word`` is written in (``"Tai_Tham"``), or None."""
    for name, pattern in _UNSEGMENTED.items():
        if pattern.search(word):
            return name
    return None
