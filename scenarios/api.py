"""The short Python API for notebooks: :func:`run` a deployment, :func:`sweep` a grid.

Both drive the same code as the command line (``ldpsim run`` / ``ldpsim sweep``), write the same run
folder, and return what a notebook wants next. Bad input raises ``ValueError`` with the command line's
message.

>>> import ldpsim                                                     # doctest: +SKIP
>>> result = ldpsim.run("keyboard", devices=2000, days=3, out="runs/nb")   # doctest: +SKIP
>>> result.summary["upload_success"]                                  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path


def _call(argv: list[str]) -> None:
    """Run ``ldpsim ARGV`` quietly in this process; a non-zero exit raises ``ValueError`` with its message."""
    from ldpsim.scenarios.cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv + ["-q"])
    if code != 0:
        message = err.getvalue().strip().splitlines()
        raise ValueError(message[-1].removeprefix("error: ") if message else f"ldpsim {argv[0]} exited {code}")


def _common(seed, workers, out) -> list[str]:
    argv = []
    for flag, value in (("--seed", seed), ("--workers", workers), ("--out", out)):
        if value is not None:
            argv += [flag, str(value)]
    return argv


def run(scenario: str | Path = "keyboard", **options):
    """Simulate a deployment scenario, as ``ldpsim run`` does: a shipped name (``"keyboard"``) or a file.

    Parameters
    ----------
    scenario : str or Path
        A deployment scenario file, or a shipped name (``ldpsim scenarios`` lists them).
    **options
        ``devices``, ``days``, ``seed``, ``workers``, ``scheduler``, ``out``, ``force``, ``progress``,
        ``log``, ``vocabulary``: as :func:`ldpsim.evaluation.deployment.study.run_deployment`.

    Returns
    -------
    DeploymentStudy
        The run folder, its summary and tables, the figures and the printed summary.
    """
    from ldpsim.evaluation.deployment.study import run_deployment
    from ldpsim.scenarios.catalog import resolve
    return run_deployment(resolve(scenario), **options)


def sweep(scenario: str | Path, *, seed: int | None = None, workers: int | None = 1,
          out: str | Path | None = None, table: str = "summary", vocabulary: str | Path | None = None):
    """Run a sweep scenario's grid, as ``ldpsim sweep`` does, and return its results.

    Parameters
    ----------
    scenario : str or Path
        A sweep scenario file, or a shipped name such as ``"smoke"``.
    seed : int, optional
        Root seed (default: the scenario's).
    workers : int, optional
        Worker processes of a local Dask cluster; 1 (the default here) runs in this process.
    out : str or Path, optional
        The run folder (default ``runs/<scenario name>``); an interrupted sweep resumes there.
    table : {"summary", "estimates"}
        Which stored table to return.
    vocabulary : str or Path, optional
        Your own items instead of the scenario's workload (``--vocabulary``; keeps its ``n``).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, metric) with mean and standard error (``summary``), or the stored estimates.
    """
    from ldpsim.evaluation.scenario.grid import load_scenario
    from ldpsim.evaluation.sweep.store import read_results
    from ldpsim.scenarios.catalog import resolve
    if out is None:  # the command line's default folder, named here so that it can be read back
        out = Path("runs") / load_scenario(resolve(scenario), vocabulary).name
    _call(["sweep", str(scenario)] + _common(seed, workers, out)
          + (["--vocabulary", str(vocabulary)] if vocabulary is not None else []))
    return read_results(out, table)


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
        ``seed``, ``vocabulary``: see :func:`ldpsim.evaluation.deployment.compare.compare`.

    Returns
    -------
    Comparison
        Its ``table``, ``spend``, ``figure()`` and ``to_folder(out)``.
    """
    from ldpsim.evaluation.deployment.compare import compare as compare_designs
    from ldpsim.scenarios.catalog import resolve
    return compare_designs(resolve(scenario), designs, **options)
