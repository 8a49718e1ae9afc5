"""Whether a deployment run draws its figures (``figures = "auto" | "all" | "none"``), and its ``report.md``.

Drawing a run's figures costs a fixed 2 to 3 CPU-s (loading matplotlib, then eight figures, each placed once and
drawn once), whatever the run's size, while the simulation's cost grows with the device-days. ``auto`` draws them
when the run has at least :data:`AUTO_FIGURES_DEVICE_DAYS` device-days, a size at which the simulation costs at
least the work after it, figures included; a smaller run (a trial) skips them, says so in its summary, its
timing and its report page, and ``ldpsim plot RUN_DIR`` draws them later from the stored tables
(:mod:`ldpsim.scenarios.studies.deployment.replot`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from ldpsim.runtime.errors import InputError

#: the choices of ``[deployment] figures`` and ``ldpsim run --figures``: ``auto`` draws a run's figures when it has
#: at least :data:`AUTO_FIGURES_DEVICE_DAYS` device-days, ``all`` always, ``none`` never
FIGURES = ("auto", "all", "none")

#: device-days (devices × days) from which ``figures = "auto"`` draws a run's figures. Measured (CPU-s of
#: ``ldpsim run`` of the keyboard scenario, median of 3, on a busy 2-core machine): 2 000 × 4 simulates in 1.1 s
#: and its work after the simulation costs 2.7 s with its figures (1.8 of them) and 0.8 s without; 10 000 × 12
#: = 120 000 simulates in 6.4 s and costs 5.4 s after it with figures (3.2 of them); 20 000 × 14 = 280 000
#: simulates in 9 s and costs 6 s after it with figures. From this size the simulation costs at least the work
#: after it, figures included; below it, without them. The default run draws them, a 2 000 × 4 trial does not.
AUTO_FIGURES_DEVICE_DAYS = 120_000


def figures_problem(value) -> str | None:
    """What is wrong with a ``figures`` choice (None: one of :data:`FIGURES`)."""
    return None if value in FIGURES else f"must be one of {', '.join(FIGURES)}"


def check_figures(value, name: str = "figures") -> str:
    """``value`` if it is one of :data:`FIGURES`, else an :class:`InputError` naming ``name``."""
    problem = figures_problem(value)
    if problem is not None:
        raise InputError(f"{name} {problem}; got {value!r}")
    return value


@dataclass(frozen=True)
class FigureChoice:
    """Whether a run draws its figures; when not, why (``reason``) and the line saying how to draw them
    (``note``)."""

    draw: bool
    reason: str = ""
    note: str = ""


def choose_figures(choice: str, cfg, out) -> FigureChoice:
    """What ``figures = choice`` (one of :data:`FIGURES`) means for the run ``cfg`` writing into ``out``."""
    device_days = cfg.n_devices * cfg.n_days
    if choice == "all" or (choice == "auto" and device_days >= AUTO_FIGURES_DEVICE_DAYS):
        return FigureChoice(True)
    why = (f"{device_days:,} device-days < {AUTO_FIGURES_DEVICE_DAYS:,}" if choice == "auto"
           else "figures = none")
    return FigureChoice(False, why, f"figures not drawn ({why}): `ldpsim plot {shlex.quote(str(out))}` draws them "
                                    "from the stored tables")


def report_title(name: str, cfg) -> str:
    """The report page's title: the scenario's name, the fleet's size and the seed."""
    return f"{name}: {cfg.n_devices} devices × {cfg.n_days} days, seed {cfg.seed}"


def report_md(summary: str, plots: list[Path], note: str = "") -> str:
    """``report.md``: the printed summary, then the figures (or the line saying they were not drawn)."""
    lines = ["# Deployment run", "", "```text", summary, "```", ""]
    lines += [f"![{p.stem}](plots/{p.name})" for p in plots] or ([note] if note else [])
    return "\n".join(lines) + "\n"

