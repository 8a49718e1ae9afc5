"""``epsilon_item`` and ``epsilon_person`` beside a table's ε of one report — docs/math.md §8.7.

Tables whose every row is one report a device (a sweep's cells, ``ldpsim accuracy``, a per-report audit,
the poisoning population) print the two user-level scopes of :func:`~ldpsim.evaluation.privacy.levels.levels`
beside their ε: with one report a device over one collection, one item of one person and one person over
the run get the ε of that one report (``reports_item = reports_person = 1``). A table with more reports a
device passes them (``reports_per_day``, ``days``) and gets the composed scopes from the same function.

>>> import pandas as pd
>>> t = pd.DataFrame({"mechanism": ["grr", "oue"], "epsilon": [1.0, 2.0], "mse": [0.1, 0.2]})
>>> list(beside(t).columns)
['mechanism', 'epsilon', 'epsilon_item', 'epsilon_person', 'mse']
>>> beside(t)["epsilon_person"].tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from ldpsim.evaluation.privacy.levels import levels

#: the two user-level columns, in the order every table prints them
COLUMNS = ("epsilon_item", "epsilon_person")


def one_report(epsilon: float, reports_per_day: int = 1, days: int = 1) -> dict:
    """``{"epsilon_item": …, "epsilon_person": …}`` of fresh ε-reports, ``reports_per_day`` a day over
    ``days`` days (default: one report), by :func:`~ldpsim.evaluation.privacy.levels.levels` (basic
    composition, δ = 0)."""
    g = levels(epsilon, reports_per_day=reports_per_day, days=days)
    return {"epsilon_item": g.epsilon_item, "epsilon_person": g.epsilon_person}


def beside(table, column: str = "epsilon", reports_per_day: int = 1, days: int = 1):
    """A copy of ``table`` (a pandas DataFrame) with :data:`COLUMNS` right after ``column`` (an ε of one
    report), each row's from :func:`one_report`."""
    shown = table.copy()
    rows = [one_report(e, reports_per_day, days) for e in shown[column]]
    at = shown.columns.get_loc(column) + 1
    for name in reversed(COLUMNS):
        shown.insert(at, name, [r[name] for r in rows])
    return shown


def note(column: str = "epsilon", who: str = "a device") -> str:
    """The line a table prints under it: what ``column`` and the two user-level columns mean."""
    return (f"{column}: ε of one report; {who} sends one, so one item of one person (epsilon_item) and one "
            "person over the run (epsilon_person) get the same ε")
