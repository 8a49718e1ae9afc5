"""A short, informative ``repr`` for result objects (dataclasses holding tables, arrays and folders).

A study's result holds whole tables: the dataclass ``repr`` printed every row of every one of them
(86 634 characters for a three-day deployment), which buries a notebook cell. :class:`BriefRepr` shows
each field on one line's worth of text instead: a table as its shape, an array as its shape and dtype,
a folder as its path, a short value as itself, a long dict by its keys and any other long value by its
type.

A dataclass writes its own ``__repr__`` unless told not to: a result class inherits :class:`BriefRepr`
and is declared with ``@dataclass(repr=False)``.

>>> from dataclasses import dataclass
>>> import numpy as np
>>> @dataclass(repr=False)
... class Example(BriefRepr):
...     name: str
...     ledger: object
...     counts: dict
>>> Example("keyboard", np.zeros((2000, 3)), {"emoji": 1, "words": 2})
Example(name='keyboard', ledger=<array 2000×3 float64>, counts={'emoji': 1, 'words': 2})
>>> Example("keyboard", np.zeros(3, int), {f"use case {i}": list(range(99)) for i in range(6)})
Example(name='keyboard', ledger=<array 3 int64>, counts={'use case 0': …, 'use case 1': …, 'use case 2': …, 'use case 3': …, … 6 keys})
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePath

#: the longest text shown for one field; a longer value is shown by its type or cut with "…"
FIELD_CHARS = 60
#: the most keys of a dict shown by name
SHOWN_KEYS = 4


def brief(value) -> str:
    """``value`` in at most about :data:`FIELD_CHARS` characters (see the module docstring)."""
    if isinstance(value, PurePath):
        return repr(str(value))
    if isinstance(value, str):
        return repr(value) if len(value) <= FIELD_CHARS else repr(value[: FIELD_CHARS - 12] + "…") + f" ({len(value)} chars)"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and hasattr(value, "columns"):  # a pandas DataFrame
        return f"<DataFrame {shape[0]} rows × {shape[1]} columns>"
    if isinstance(shape, tuple) and hasattr(value, "dtype"):  # a numpy array or a pandas Series
        kind = "array" if type(value).__name__ == "ndarray" else type(value).__name__
        return f"<{kind} {'×'.join(map(str, shape)) or 'scalar'} {value.dtype}>"
    text = repr(value)
    if len(text) <= FIELD_CHARS:
        return text
    if isinstance(value, dict):
        keys = [repr(k) if len(repr(k)) <= FIELD_CHARS // 2 else f"<{type(k).__name__}>" for k in value]
        more = f", … {len(keys)} keys" if len(keys) > SHOWN_KEYS else ""
        return "{" + ", ".join(f"{k}: …" for k in keys[:SHOWN_KEYS]) + more + "}"
    if isinstance(value, (list, tuple)):
        return f"<{type(value).__name__} of {len(value)}>"
    return text if len(text) <= FIELD_CHARS else f"<{type(value).__name__}>"


class BriefRepr:
    """Mixin: ``repr`` shows each dataclass field briefly (:func:`brief`); declare the class with
    ``@dataclass(repr=False)`` so that the dataclass does not write its own."""

    def __repr__(self) -> str:
        fields = [f for f in dataclasses.fields(self) if f.repr]  # type: ignore[arg-type]
        return f"{type(self).__name__}(" + ", ".join(f"{f.name}={brief(getattr(self, f.name))}"
                                                    for f in fields) + ")"
