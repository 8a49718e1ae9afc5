"""A deployment study: simulate a deployment scenario, measure it, and write its run folder.

The library behind ``ldpsim run`` and ``ldpsim.run(...)``: :func:`run_deployment` returns a
:class:`DeploymentStudy` (the folder, the summary, the tables as pandas, the figures, the printed
summary) and raises the errors of :mod:`ldpsim.runtime.errors` with the messages the command line
prints; :func:`plan_deployment` is ``--dry-run``.

The folder (``out``, default :func:`default_out`: ``runs/<name>-<devices>x<days>d-seed<seed>``, so a
trial run never lands on the main run) is a locked run folder of kind ``"run"``
(:mod:`ldpsim.runtime.runfolder`: ``.lock`` while running, ``manifest.json`` saying ``running`` until
every output is on disk, then ``complete`` with each file's size and SHA-256). It holds ``config.json``
(the resolved config), ``scenario.toml`` (the input), ``store/`` (the server's Parquet report store),
tables (``pooled_estimates.csv``, ``top.csv``, ``daily_estimates.parquet``/``.csv``, ``daily_reports.csv``,
``readings.csv``, ``readings_pooled.csv``, ``words.csv``, with ``[numeric.<name>]`` use cases ``numeric_metrics.csv``
and ``numeric_cells.csv`` (:mod:`ldpsim.evaluation.deployment.numeric_runs`), ``uploads.csv``, ``queue.csv``, ``bundles.csv``,
``central_windows.csv``, ``central_days.csv``, ``summary.json``; with a use case under a trust model
``trust_guarantees.csv`` and ``collectors.csv``, the collectors' log), ``summary.txt`` (the printed summary),
``plots/`` (PNGs and ``captions.json``; drawn when the run is large enough to amortise them, or asked to:
:mod:`~ldpsim.scenarios.studies.deployment.run_figures`, else later by ``ldpsim plot RUN_DIR``:
:mod:`~ldpsim.scenarios.studies.deployment.replot`), ``report.md`` and ``report.html``.

A rerun of the same configuration and seed into its folder first deletes what the earlier run wrote
there; a finished run of another configuration or seed is replaced only with ``force``; any other
non-empty folder is refused. A fleet that cannot fit this machine is refused before it starts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from ldpsim.runtime.runfolder import Layout

#: a deployment run's folder: the summary and tables of :func:`write_tables`, the report store, the figures
LAYOUT = Layout("run", ("config.json", "scenario.toml", "report.html", "report.md", "summary.json", "summary.txt",
                      "daily_estimates.parquet", "daily_estimates.csv", "daily_reports.csv", "pooled_estimates.csv",
                      "readings.csv", "readings_pooled.csv", "reading_distributions.csv", "numeric_metrics.csv",
                      "numeric_cells.csv", "words.csv", "top.csv", "uploads.csv", "queue.csv",
                      "flushes.csv", "bundles.csv", "central_windows.csv", "central_days.csv", "trend_metrics.csv",
                      "trend_trajectory.csv"),
                {"store": ("use_case=*/day=*/part-*.parquet",), "plots": ("*.png", "*.svg", "captions.json")})

from ldpsim.runtime.brief_repr import BriefRepr

#: the tables of a study (``DeploymentStudy.tables``) → the CSV file holding each
TABLE_FILES = {"pooled": "pooled_estimates", "top": "top", "daily": "daily_estimates", "budget": "daily_reports",
               "readings": "readings", "pooled_readings": "readings_pooled", "distributions": "reading_distributions",
               "numeric_metrics": "numeric_metrics", "numeric_cells": "numeric_cells",
               "words": "words",
               "trust": "trust_guarantees", "trend": "trend_metrics", "trend_trajectory": "trend_trajectory"}


@dataclass(frozen=True)
class DeploymentPlan:
    """What :func:`run_deployment` would run: the scenario, its resolved config, workers, folder, cost."""

    name: str
    scenario: Path
    config: object
    workers: int
    out: Path
    cost: object
    notices: tuple = ()
    numeric: tuple = ()  # the [numeric.<name>] use cases (NumericUseCase)
    figures: str = "auto"  # the scenario's [deployment] figures

    def describe(self) -> str:
        """The plan as ``--dry-run`` prints it: the cost, the items and words the devices type, the folder
        (the vocabulary's notices are in ``notices``)."""
        from ldpsim.evaluation.workloads.vocabulary import describe_items
        cfg, lines = self.config, [f"{self.name}: {self.cost.describe()}"]
        order = np.argsort(-np.asarray(cfg.item_weights, dtype=float), kind="stable")
        lines.append(f"items: {len(cfg.items):,}; " + describe_items(
            [cfg.items[i] for i in order], np.asarray(cfg.item_weights)[order], "share", 6))
        if cfg.words:
            order = np.argsort(-np.asarray(cfg.word_weights[:-1]), kind="stable")
            lines.append(f"words: {len(cfg.words) - 1:,} and the slang word {cfg.words[-1]!r} (typed from day "
                         f"{cfg.slang_start_day}); " + describe_items(
                             [cfg.words[i] for i in order], np.asarray(cfg.word_weights)[order], "share", 6))
        if self.numeric:
            lines.append("numeric use cases: " + "; ".join(
                f"{u.name} ({u.design.name}, ε = {u.design.epsilon:g} of one "
                f"{'report' if u.design.trusts == 'nobody' else 'nightly release'}: "
                f"{', '.join(d['keys']) if (d := u.as_dict())['keys'] else u.reading})" for u in self.numeric))
        return "\n".join([*lines, f"run folder: {self.out}"])


@dataclass(frozen=True, repr=False)
class DeploymentStudy(BriefRepr):
    """What :func:`run_deployment` returns.

    Attributes
    ----------
    out : Path
        The run folder (absolute): ``config.json``, ``store/``, tables, ``plots/``, ``report.html``.
    config : DeploymentConfig
        The resolved configuration that ran.
    summary : dict
        ``summary.json``: accuracy, network, ledger, central ε and adversary figures of the run.
    tables : dict of str → pandas.DataFrame
        ``daily``, ``pooled``, ``top``, ``readings``, ``pooled_readings``, ``budget``, ``words``
        (:func:`ldpsim.evaluation.deployment.estimates.measure`) and ``central_windows``, ``central_days``.
    text : str
        The printed summary (``summary.txt``).
    figure_files : list of Path
        The PNGs of ``plots/`` in reading order (their captions in ``plots/captions.json``); empty when the run
        did not draw them (``figures_note`` says why, and how to draw them).
    timings : tuple of PhaseTime
        Wall-clock and CPU seconds of each phase of the run (:mod:`ldpsim.runtime.phases`): the simulation,
        the measurement, the central ε, the tables, the figures, the report page and the folder's check.
    """

    out: Path
    config: object
    summary: dict
    tables: dict
    text: str
    figure_files: list
    timings: tuple = ()
    figures_note: str = ""  # the line saying the figures were not drawn and how to draw them ("" when drawn)

    @property
    def daily(self) -> pd.DataFrame:
        """One row per (day, item): true and estimated shares (``daily_estimates.parquet``)."""
        return self.tables["daily"]

    def figures(self) -> dict:
        """The run's figures redrawn from its tables, as matplotlib Figures (file name → Figure)."""
        from ldpsim.evaluation.report.deployment_plots import draw_figures
        return {name: fig for name, fig, _ in draw_figures(self.tables, self.config)}

    def __str__(self) -> str:
        return self.text


def _load(scenario, devices, days, seed, workers, vocabulary):
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    path = Path(scenario)
    cfg, meta = load_deployment(path, devices, days, seed, vocabulary)
    return path, cfg, meta, (workers if workers is not None else meta["workers"])


def default_out(name: str, cfg) -> Path:
    """``runs/<name>-<devices>x<days>d-seed<seed>``: runs of another size or seed never share a folder."""
    return Path("runs") / f"{name}-{cfg.n_devices}x{cfg.n_days}d-seed{cfg.seed}"


def plan_deployment(scenario: str | Path, *, devices: int | None = None, days: int | None = None,
                    seed: int | None = None, workers: int | None = None,
                    out: str | Path | None = None, vocabulary: str | Path | None = None) -> DeploymentPlan:
    """The plan of :func:`run_deployment` with the same arguments, without running or writing anything.

    Raises
    ------
    ScenarioError
        A missing file, a scenario that is not a deployment, or a bad value in it or in the overrides.
    CostError
        A fleet that cannot fit this machine's memory.
    RunFolderError
        An ``out`` that cannot be a run folder (a file, a symbolic link, not writable).
    """
    from ldpsim.evaluation.cost import deployment_plan
    from ldpsim.runtime.runfolder import make_out_folder
    path, cfg, meta, workers = _load(scenario, devices, days, seed, workers, vocabulary)
    cost = deployment_plan(cfg, workers, path)
    folder = Path(out) if out is not None else default_out(meta["name"], cfg)
    make_out_folder(folder, create=False)  # an unusable --out is refused before anything runs
    return DeploymentPlan(meta["name"], path, cfg, workers, folder, cost, tuple(meta["notices"]), meta["numeric"],
                          meta["figures"])


def run_deployment(scenario: str | Path, *, devices: int | None = None, days: int | None = None,
                   seed: int | None = None, workers: int | None = None, scheduler: str | None = None,
                   out: str | Path | None = None, force: bool = False, vocabulary: str | Path | None = None,
                   progress: Callable[[float, int], None] | None = None,
                   log: Callable[[str], None] | None = None, figures: str | None = None) -> DeploymentStudy:
    """Simulate a deployment scenario, measure it and write its run folder (``ldpsim run``).

    Parameters
    ----------
    scenario : str or Path
        A deployment scenario file (``ldpsim.run`` also takes a shipped name: ``ldpsim scenarios`` lists them).
    devices, days : int, optional
        Override the scenario's fleet size and number of simulated days.
    seed : int, optional
        Root seed (default: the scenario's); one seed reproduces the whole run, serial or parallel.
    workers : int, optional
        Worker processes of a local Dask cluster, each simulating a shard of the fleet (default: the
        scenario's); 1 runs in this process.
    scheduler : str, optional
        Address of an existing Dask scheduler instead of a local cluster.
    out : str or Path, optional
        The run folder (default :func:`default_out`).
    force : bool
        Replace a finished run of another configuration or seed in ``out``.
    vocabulary : str or Path, optional
        A vocabulary file or text corpus that replaces the scenario's emoji workload
        (:func:`ldpsim.evaluation.workloads.load_vocabulary`).
    progress : callable, optional
        ``progress(days_done, days_total)`` as the simulated days (including drain days) complete.
    log : callable, optional
        Receives the one-line description of the run as it starts.
    figures : {"auto", "all", "none"}, optional
        Draw the run's figures: ``"auto"`` when the run has at least
        :data:`~ldpsim.scenarios.studies.deployment.run_figures.AUTO_FIGURES_DEVICE_DAYS` device-days, ``"all"``
        always, ``"none"`` never (default: the scenario's ``[deployment] figures``, ``"auto"``). Figures not
        drawn are drawn later by ``ldpsim plot RUN_DIR`` (:func:`~ldpsim.scenarios.studies.deployment.replot.plot_deployment`).

    Returns
    -------
    DeploymentStudy
        The folder, its summary, tables, figures and the printed summary.

    Raises
    ------
    ScenarioError, CostError, RunFolderError, ClusterError, InputError
        (all :class:`ldpsim.runtime.errors.LdpsimError`) with the command line's message (``InputError``: a
        ``figures`` that is none of auto, all, none).

    Examples
    --------
    >>> import ldpsim                                                     # doctest: +SKIP
    >>> result = ldpsim.run("keyboard", devices=2000, days=3, out="runs/nb")   # doctest: +SKIP
    >>> result.summary["upload_success"]                                  # doctest: +SKIP
    """
    from ldpsim.runtime.cluster import ClusterError
    from ldpsim.runtime.phases import PhaseClock
    from ldpsim.runtime.runfolder import RunFolder
    from ldpsim.scenarios.studies.deployment.run_figures import check_figures, choose_figures
    if figures is not None:
        check_figures(figures)
    clock = PhaseClock()
    with clock.phase("setup"):
        plan = plan_deployment(scenario, devices=devices, days=days, seed=seed, workers=workers, out=out,
                               vocabulary=vocabulary)
    drawn = choose_figures(figures or plan.figures, plan.config, plan.out)
    cfg = plan.config
    config = dataclasses.asdict(cfg) | ({"numeric": [u.as_dict() for u in plan.numeric]} if plan.numeric else {})
    config_json = json.dumps(config, indent=1, default=str, ensure_ascii=False)
    identity = {"fingerprint": hashlib.sha256(config_json.encode()).hexdigest()[:16], "seed": cfg.seed}
    # shards append to the store: whatever an earlier run wrote there is deleted first
    with RunFolder.open(plan.out, LAYOUT, identity, resume=False, replace=force) as folder:
        folder.write_text("scenario.toml", plan.scenario.read_text(encoding="utf-8"))
        folder.write_text("config.json", config_json)
        if log is not None:
            for note in plan.notices:
                log(f"note: {note}")
            log(f"{plan.name}: {cfg.n_devices} devices × {cfg.n_days} days, seed {cfg.seed}, "
                f"{plan.workers} worker{'s' if plan.workers != 1 else ''} → {plan.out}")
        try:
            study, parts = _simulate(plan, scheduler, progress, clock, drawn)
        except ClusterError as exc:
            raise ClusterError(f"{exc}\n({plan.out} is marked incomplete)") from exc
        with clock.phase("folder check"):
            folder.finalize(adopt=True, others=parts)  # the store parts the shards wrote (maybe on Dask workers)
    return dataclasses.replace(study, timings=clock.times)


def _simulate(plan: DeploymentPlan, scheduler, progress, clock, drawn) -> tuple[DeploymentStudy, dict]:
    """Run the deployment into ``out/store``, measure it, write tables, plots (when ``drawn.draw``) and the
    reports, each a phase of ``clock``; returns the study and the store parts the shards wrote (absolute path →
    SHA-256)."""
    from ldpsim.evaluation.deployment.estimates import measure
    from ldpsim.evaluation.deployment.numeric_runs import numeric_tables
    from ldpsim.evaluation.deployment.trust_estimates import collectors_of
    from ldpsim.evaluation.privacy.shuffle_ledger import central_summary
    from ldpsim.evaluation.report.deployment_plots import write_plots
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.evaluation.report.run_summary import format_summary, html_sections
    from ldpsim.runtime.durable import write_text
    from ldpsim.scenarios.studies.deployment.run_figures import report_md, report_title
    from ldpsim.evaluation.trends.run_metrics import trend_tables
    from ldpsim.simulator.deployment import run
    from ldpsim.simulator.fleet import stream
    cfg, out = plan.config, plan.out
    shards = min(plan.workers, cfg.n_blocks)
    scheduler = scheduler or ("local" if shards > 1 else None)
    total = cfg.n_days + cfg.drain_days
    with clock.phase("simulation"):
        result = run(cfg, out, shards, scheduler,
                     None if progress is None else lambda done: progress(done / shards, total),
                     collectors=collectors_of(cfg))
    with clock.phase("measurement"):
        tables = measure(cfg, result, stream(cfg.seed, "measure"))
        tables.update(numeric_tables(cfg, plan.numeric))
        tables.update(trend_tables(cfg, result, tables))
    with clock.phase("central ε"):
        windows, days, central = central_summary(cfg, result)  # the central ε bought by the shuffle
    tables["summary"].update(central)
    tables.update(central_windows=windows, central_days=days)
    text = format_summary(tables, cfg)
    with clock.phase("tables"):
        _write(out, cfg, result, tables, text)
    with clock.phase("figures", "" if drawn.draw else f"not drawn: {drawn.reason}"):
        figures = write_plots(out / "plots", tables, cfg) if drawn.draw else []
        write_text(out / "report.md", report_md(text, figures, drawn.note))
    with clock.phase("report page"):
        report_from_run_dir(out, title=report_title(plan.name, cfg), summary=html_sections(tables, cfg),
                            figures_note=drawn.note)
    return (DeploymentStudy(out.resolve(), cfg, tables["summary"], tables, text, figures, figures_note=drawn.note),
            result.store_parts)


def _write(out: Path, cfg, result, tables: dict, summary: str) -> None:
    from ldpsim.runtime.durable import write_file, write_text
    if not tables["daily"].empty:
        write_file(out / "daily_estimates.parquet", tables["daily"].to_parquet)
    for key, name in TABLE_FILES.items():
        optional = ("words", "trust", "distributions", "numeric_metrics", "numeric_cells", "trend", "trend_trajectory")
        if key not in optional or not tables[key].empty:
            write_file(out / f"{name}.csv", lambda p, key=key: tables[key].to_csv(p, index=False, encoding="utf-8"))
    for name, rows in result.records.items():
        write_file(out / f"{name}.csv", lambda p, rows=rows: pd.DataFrame(rows).to_csv(p, index=False))
    if result.collections:  # the trust collectors' log: rounds, cohorts, jobs, crashes
        log = pd.DataFrame([{"use_case": uc, **r} for uc, got in result.collections.items() for r in got.records])
        write_file(out / "collectors.csv", lambda p: log.to_csv(p, index=False))
    for name in ("central_windows", "central_days"):
        write_file(out / f"{name}.csv", lambda p, name=name: tables[name].to_csv(p, index=False))
    write_text(out / "summary.json", json.dumps(tables["summary"], indent=1, default=str, ensure_ascii=False))
    write_text(out / "summary.txt", summary + "\n")

