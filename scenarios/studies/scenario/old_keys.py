"""Keys of scenario files that were renamed, so that files written for an older ldpsim still read.

One table: old key → today's key. :func:`upgrade` renames them wherever they occur in a scenario file
and says so in a notice; a table that gives both spellings is refused.
"""

from __future__ import annotations

#: old key → today's key (one name per quantity: docs/glossary.md)
OLD_KEYS = {"epsilon_run": "epsilon_device", "local_epsilon": "epsilon_report"}


def upgrade(table: dict, where: str = "") -> tuple[list[str], list[str]]:
    """Rename old keys in ``table`` and its sub-tables, in place.

    Returns
    -------
    notices, clashes : list of str
        One notice per renamed key; the dotted names of tables that give both an old key and its new one.
    """
    notices, clashes = [], []
    for key in list(table):
        here = f"{where}.{key}" if where else key
        if isinstance(table[key], dict):
            sub_notices, sub_clashes = upgrade(table[key], here)
            notices += sub_notices
            clashes += sub_clashes
        if key in OLD_KEYS:
            new = OLD_KEYS[key]
            if new in table:
                clashes.append(here)
                continue
            table[new] = table.pop(key)
            notices.append(f"[{here}] is the old name of '{new}'; read as [{where + '.' if where else ''}{new}]")
    return notices, clashes
