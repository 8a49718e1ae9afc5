"""The short Python API for notebooks: :func:`run` a deployment, :func:`sweep` a grid.

Both drive the same code as the command line (``ldpsim run`` / ``ldpsim sweep``), write the same run
folder, and return what a notebook wants next: the folder and its tables as pandas objects. Bad input
raises ``ValueError`` with the command line's message.

>>> import ldpsim                                                     # doctest: +SKIP
>>> result = ldpsim.run("keyboard", devices=2000, days=3, out="runs/nb")   # doctest: +SKIP
>>> result.summary["upload_success"]                                  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` returns.

    Attributes
    ----------
    out : Path
        The run folder (``config.json``, ``store/``, tables, ``plots/``, ``report.html``).
    summary : dict
        ``summary.json``: accuracy, network, ledger and adversary figures of the run.
    daily : pandas.DataFrame
        One row per (day, item): true and estimated shares (``daily_estimates.parquet``).
    """

    out: Path
    summary: dict
    daily: object


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


def run(scenario: str | Path = "keyboard", *, devices: int | None = None, days: int | None = None,
        seed: int | None = None, workers: int | None = None, out: str | Path | None = None) -> RunResult:
    """Simulate a deployment scenario, as ``ldpsim run`` does.

    Parameters
    ----------
    scenario : str or Path
        A deployment scenario file, or a shipped name (``ldpsim scenarios`` lists them).
    devices, days : int, optional
        Override the scenario's fleet size and number of simulated days.
    seed : int, optional
        Root seed (default: the scenario's); one seed reproduces the whole run.
    workers : int, optional
        Worker processes (default: the scenario's).
    out : str or Path, optional
        The run folder (default ``runs/<name>-seed<seed>``).

    Returns
    -------
    RunResult
        The folder, its summary and its daily estimates.
    """
    import pandas as pd

    from ldpsim.evaluation.scenario.deployment_file import load_deployment
    from ldpsim.scenarios.catalog import resolve
    if out is None:  # the command line's default folder, named here so that it can be read back
        cfg, meta = load_deployment(resolve(scenario), devices, days, seed)
        out = Path("runs") / f"{meta['name']}-seed{cfg.seed}"
    argv = ["run", str(scenario)] + _common(seed, workers, out)
    for flag, value in (("--devices", devices), ("--days", days)):
        if value is not None:
            argv += [flag, str(value)]
    _call(argv)
    folder = Path(out).resolve()
    daily = folder / "daily_estimates.parquet"
    return RunResult(folder, json.loads((folder / "summary.json").read_text(encoding="utf-8")),
                     pd.read_parquet(daily) if daily.exists() else pd.DataFrame())


def sweep(scenario: str | Path, *, seed: int | None = None, workers: int | None = 1,
          out: str | Path | None = None, table: str = "summary"):
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

    Returns
    -------
    pandas.DataFrame
        One row per (cell, metric) with mean and standard error (``summary``), or the stored estimates.
    """
    from ldpsim.evaluation.scenario.grid import load_scenario
    from ldpsim.evaluation.sweep.store import read_results
    from ldpsim.scenarios.catalog import resolve
    if out is None:  # the command line's default folder, named here so that it can be read back
        out = Path("runs") / load_scenario(resolve(scenario)).name
    _call(["sweep", str(scenario)] + _common(seed, workers, out))
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
