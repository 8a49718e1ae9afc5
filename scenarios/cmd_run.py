"""``ldpsim run [SCENARIO]``: simulate a deployment (default: the keyboard fleet), measure it, write a run folder.

The folder (``--out``, default ``runs/<name>-seed<seed>``) holds ``config.json`` (the resolved
config), ``scenario.toml`` (the input), ``store/`` (the server's Parquet report store), tables
(``daily_estimates.parquet``/``.csv``, ``readings.csv``, ``top.csv``, ``uploads.csv``, ``queue.csv``,
``bundles.csv``, ``summary.json``), ``plots/`` and ``report.md``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
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


def _prepare(out: Path) -> None:
    """An empty folder, or a previous run folder (its store is cleared: shards append to it)."""
    if out.exists() and any(out.iterdir()):
        if not (out / "config.json").exists():
            raise ScenarioError(out, "--out", "exists, is not empty and holds no previous run; choose another folder")
        shutil.rmtree(out / "store", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)


def run(args) -> int:
    import numpy as np

    from ldpsim.evaluation.deployment_metrics import measure
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.evaluation.scenario.deployment_file import load_deployment
    from ldpsim.evaluation.shuffle_ledger import add_to_run as add_central_epsilon
    from ldpsim.scenarios.catalog import resolve
    from ldpsim.simulator.deployment import run as run_deployment
    try:
        scenario = resolve(args.scenario)
        cfg, meta = load_deployment(scenario, args.devices, args.days, args.seed)
        workers = args.workers if args.workers is not None else meta["workers"]
        out = Path(args.out or Path("runs") / f"{meta['name']}-seed{cfg.seed}")
        _prepare(out)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    (out / "scenario.toml").write_text(scenario.read_text(encoding="utf-8"), encoding="utf-8")
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1, default=str,
                                                ensure_ascii=False), encoding="utf-8")
    options.say(args, f"{meta['name']}: {cfg.n_devices} devices × {cfg.n_days} days, seed {cfg.seed}, "
                      f"{workers} worker(s) → {out}")
    shards = min(workers, cfg.n_blocks)
    scheduler = args.scheduler or ("local" if shards > 1 else None)
    days = cfg.n_days + cfg.drain_days
    bar = options.Progress(days, f"simulated days (incl. {cfg.drain_days} drain days)", options.show_progress(args))
    result = run_deployment(cfg, out, shards, scheduler, lambda done: bar.update_to(done / shards))
    bar.close()
    tables = measure(cfg, result, np.random.SeedSequence(cfg.seed, spawn_key=(9,)))
    add_central_epsilon(out, cfg, result, tables)  # central ε bought by the shuffle (summary + tables + plot)
    _write(out, cfg, result, tables)
    page = report_from_run_dir(out, title=f"{meta['name']}: {cfg.n_devices} devices × {cfg.n_days} days, "
                                          f"seed {cfg.seed}")
    print(format_summary(tables))
    options.say(args, f"\nrun folder: {out}  (open {page.name} in a browser)")
    return 0


def _write(out: Path, cfg, result, tables: dict) -> None:
    import pandas as pd

    from ldpsim.evaluation.deployment_metrics import write_plots
    daily = tables["daily"]
    if not daily.empty:
        daily.to_parquet(out / "daily_estimates.parquet")
        daily.drop(columns="token").to_csv(out / "daily_estimates.csv", index=False)
    tables["readings"].to_csv(out / "readings.csv", index=False)
    tables["top"].to_csv(out / "top.csv", index=False)
    for name, rows in result.records.items():
        pd.DataFrame(rows).to_csv(out / f"{name}.csv", index=False)
    (out / "summary.json").write_text(json.dumps(tables["summary"], indent=1, default=str, ensure_ascii=False),
                                      encoding="utf-8")
    plots = write_plots(out / "plots", daily, tables["readings"], cfg) + sorted((out / "plots").glob("central_*.png"))
    report = ["# Deployment run", "", "```", format_summary(tables), "```", ""]
    report += [f"![{p.stem}](plots/{p.name})" for p in plots]
    (out / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")


def format_summary(tables: dict) -> str:
    """The printed summary: top-10 true vs estimated, accuracy, network, ledger, adversary."""
    from ldpsim.evaluation.shuffle_ledger import format_central
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
        ("central ε", format_central(s)),
        ("adversary", f"favourite emoji of {s.get('adversary_devices', 0)} devices guessed: linked "
                      f"{s.get('adversary_linked', float('nan')):.3f}, stripped+shuffled "
                      f"{s.get('adversary_stripped', float('nan')):.3f}, prior only "
                      f"{s.get('adversary_prior_only', float('nan')):.3f}"),
    ]
    lines.append("")
    lines += [f"{k:<16}{v}" for k, v in rows]
    return "\n".join(lines)
