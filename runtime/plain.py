"""Plain text: what a name, a path or an option's value may hold.

:func:`plain_name` checks a name that becomes a file or folder name. A control character (a newline, a carriage return, a tab, an escape; Unicode category ``Cc``) in a folder's
name splits the lines of a log, a manifest or a shell script that names it, and is never what a user meant;
:func:`control_character` finds one. Undecodable bytes of a Linux file name (carried as surrogate escapes)
are not control characters: such a name is used as the bytes it is.
"""

from __future__ import annotations

import re
import unicodedata

#: a name that becomes a file or folder name (a run, a deployment, a reproduction): letters, digits, ``.``,
#: ``_``, ``-``, starting with a letter or digit (no separators, no leading dot), at most 100 characters;
#: :func:`plain_name` also refuses ``..``
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def control_character(value: str) -> str | None:
    """The first control character of ``value`` as its escape (``'\\\\n'``, ``'\\\\x1b'``), or None.

    >>> control_character("runs/a\\nb"), control_character("runs/ä b")
    ("'\\\\n'", None)
    """
    bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
    return None if bad is None else repr(bad)


def plain_name(value: str) -> str | None:
    """What is wrong with ``value`` as a name that becomes a file or folder name (:data:`PLAIN_NAME`, no
    ``..``), or None when it is plain: the check of every such scenario key.

    >>> plain_name("sdldp-fig2") is None, plain_name("../x") is None
    (True, False)
    """
    if PLAIN_NAME.fullmatch(value) and ".." not in value:
        return None
    return ("must be a plain name (letters, digits, '.', '_', '-'; no path separators, no '..', at most "
            "100 characters): it names output files or folders")
