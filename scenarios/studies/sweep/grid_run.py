"""A sweep as one library call: plan and cost guard, where to run, resume, and the result tables.

:func:`sweep_study` is what ``ldpsim sweep`` and ``ldpsim.sweep(...)`` both call. Where the cells run
is decided from the cost estimate (:func:`estimated_seconds`): with no ``workers`` and no
``scheduler`` given, a sweep whose cells are estimated to take less than :data:`IN_PROCESS_BELOW_S`
seconds in all runs in this process, because starting a local Dask cluster takes longer (10–30 s on a
loaded machine) than such a sweep; a larger one gets a local cluster of one worker per core.
``workers=1`` always runs in this process; ``workers > 1`` or a ``scheduler`` always use Dask.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ldpsim.evaluation.cost import Plan, sweep_plan
from ldpsim.scenarios.studies.scenario.grid import Scenario
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.scenarios.studies.sweep.runner import SweepReport, run_sweep
from ldpsim.scenarios.studies.sweep.sweep_report import report_sweep
from ldpsim.scenarios.studies.sweep.store import read_results
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import hold, make_out_folder, read_manifest, verify_folder

#: estimated serial seconds below which a sweep without explicit workers runs in this process
IN_PROCESS_BELOW_S = 60.0
#: seconds per repeat per unit of work, measured on one loaded core (order of magnitude, rounded up):
#: direct path 0.5 s per 10⁶ sketch cells k·m (a k = m = 1024 CMS cell: 2.7 s for 5 repeats) and
#: 10⁻⁷ s per item of the domain; reports path 4 µs per user (CMS, OUE at D = 2000: 1.5–1.9 s for
#: 5 × 10⁵ users); a discovery run about a second; 0.02 s per cell besides.
SECONDS_PER = {"sketch_cell": 5e-7, "item": 1e-7, "report": 4e-6, "discovery_run": 1.0, "cell": 0.02}


def estimated_seconds(cells) -> float:
    """Order-of-magnitude serial run time of ``cells`` from the rates of :data:`SECONDS_PER`.

    Parameters
    ----------
    cells : list of Cell
        The cells to run (:meth:`ldpsim.scenarios.studies.scenario.grid.Scenario.cells`).
    """
    total = 0.0
    for cell in cells:
        workload = dict(cell.workload_items)
        if cell.kind == "discovery":
            per_repeat = SECONDS_PER["discovery_run"]
        elif cell.path == "reports":
            per_repeat = SECONDS_PER["report"] * int(workload.get("n", 0))
        else:
            sketch = int(cell.params.get("k", 0)) * int(cell.params.get("m", 0))
            per_repeat = (SECONDS_PER["sketch_cell"] * sketch
                          + SECONDS_PER["item"] * int(workload.get("domain_size", 0) or 10_000))
        total += SECONDS_PER["cell"] + cell.repeats * per_repeat
    return total


@dataclass(frozen=True)
class Placement:
    """Where a sweep's cells run: in this process, a local cluster of ``workers``, or ``scheduler``."""

    serial: bool
    workers: int
    scheduler: str | None
    reason: str

    def describe(self) -> str:
        where = ("in this process" if self.serial else f"on the Dask scheduler {self.scheduler}" if self.scheduler
                 else f"on a local Dask cluster of {self.workers} worker(s)")
        return f"runs {where} ({self.reason})"


def placement(cells, workers: int | None = None, scheduler: str | None = None) -> Placement:
    """Decide where ``cells`` run (rules in the module docstring).

    Parameters
    ----------
    cells : list of Cell
        The cells still to run.
    workers : int, optional
        Worker processes asked for (1: this process); ``None`` decides from the estimate.
    scheduler : str, optional
        Address of an existing Dask scheduler.
    """
    if scheduler is not None:
        return Placement(False, workers or 1, scheduler, "--scheduler given")
    if workers is not None:
        return Placement(workers == 1, workers, None, f"--workers {workers}")
    seconds = estimated_seconds(cells)
    cores = os.cpu_count() or 1
    if seconds < IN_PROCESS_BELOW_S or cores == 1:
        return Placement(True, 1, None, f"estimated {seconds:.1f} s of cells: less than starting a cluster")
    return Placement(False, cores, None, f"estimated {seconds:.0f} s of cells, one worker per core")


@dataclass(frozen=True, repr=False)
class SweepResult(BriefRepr):
    """What :func:`sweep_study` returns.

    Attributes
    ----------
    out : Path
        The run folder (``config.json``, ``summary/``, ``estimates/``; see
        :mod:`ldpsim.scenarios.studies.sweep.store`).
    name : str
        The scenario's name.
    plan : Plan
        Cell count and memory estimate (what ``--dry-run`` prints).
    placement : Placement
        Where the cells ran.
    report : SweepReport or None
        Cells run and skipped, and timings; ``None`` for a dry run.
    html : Path or None
        The folder's HTML report, written when cells were run.
    folder_state : str
        What ``out`` held before: a new folder, a run this one resumes, or something else.
    """

    out: Path
    name: str
    plan: Plan
    placement: Placement
    report: SweepReport | None
    html: Path | None = None
    folder_state: str = ""

    @property
    def summary(self):
        """One row per (cell, metric[, item]) with ``mean`` and ``se`` (a pandas DataFrame)."""
        return read_results(self.out, "summary")

    @property
    def estimates(self):
        """One row per (cell, repeat, item) of the stored top items (a pandas DataFrame)."""
        return read_results(self.out, "estimates")

    def describe(self) -> str:
        """The lines ``ldpsim sweep`` prints about what ran."""
        r = self.report
        if r is None:
            return (f"{self.name}: {self.plan.describe()}\n{self.placement.describe()}\n"
                    f"run folder: {self.out} ({self.folder_state})")
        if r.n_run == 0:
            return f"{self.out}: all {r.n_cells} cells already done"
        return (f"{self.out}: {r.n_cells} cells ({r.n_skipped} already done, {r.n_run} run) in {r.wall_s:.1f} s "
                f"wall, {r.cell_s:.1f} s in cells on {r.n_workers} worker(s); overhead {100 * r.overhead:.1f}%")


def sweep_study(scenario: Scenario, scenario_text: str, out, *, workers: int | None = None,
                scheduler: str | None = None, force: bool = False, resume: bool = False, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Plan, cost-check and run a sweep scenario into the run folder ``out``.

    Parameters
    ----------
    scenario : Scenario
        A loaded sweep scenario (its ``seed`` is the root entropy).
    scenario_text : str
        The scenario file's text, stored beside the results.
    out : str or Path
        The run folder; a folder holding the same scenario and seed resumes from its verified cells.
    workers : int, optional
        Worker processes (1: this process); default: decided from the cost estimate (:func:`placement`).
    scheduler : str, optional
        Address of an existing Dask scheduler.
    force : bool
        Replace the results of a different scenario or seed in ``out`` (only files ldpsim wrote).
    resume : bool
        Require ``out`` to hold a run to resume.
    dry_run : bool
        Only plan: nothing is run or written.
    progress : callable, optional
        Called as ``progress(done, total)`` after each cell.

    Returns
    -------
    SweepResult

    Raises
    ------
    CostError
        The grid or a cell cannot fit this machine.
    InputError
        ``workers`` < 1, or ``resume`` with nothing to resume.
    RunFolderError
        ``out`` holds something else, or is in use.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"--workers must be an integer >= 1; got {workers!r}")
    out = make_out_folder(out, create=False)  # an unusable --out is refused before anything runs
    cells = scenario.cells()
    where = placement(cells, workers, scheduler)
    plan = sweep_plan(scenario, cells, 1 if where.serial else where.workers)
    manifest = read_manifest(out)
    state = ("new folder" if not out.exists() else "an existing folder" if manifest is None
             else "resumes its verified cells" if manifest.get("fingerprint") == scenario.fingerprint()
             else "holds another scenario or seed")
    if dry_run:
        return SweepResult(out, scenario.name, plan, where, None, folder_state=state)
    if resume and manifest is None:
        raise InputError(f"--resume: {out} holds no run to resume")
    if manifest and manifest.get("status") == "complete" and manifest.get("fingerprint") == scenario.fingerprint():
        # finished: reopening would prune files added since (``ldpsim plot``'s figures); under the lock
        # (a folder in use is refused), an intact folder has nothing to run, a damaged one is repaired below
        with hold(out):
            intact = not verify_folder(out)
        if intact:
            return SweepResult(out, scenario.name, plan, where, SweepReport(len(cells), len(cells), 0, 0.0, 0.0, 0),
                               folder_state=state)
    report = run_sweep(scenario, scenario_text, out, serial=where.serial, scheduler=scheduler,
                       n_workers=where.workers, force=force, progress=progress)
    html = report_sweep(out, title=f"sweep {scenario.name}") if report.n_run else None
    return SweepResult(out, scenario.name, plan, where, report, html, state)
