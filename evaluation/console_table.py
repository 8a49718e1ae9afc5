"""A table as a terminal shows it: the columns that fit its width, the first rows, and where the rest is.

Every command prints its tables through :func:`console_lines`; the full table goes to a CSV file, whose
name the last line gives. Numbers keep 4 significant digits (integers are written whole, with thousands
separators), text cells are cut at :data:`CELL_CHARS` characters with "…", numbers are right-aligned and
text left-aligned. Columns are kept in the order given while they fit; the first always stays, and the
ones left out are named.

>>> import pandas as pd
>>> t = pd.DataFrame({"model": ["ldp", "shuffle", "secagg"], "rmse": [6630.6, 2757.5, 151.2],
...                   "devices": [50_000] * 3, "trusted": ["nobody", "the shuffler alone", "the protocol"]})
>>> print("\\n".join(console_lines(t, ["model", "rmse", "devices", "trusted"], title="Trust models",
...                                head=2, width=40, full="trust.csv")))
Trust models
model    rmse  devices
ldp      6631   50,000
shuffle  2758   50,000
… 1 more row; 1 more column (trusted);
  full table in trust.csv
"""

from __future__ import annotations

import math
import numbers
import shutil
import textwrap

#: the longest text cell shown; a longer one is cut with "…"
CELL_CHARS = 30
#: rows shown by default
HEAD_ROWS = 20
#: the width assumed when the output is not a terminal and ``COLUMNS`` is unset
FALLBACK_WIDTH = 100
#: spaces between two columns
GAP = 2


def terminal_width() -> int:
    """The terminal's width in characters (``COLUMNS`` if set, else :data:`FALLBACK_WIDTH` off a terminal)."""
    return shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns


def cell(value) -> str:
    """One value as the table shows it."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}" if abs(v) >= 1e4 else f"{v:.4g}"
        return f"{v:.4g}"
    return cut(" ".join(str(value).split()))


def cut(text: str, chars: int = CELL_CHARS) -> str:
    """``text`` in at most ``chars`` characters, ending in … when cut."""
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n:,} more {word}{'s' if n != 1 else ''}"


def console_lines(table, columns=None, *, title: str | None = None, head: int | None = HEAD_ROWS,
                  width: int | None = None, full: str | None = None, notes=()) -> list[str]:
    """``table`` (a pandas DataFrame) as lines that fit a terminal.

    Parameters
    ----------
    table : pandas.DataFrame
        The table.
    columns : sequence of str, optional
        The columns to show, in order of importance (names absent from the table are skipped; default: all).
    title : str, optional
        A first line saying what the table is.
    head : int or None
        The rows shown (default :data:`HEAD_ROWS`); None shows every row.
    width : int, optional
        Characters per line (default :func:`terminal_width`).
    full : str, optional
        Where the full table is (a CSV file's name), said on the last line when rows or columns are left out.
    notes : sequence of str
        Lines printed after the table (units, what NaN and inf mean), wrapped at ``width``.

    Returns
    -------
    list of str
        Every line at most ``width`` characters, but for a title or a first column wider than that.
    """
    width = terminal_width() if width is None else int(width)
    names = [c for c in (table.columns if columns is None else columns) if c in table.columns]
    shown = table if head is None else table.head(head)
    cols = _fit(shown, names, width)
    lines = [title] if title else []
    lines.append((" " * GAP).join(n.rjust(w) if num else n.ljust(w) for n, _, w, num in cols).rstrip())
    for i in range(len(shown)):
        lines.append((" " * GAP).join(c[i].rjust(w) if num else c[i].ljust(w)
                                      for _, c, w, num in cols).rstrip())
    left = []
    if len(table) > len(shown):
        left.append(_plural(len(table) - len(shown), "row"))
    hidden = names[len(cols):]
    if hidden:
        listed = ", ".join(hidden[:6]) + (", …" if len(hidden) > 6 else "")
        left.append(f"{_plural(len(hidden), 'column')} ({listed})")
    if left:
        lines.append("… " + "; ".join(left) + (f"; full table in {full}" if full else ""))
        lines[-1:] = textwrap.wrap(lines[-1], width, subsequent_indent="  ", break_on_hyphens=False)
    for note in notes:
        lead = " " * (len(note) - len(note.lstrip()))
        lines += textwrap.wrap(note, width, subsequent_indent=lead + "    ", break_on_hyphens=False) or [""]
    return lines


def fitted_columns(table, columns=None, *, head: int | None = HEAD_ROWS, width: int | None = None) -> list[str]:
    """The columns :func:`console_lines` shows with the same arguments (to explain only those)."""
    width = terminal_width() if width is None else int(width)
    names = [c for c in (table.columns if columns is None else columns) if c in table.columns]
    return [name for name, *_ in _fit(table if head is None else table.head(head), names, width)]


def _fit(shown, names, width: int) -> list[tuple]:
    """(name, cells, width, numeric) of the leading columns that fit ``width`` (the first always)."""
    cols, used = [], -GAP
    for name in names:
        cells = [cell(v) for v in shown[name]]
        numeric = all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in shown[name])
        w = max([len(str(name)), *map(len, cells)])
        if cols and used + GAP + w > width:
            break
        cols.append((str(name), cells, w, numeric))
        used += GAP + w
    return cols
