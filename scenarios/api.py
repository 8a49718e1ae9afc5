"""The short Python API for notebooks: :func:`run` a deployment, :func:`sweep` a grid, :func:`compare`
designs at one budget, :func:`check` a rerun against a baseline, :func:`reproduce` a published figure,
:func:`scenarios_table`.

Each is what the command of the same name runs (the commands are thin layers that print the result),
writes the same run folder, and returns what a notebook wants next: a result object with the folder
and its tables as pandas objects. Bad input raises ``ValueError`` (``ldpsim.runtime.errors.InputError``
and its subclasses) with the command line's message. A shipped scenario's older file name is accepted
with a note on stderr. A call that writes a run folder and is given no ``out`` writes it under ``runs/`` in
the current folder and says so on stderr, with the folder's absolute path (the line ``run folder: …`` the
command line prints too).

>>> import ldpsim                                                     # doctest: +SKIP
>>> result = ldpsim.run("keyboard", devices=2000, days=3, out="runs/nb")   # doctest: +SKIP
>>> result.summary["upload_success"]                                  # doctest: +SKIP
"""

from __future__ import annotations

import sys
from pathlib import Path


def run(scenario: str | Path = "keyboard", **options):
    """Simulate a deployment scenario, as ``ldpsim run`` does: a shipped name (``"keyboard"``) or a file.

    Parameters
    ----------
    scenario : str or Path
        A deployment scenario file, or a shipped name (``ldpsim scenarios`` lists them).
    **options
        ``devices``, ``days``, ``seed``, ``workers``, ``scheduler``, ``out``, ``force``, ``progress``,
        ``log``, ``vocabulary``, ``figures`` (``"auto"``, ``"all"`` or ``"none"``): as :func:`ldpsim.scenarios.studies.deployment.study.run_deployment`. Without
        ``out`` the folder is ``runs/<name>-<devices>x<days>d-seed<seed>`` in the current folder, and a
        line on stderr names it.

    Returns
    -------
    DeploymentStudy
        The run folder, its summary and tables, the figures and the printed summary.
    """
    from ldpsim.scenarios.studies.deployment.study import run_deployment
    return _told(run_deployment(_resolved(scenario), **options), options.get("out"))


def _told(result, out):
    """``result``, after saying on stderr where a run folder written to the default place (``out`` None) is."""
    if out is None and getattr(result, "out", None) is not None:
        print(f"run folder: {Path(result.out).resolve()}  (the default, under runs/ in the current folder; "
              "--out on the command line, out= in Python, chooses another)", file=sys.stderr)
    return result


def _resolved(scenario, key: str = "scenario") -> Path:
    """The scenario file ``scenario`` names; an older spelling of a shipped name prints a note on stderr."""
    from ldpsim.scenarios.catalog import lookup
    path, note = lookup(scenario, key)
    if note:
        print(note, file=sys.stderr)
    return path


def sweep(scenario: str | Path, *, seed: int | None = None, workers: int | None = None,
          scheduler: str | None = None, out: str | Path | None = None, force: bool = False,
          resume: bool = False, dry_run: bool = False, progress: bool = False,
          vocabulary: str | Path | None = None):
    """Run a sweep scenario's grid, as ``ldpsim sweep`` does (the command is a thin layer over this).

    Parameters
    ----------
    scenario : str or Path
        A sweep scenario file, or a shipped name such as ``"smoke"``.
    seed : int, optional
        Root seed (default: the scenario's).
    workers : int, optional
        Worker processes; 1 runs in this process; default: in this process when the cost estimate is
        small, else a local Dask cluster of one worker per core
        (:func:`ldpsim.scenarios.studies.sweep.grid_run.placement`).
    scheduler : str, optional
        Address of an existing Dask scheduler.
    out : str or Path, optional
        The run folder (default ``runs/<scenario name>`` in the current folder, which a line on stderr
        names); an interrupted sweep resumes there.
    force, resume, dry_run : bool
        Replace another scenario's results in ``out``; require a run to resume; only plan.
    progress : bool
        Show progress on stderr (a bar on a terminal, plain lines otherwise).
    vocabulary : str or Path, optional
        Your own items instead of the scenario's workload (``--vocabulary``; keeps its ``n``); its
        notices (merged repeats, dropped items) are printed on stderr.

    Returns
    -------
    SweepResult
        The folder, plan and timings; ``.summary`` and ``.estimates`` read the stored tables.

    Raises
    ------
    ScenarioError, CostError, RunFolderError, InputError
        Bad scenario, a grid too large for this machine, a folder holding something else, bad options.
    """
    from ldpsim.scenarios.studies.scenario.grid import load_scenario
    from ldpsim.scenarios.studies.sweep.grid_run import sweep_study
    from ldpsim.scenarios.options import ProgressCallback

    path = _resolved(scenario)
    loaded = _seeded(load_scenario(path, vocabulary), seed)
    for note in loaded.notices:
        print(f"note: {note}", file=sys.stderr)
    shown = ProgressCallback("cells", progress)
    try:
        return _told(sweep_study(loaded, path.read_text(encoding="utf-8"), Path(out or Path("runs") / loaded.name),
                                 workers=workers, scheduler=scheduler, force=force, resume=resume,
                                 dry_run=dry_run, progress=shown), None if dry_run else out)
    finally:
        shown.close()


def _seeded(scenario, seed):
    """The loaded sweep scenario, with ``seed`` (an int >= 0) as its root seed when given."""
    import dataclasses

    from ldpsim.runtime.errors import InputError
    if seed is None:
        return scenario
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"--seed must be an integer >= 0; got {seed!r}")
    return dataclasses.replace(scenario, seed=seed)


def _baseline_path(arg: str | Path, writing: bool) -> Path:
    """``arg`` as a path, or (when no such file exists and it is a plain name) the shipped baseline of that name."""
    from ldpsim.scenarios.catalog import SHIPPED
    path = Path(arg)
    shipped = SHIPPED / "baselines" / (path.name if path.suffix == ".json" else f"{path.name}.json")
    if not writing and not path.exists() and path.parent == Path(".") and shipped.is_file():
        return shipped
    return path


def check(scenario: str | Path, baseline: str | Path, *, update: bool = False, alpha: float = 0.001,
          seed: int | None = None, out: str | Path | None = None):
    """Rerun a small sweep scenario and compare its metrics with a stored baseline, as ``ldpsim check`` does.

    Parameters
    ----------
    scenario : str or Path
        A sweep scenario file or a shipped name (``"check"``); it runs in this process.
    baseline : str or Path
        The baseline JSON; a plain name such as ``"check"`` with no such file means the shipped one.
    update : bool
        Write the baseline from this run instead of comparing.
    alpha : float
        Family-wise false-alarm rate, Bonferroni over the compared metrics.
    seed : int, optional
        Root seed (default: the scenario's).
    out : str or Path, optional
        Keep the rerun in this new or empty folder (default: a temporary folder).

    Returns
    -------
    CheckRun
        ``.passed``, ``.result.table`` (one row per (cell, metric) with its verdict), ``.describe()``.
    """
    from ldpsim.scenarios.studies.scenario.grid import load_scenario
    from ldpsim.scenarios.studies.sweep.baseline_check import check_against_baseline
    path = _resolved(scenario)
    loaded = _seeded(load_scenario(path), seed)
    return check_against_baseline(loaded, path.read_text(encoding="utf-8"), _baseline_path(baseline, update),
                                  update=update, alpha=alpha, out=out)


def reproduce(name: str | Path = "all", *, out: str | Path | None = None, repeats: int | None = None,
              quick: bool = False, seed: int | None = None):
    """Re-run published figures, as ``ldpsim reproduce`` does: a tidy table, PNG/SVG figure and runtime each.

    Parameters
    ----------
    name : str or Path
        A reproduction's name (``"sdldp-fig5"``, ``"rr-survey"``; ``ldpsim scenarios`` lists them), a
        reproduction ``.toml`` file, or ``"all"``.
    out : str or Path, optional
        The folder (default ``runs/reproduce`` in the current folder, which a line on stderr names);
        figures of earlier reproductions there are kept.
    repeats : int, optional
        Repeats per setting (default: the file's).
    quick : bool
        Tiny repeats, n, EM bins and ε grid: a smoke run.
    seed : int, optional
        Root seed (default: the file's).

    Returns
    -------
    Reproductions
        ``.runs`` (one per figure: ``.table``, ``.summary``, ``.paths``, ``.runtime_s``) and ``.html``.
    """
    from ldpsim.scenarios.reproductions import reproduce_into
    result = reproduce_into(name, Path(out or Path("runs") / "reproduce"), repeats=repeats, quick=quick, seed=seed)
    for note in result.notes:
        print(note, file=sys.stderr)
    return _told(result, out)


def scenarios_table():
    """The shipped scenarios, as ``ldpsim scenarios`` lists them.

    Returns
    -------
    pandas.DataFrame
        One row per scenario: ``name`` (what every command accepts), ``kind``, ``command`` (the one that
        runs it), ``description`` (the first sentence of its leading comment) and ``path``.
    """
    import pandas as pd

    from ldpsim.scenarios.studies.scenario.schema import KIND_COMMANDS
    from ldpsim.scenarios.catalog import listing, shipped
    paths = shipped()
    return pd.DataFrame([{"name": name, "kind": kind, "command": KIND_COMMANDS.get(kind, ""), "description": text,
                          "path": str(paths[name])} for name, kind, text in listing()])


def compare(scenario: str | Path = "keyboard", designs=None, **options):
    """Several designs on the same fleet at the same privacy budget, as ``ldpsim compare`` does.

    Parameters
    ----------
    scenario : str or Path
        A deployment scenario file, or a shipped name (``ldpsim scenarios`` lists them).
    designs : sequence of Design, optional
        Default: the scenario's ``[variants.*]``, else Apple's CMS, RAPPOR, dBitFlip, OLH and HR.
    **options
        ``epsilon_device`` or ``epsilon_report`` (the budget), ``delta``, ``devices``, ``days``,
        ``seed``, ``vocabulary``: see :func:`ldpsim.scenarios.studies.deployment.compare.compare`.

    Returns
    -------
    Comparison
        Its ``table``, ``spend``, ``figure()`` and ``to_folder(out)``.
    """
    from ldpsim.scenarios.studies.deployment.compare import compare as compare_designs
    return compare_designs(_resolved(scenario), designs, **options)


def poison(scenario: str | Path = "poisoning", **options):
    """A poisoning experiment, as ``ldpsim poison`` does: fake devices against the frequency oracles
    (population scenario) or a deployment (``deployment=True``, or a ``[poisoning_fleet]`` scenario).

    Parameters
    ----------
    scenario : str or Path
        A poisoning or deployment scenario file, or a shipped name.
    **options
        As :func:`ldpsim.scenarios.studies.poisoning.experiment.poison` (``repeats``, ``seed``, ``out``, ``force``, …).

    Returns
    -------
    PoisonResult
        Its table, the closed-form check (or why there is none) and ``to_folder()``.

    Examples
    --------
    >>> import ldpsim                                                  # doctest: +SKIP
    >>> result = ldpsim.poison("poisoning", repeats=40, out="runs/p")  # doctest: +SKIP
    >>> result.check["message"]                                       # doctest: +SKIP
    """
    from ldpsim.scenarios.studies.poisoning.experiment import poison as run_poison
    from ldpsim.scenarios.catalog import resolve
    return run_poison(scenario, resolve=resolve, **options)


def discover(scenario: str | Path = "discovery_days", seeds=None):
    """Days until a new word is found, as ``ldpsim discover`` does: every protocol of a ``[discovery_days]``
    scenario at the same ε per device over the run.

    Parameters
    ----------
    scenario : str or Path
        A ``[discovery_days]`` scenario file, or a shipped name.
    seeds : sequence of int, optional
        The seeds to run (default: the scenario's).

    Returns
    -------
    DaysResult
        Its per-day ``days`` and per-protocol ``summary`` tables, ``figure()`` and ``to_folder(out)``.
    """
    from ldpsim.scenarios.studies.discovery.days import discovery_days_from_file
    return discovery_days_from_file(_resolved(scenario), seeds)
