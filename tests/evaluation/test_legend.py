"""Legends sit in a corner chosen from the data alone: no figure depends on how busy the machine is."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import ldpsim
from ldpsim.evaluation.legend import quiet_corner
from tests.tree import own_files

PACKAGE = Path(ldpsim.__file__).resolve().parent


def test_every_legend_call_names_its_location():
    """matplotlib's default loc="best" warns when its search takes over a second (a loaded machine):
    with warnings as errors that failed figures, and `ldpsim run`, on load alone."""
    missing = []
    for path in own_files(PACKAGE, ".py", skip=("tests",)):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "legend"
                    and not any(k.arg == "loc" for k in node.keywords)):
                missing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not missing, missing


def _axes():
    return Figure().add_subplot()


def test_quiet_corner_is_the_emptiest_quadrant():
    x = np.linspace(0, 1, 50)
    falling, rising = _axes(), _axes()
    falling.plot(x, 1 - x)                      # upper left → lower right: the upper right is empty
    rising.plot(x, x)                           # lower left → upper right: the upper left is empty first
    assert quiet_corner(falling) == "upper right"
    assert quiet_corner(rising) == "upper left"
    bars = _axes()
    bars.bar(np.arange(10), np.arange(10, 0, -1))  # top-k bars, largest first
    assert quiet_corner(bars) == "upper right"
    assert quiet_corner(_axes()) == "upper right"  # nothing drawn
    logged = _axes()
    logged.plot(x + 0.01, 10 ** (-3 * x))
    logged.set_yscale("log")
    assert quiet_corner(logged) == "upper right"
