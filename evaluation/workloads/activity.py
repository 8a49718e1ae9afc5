"""Events per device per day measured on a real fleet: a file of per-device counts, as an activity distribution.

A scenario's ``[fleet] events_per_day = "file"`` names a file of one number per device (events, e.g.
emoji, a day on average): a ``.txt`` file with one number a line, or a ``.csv``/``.tsv`` table with a
column ``events_per_day`` (any case; other columns ignored). Each simulated device draws its mean
from these numbers (:attr:`ldpsim.simulator.config.DeploymentConfig.activity_levels`). Numbers are
finite and >= 0, not all 0; text is UTF-8; every problem raises
:class:`~ldpsim.runtime.errors.InputError` naming the file, the line and the value.
"""

from __future__ import annotations

import csv

import numpy as np

from ldpsim.runtime.errors import InputError

from ldpsim.evaluation.workloads.text_file import parse_number, text_lines
from ldpsim.evaluation.workloads.vocabulary import resolve_file, shown_path

COLUMN = "events_per_day"


def load_events_per_day(file, base=None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct per-device values of a file and how many devices have each.

    Parameters
    ----------
    file : str or Path
        ``.txt`` (one number a line) or ``.csv``/``.tsv`` (a column ``events_per_day``).
    base : str or Path, optional
        Folder a relative ``file`` is relative to (a scenario's folder).

    Returns
    -------
    (levels, devices) : numpy.ndarray of float, numpy.ndarray of int
        Sorted distinct values and their device counts.
    """
    path = resolve_file(file, base)
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "is not a regular file" if path.exists() else "no such file"
        raise InputError(f"events_per_day file {path}: {what}.")
    (real, shown), suffix = shown_path(path), path.suffix.lower()
    if suffix == ".txt":
        values = [parse_number(t.strip(), f"events_per_day file {shown}, line {i}", "the number")
                  for i, t in text_lines(real, shown, "events_per_day file") if t.strip()]
    elif suffix in (".csv", ".tsv"):
        reader = csv.reader((t for _, t in text_lines(real, shown, "events_per_day file")),
                            delimiter="\t" if suffix == ".tsv" else ",")
        header = [h.strip().lower() for h in next(reader, [])]
        if COLUMN not in header:
            raise InputError(f"events_per_day file {shown}: needs a column {COLUMN!r} in its header; got {header}.")
        col = header.index(COLUMN)
        values = [parse_number(row[col].strip() if col < len(row) else "",
                               f"events_per_day file {shown}, line {reader.line_num}, column {COLUMN!r}", "the number")
                  for row in reader if any(c.strip() for c in row)]
    else:
        raise InputError(f"events_per_day file {shown}: unknown extension {path.suffix!r}; allowed: .txt, .csv, .tsv.")
    if not values or max(values) <= 0:
        raise InputError(f"events_per_day file {shown}: needs at least one device with a number > 0.")
    levels, devices = np.unique(np.asarray(values), return_counts=True)
    return levels, devices
