"""``ldpsim plot RUN_DIR`` for a deployment run: its figures drawn from the tables its folder stores.

A run that did not draw its figures (``figures = "auto"`` below the size that amortises them, or ``"none"``:
:mod:`ldpsim.scenarios.studies.deployment.run_figures`) gets them here, the same files a run with
``figures = "all"`` writes: :func:`plot_deployment` reads the run's tables back (``summary.json``,
``daily_estimates.parquet`` and the CSV tables of :data:`~ldpsim.scenarios.studies.deployment.study.TABLE_FILES`)
and its configuration (``config.json``), draws every figure
(:func:`ldpsim.evaluation.report.deployment_plots.write_plots`), and rewrites ``report.md`` and ``report.html``
so that they show them. It holds the folder's lock (:func:`ldpsim.runtime.runfolder.hold`) throughout, draws only
from a finished folder whose files still match its manifest, never writes through a symbolic link, keeps the
figures that already exist unless ``replace``, and adds what it wrote to the folder's manifest
(:meth:`ldpsim.runtime.runfolder.RunFolder.amend`).
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.runfolder import RunFolderError, hold, read_manifest, verify_folder
from ldpsim.scenarios.studies.deployment.run_figures import report_md, report_title
from ldpsim.scenarios.studies.deployment.study import LAYOUT, TABLE_FILES


#: what :func:`plot_deployment` does not read (a problem of :func:`~ldpsim.runtime.runfolder.verify_folder` starts
#: with the file's path): the figures and report pages it writes, and the report store
DERIVED = ("plots/", "report.md:", "report.html:", "store/")


@dataclass(frozen=True, repr=False)
class RunPlots(BriefRepr):
    """What :func:`plot_deployment` returns.

    Attributes
    ----------
    out : Path
        The run folder.
    drawn : list of Path
        The figures written now, in reading order.
    kept : list of Path
        The figures that existed already and were kept (``replace=False``).
    report : Path
        The rewritten ``report.html``.
    """

    out: Path
    drawn: list
    kept: list
    report: Path


def _table(path: Path) -> pd.DataFrame:
    """A stored CSV table (an empty frame when the run wrote none, or an empty one)."""
    return pd.read_csv(path) if path.is_file() and path.stat().st_size > 1 else pd.DataFrame()


def read_tables(run_dir) -> dict:
    """The tables of a finished deployment run, read back from its folder under the keys of
    ``DeploymentStudy.tables`` that its figures and summary read."""
    run_dir = Path(run_dir)
    tables = {key: _table(run_dir / f"{name}.csv") for key, name in TABLE_FILES.items()}
    tables.update({name: _table(run_dir / f"{name}.csv") for name in ("central_windows", "central_days")})
    if (run_dir / "daily_estimates.parquet").is_file():
        tables["daily"] = pd.read_parquet(run_dir / "daily_estimates.parquet")
    for name in ("numeric_metrics", "numeric_cells"):  # a reading use case's key is "", which CSV reads as NaN
        if "key" in tables[name]:
            tables[name]["key"] = tables[name]["key"].astype(object).where(tables[name]["key"].notna(), "")
    tables["summary"] = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    tables["budget"].attrs["donating_devices"] = tables["summary"].get("donating_devices", 0)
    return tables


def run_config(run_dir):
    """The :class:`~ldpsim.simulator.config.DeploymentConfig` a run folder's ``config.json`` holds, rebuilt (its
    weights normalised again, equal to the run's up to rounding; its ``[numeric.<name>]`` use cases left out:
    their figures read only their tables)."""
    from ldpsim.simulator.config import DeploymentConfig, UseCase
    path = Path(run_dir) / "config.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        kw = {k: _tuples(v) for k, v in raw.items() if k not in ("use_cases", "numeric")}
        use_cases = tuple(UseCase(**{k: _tuples(v) for k, v in u.items()}) for u in raw["use_cases"])
        return DeploymentConfig(use_cases=use_cases, **kw)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise RunFolderError(f"{path} is not a deployment run's configuration ({exc})") from None


def _tuples(value):
    """JSON lists as the tuples the config's frozen fields hold."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _name(run_dir: Path) -> str:
    """The scenario's ``[deployment] name`` from the folder's ``scenario.toml``."""
    try:
        table = tomllib.loads((run_dir / "scenario.toml").read_text(encoding="utf-8")).get("deployment", {})
    except (OSError, ValueError):
        return "deployment"
    return str(table.get("name", "deployment")) if isinstance(table, dict) else "deployment"


def _figure_files(folder) -> set[str]:
    """The names in the run's ``plots/``; a symbolic link there (or ``plots`` itself a link) is an error: ldpsim
    never writes through one nor replaces one."""
    plots = folder.path("plots")  # (refuses plots/ as a symbolic link)
    entries = sorted(os.scandir(plots), key=lambda e: e.name) if plots.is_dir() else []
    for entry in entries:
        if entry.is_symlink():
            raise RunFolderError(f"{entry.path} is a symbolic link, which ldpsim did not create; ldpsim never "
                                 "follows or replaces one: remove it, or copy the run elsewhere")
    return {entry.name for entry in entries}


def plot_deployment(run_dir, replace: bool = False) -> RunPlots:
    """Draw a finished deployment run's figures into ``RUN_DIR/plots`` and rewrite its report pages to show them.

    Parameters
    ----------
    run_dir : str or Path
        The folder of a finished ``ldpsim run`` (kind ``"run"`` in its manifest).
    replace : bool
        Draw again the figures that already exist (default: keep them).

    Returns
    -------
    RunPlots
        The figures drawn and kept, and the report page.

    Raises
    ------
    RunFolderError
        Not a run folder (no manifest, or another kind), a folder another command holds, a run that did not
        finish, a file changed since the run, or a symbolic link where the figures go.
    """
    from ldpsim.evaluation.report.deployment_plots import write_plots
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.evaluation.report.run_summary import html_sections
    from ldpsim.runtime.durable import write_text
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if manifest is None or manifest.get("kind") != LAYOUT.kind:
        what = "no manifest.json" if manifest is None else f"an ldpsim {manifest.get('kind')} folder"
        raise RunFolderError(f"{run_dir} is not the folder of a deployment run (`ldpsim run`): {what}")
    with hold(run_dir) as folder:
        problems = [p for p in verify_folder(run_dir) if not p.startswith(DERIVED)]
        if problems:
            raise RunFolderError(f"{run_dir}: its figures are drawn only from the run's own tables, and "
                                 f"{'; '.join(problems[:3])}{' …' if len(problems) > 3 else ''}")
        before = _figure_files(folder)
        tables, cfg = read_tables(run_dir), run_config(run_dir)
        paths = write_plots(folder.path("plots/captions.json").parent, tables, cfg, replace=replace)
        summary = (run_dir / "summary.txt").read_text(encoding="utf-8").removesuffix("\n")
        folder.path("report.html")  # (not a symbolic link)
        write_text(folder.path("report.md"), report_md(summary, paths))
        report = report_from_run_dir(run_dir, title=report_title(_name(run_dir), cfg),
                                     summary=html_sections(tables, cfg))
        kept = [p for p in paths if p.name in before and not replace]
        drawn = [p for p in paths if p not in kept]
        folder.amend([f"plots/{p.name}" for p in drawn] + ["plots/captions.json", "report.md", "report.html"])
    return RunPlots(run_dir, drawn, kept, report)
