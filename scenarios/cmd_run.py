"""``ldpsim run [SCENARIO]``: simulate a deployment (default: the keyboard fleet), measure it, write a run folder.

The folder (``--out``, default ``runs/<name>-seed<seed>``) is a locked run folder of kind ``"run"``
(:mod:`ldpsim.evaluation.runfolder`: ``.lock`` while running, ``manifest.json`` saying ``running`` until
every output is on disk, then ``complete`` with each file's size and SHA-256). It holds ``config.json``
(the resolved config), ``scenario.toml`` (the input), ``store/`` (the server's Parquet report store),
tables (``daily_estimates.parquet``/``.csv``, ``readings.csv``, ``top.csv``, ``uploads.csv``,
``queue.csv``, ``bundles.csv``, ``summary.json``), ``plots/`` and ``report.md``. A rerun into the same
folder first deletes only what an earlier ``ldpsim run`` wrote there; any other non-empty folder is
refused. ``--dry-run`` prints the plan and its memory estimate; a fleet that cannot fit this machine
is refused before it starts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.scenarios import options

UNITS = {"typing_speed": "wpm", "session_length": "s"}


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="keyboard",
                        help="a deployment scenario: a TOML file or a shipped name (default: keyboard; "
                             "`ldpsim scenarios` lists them)")
    parser.add_argument("--devices", type=options.positive_int, help="number of simulated phones (default: [deployment] devices)")
    parser.add_argument("--days", type=options.positive_int, help="number of simulated days (default: [deployment] days)")
    options.add_seed(parser, "[deployment] seed")
    options.add_workers(parser, "[deployment] workers; each worker simulates a shard of the fleet")
    options.add_out(parser, "runs/<name>-seed<seed>")
    options.add_dry_run(parser)


def _prepare(out: Path, config_json: str, seed: int):
    """Lock ``out`` as a run folder: new, empty, or an earlier ``ldpsim run`` folder, whose outputs (only
    files ldpsim wrote; never through a symbolic link) are deleted first, since shards append to the
    store. The manifest says ``running`` until :meth:`~ldpsim.evaluation.runfolder.RunFolder.finalize`."""
    from ldpsim.evaluation.runfolder import RunFolder
    identity = {"fingerprint": hashlib.sha256(config_json.encode()).hexdigest()[:16], "seed": seed}
    return RunFolder.open(out, "run", identity, resume=False, replace=True)


def run(args) -> int:
    from ldpsim.evaluation.cost import CostError, deployment_plan
    from ldpsim.evaluation.runfolder import RunFolderError
    from ldpsim.simulator.cluster import ClusterError
    from ldpsim.evaluation.scenario.deployment_file import load_deployment
    from ldpsim.scenarios.catalog import resolve
    try:
        scenario = resolve(args.scenario)
        cfg, meta = load_deployment(scenario, args.devices, args.days, args.seed)
        workers = args.workers if args.workers is not None else meta["workers"]
        plan = deployment_plan(cfg, workers, scenario)
        out = Path(args.out or Path("runs") / f"{meta['name']}-seed{cfg.seed}")
        if args.dry_run:
            print(f"{meta['name']}: {plan.describe()}\nrun folder: {out}\n(dry run: nothing was run or written)")
            return 0
        config_json = json.dumps(dataclasses.asdict(cfg), indent=1, default=str, ensure_ascii=False)
        folder = _prepare(out, config_json, cfg.seed)
    except (ScenarioError, RunFolderError, CostError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with folder:
        folder.write_text("scenario.toml", scenario.read_text(encoding="utf-8"))
        folder.write_text("config.json", config_json)
        options.say(args, f"{meta['name']}: {cfg.n_devices} devices × {cfg.n_days} days, seed {cfg.seed}, "
                          f"{workers} worker(s) → {out}")
        try:
            _simulate(args, cfg, meta, workers, out)
        except ClusterError as exc:
            print(f"error: {exc}\n({out} is marked incomplete)", file=sys.stderr)
            return 2
        folder.finalize(adopt=True)
    options.say(args, f"\nrun folder: {out}  (open report.html in a browser)")
    return 0


def _simulate(args, cfg, meta: dict, workers: int, out: Path) -> None:
    """Run the deployment into ``out/store``, measure it, write tables, plots and the reports."""
    import numpy as np

    from ldpsim.evaluation.deployment_metrics import measure
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.simulator.deployment import run as run_deployment
    shards = min(workers, cfg.n_blocks)
    scheduler = args.scheduler or ("local" if shards > 1 else None)
    days = cfg.n_days + cfg.drain_days
    bar = options.Progress(days, f"simulated days (incl. {cfg.drain_days} drain days)", options.show_progress(args))
    result = run_deployment(cfg, out, shards, scheduler, lambda done: bar.update_to(done / shards))
    bar.close()
    tables = measure(cfg, result, np.random.SeedSequence(cfg.seed, spawn_key=(9,)))
    _write(out, cfg, result, tables)
    report_from_run_dir(out, title=f"{meta['name']}: {cfg.n_devices} devices × {cfg.n_days} days, seed {cfg.seed}")
    print(format_summary(tables))


def _write(out: Path, cfg, result, tables: dict) -> None:
    import pandas as pd

    from ldpsim.evaluation.deployment_metrics import write_plots
    from ldpsim.simulator.durable import write_file, write_text
    daily = tables["daily"]
    if not daily.empty:
        write_file(out / "daily_estimates.parquet", daily.to_parquet)
        write_file(out / "daily_estimates.csv", lambda p: daily.drop(columns="token").to_csv(p, index=False))
    write_file(out / "readings.csv", lambda p: tables["readings"].to_csv(p, index=False))
    write_file(out / "top.csv", lambda p: tables["top"].to_csv(p, index=False))
    for name, rows in result.records.items():
        write_file(out / f"{name}.csv", lambda p, rows=rows: pd.DataFrame(rows).to_csv(p, index=False))
    write_text(out / "summary.json", json.dumps(tables["summary"], indent=1, default=str, ensure_ascii=False))
    plots = write_plots(out / "plots", daily, tables["readings"], cfg)
    report = ["# Deployment run", "", "```", format_summary(tables), "```", ""]
    report += [f"![{p.stem}](plots/{p.name})" for p in plots]
    write_text(out / "report.md", "\n".join(report) + "\n")


def format_summary(tables: dict) -> str:
    """The printed summary: top-10 true vs estimated, accuracy, network, ledger, adversary."""
    from ldpsim.simulator.config import READINGS
    s, top, lines = tables["summary"], tables["top"], []
    if not top.empty:
        lines.append(f"{'rank':>4} {'emoji':<6}{'true':>9}{'estimate':>10}{'ΔE':>8}{'ΔR':>7}{'variance':>11}"
                     f"{'theory':>11}")
        for i, r in top.iterrows():
            lines.append(f"{i + 1:>4} {r['token']:<6}{r['true']:>9.4f}{r['estimate']:>10.4f}{r['delta_e']:>8.3f}"
                         f"{r['delta_r']:>7.2f}{r['variance']:>11.2e}{r['theory_variance']:>11.2e}")
        lines.append("(shares of donated emoji, mean over days; ΔE, ΔR, variance over days vs each day's truth;\n"
                     " theory: the mechanism's variance given the day's true counts)")
    rows = [
        ("device-days/s", f"{s['device_days_per_s']:,.0f} ({s['devices']} devices × {s['days']} days in "
                          f"{s['seconds']:.1f} s, {s['workers']} worker(s))"),
        ("trend", f"{s.get('trend_token', '-')} from day {s.get('trend_start_day', '-')}: estimated top-10 on day "
                  f"{s.get('first_day_top10_estimate')}, true top-10 on day {s.get('first_day_top10_true_donated')}"),
        ("truth level", f"mean |estimate − truth| of top-10 shares: {s.get('share_mae_vs_donated', float('nan')):.4f} "
                        f"vs donated records, {s.get('share_mae_vs_event', float('nan')):.4f} vs all typed emoji"),
        *[(name.replace("_", " "), f"mean: bias {s[name + '_bias']:+.2f}, RMSE {s[name + '_rmse']:.2f} "
           f"({UNITS.get(name, 'raw units')}; vs mean of donated readings)")
          for name in READINGS if name + "_bias" in s],
        ("uploads", f"{100 * s['upload_success']:.2f}% of bundles acknowledged; {s['bundles_expired']} expired, "
                    f"{s['bundles_gave_up']} given up, {s['bundles_pending']} pending; "
                    f"{100 * s['attempt_loss']:.1f}% of attempts lost"),
        ("server", f"{s['server_stored']} reports stored, {s['server_duplicates']} duplicates dropped, "
                   f"{s['server_lost_in_crash']} uploads lost in a crash (retried), "
                   f"queue mean {s['queue_mean']:.2f} max {s['queue_max']} batches"),
        ("bandwidth", f"{s['bytes_per_uploading_device_day']:.0f} B per uploading device-day, "
                      f"{s['bytes_per_device_per_day']:.1f} B per device-day"),
        ("ε spent", f"mean {s['epsilon_total_mean']:.2f}, max {s['epsilon_total_max']:.2f} per device "
                    f"(budget {s['budget_total']:g}); max {s['epsilon_daily_max']:.2f} per day "
                    f"(budget {s['budget_daily']:g}); {s['donations_refused']} donations refused"),
        ("adversary", f"favourite emoji of {s.get('adversary_devices', 0)} devices guessed: linked "
                      f"{s.get('adversary_linked', float('nan')):.3f}, stripped+shuffled "
                      f"{s.get('adversary_stripped', float('nan')):.3f}, prior only "
                      f"{s.get('adversary_prior_only', float('nan')):.3f}"),
    ]
    lines.append("")
    lines += [f"{k:<16}{v}" for k, v in rows]
    return "\n".join(lines)
