"""Plain text: what a name, a path or an option's value may hold.

A control character (a newline, a carriage return, a tab, an escape; Unicode category ``Cc``) in a folder's
name splits the lines of a log, a manifest or a shell script that names it, and is never what a user meant;
:func:`control_character` finds one. Undecodable bytes of a Linux file name (carried as surrogate escapes)
are not control characters: such a name is used as the bytes it is.
"""

from __future__ import annotations

import unicodedata


def control_character(value: str) -> str | None:
    """The first control character of ``value`` as its escape (``'\\\\n'``, ``'\\\\x1b'``), or None.

    >>> control_character("runs/a\\nb"), control_character("runs/ä b")
    ("'\\\\n'", None)
    """
    bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
    return None if bad is None else repr(bad)
