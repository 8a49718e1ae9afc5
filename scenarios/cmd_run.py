"""``ldpsim run [SCENARIO]``: simulate a deployment (default: the keyboard fleet), measure it, write a run folder.

The folder (``--out``, default ``runs/<name>-seed<seed>``) is a locked run folder of kind ``"run"``
(:mod:`ldpsim.runtime.runfolder`: ``.lock`` while running, ``manifest.json`` saying ``running`` until
every output is on disk, then ``complete`` with each file's size and SHA-256). It holds ``config.json`` (the resolved
config), ``scenario.toml`` (the input), ``store/`` (the server's Parquet report store), tables
(``pooled_estimates.csv``, ``top.csv``, ``daily_estimates.parquet``/``.csv``, ``daily_reports.csv``,
``readings.csv``, ``readings_pooled.csv``, ``uploads.csv``, ``queue.csv``, ``bundles.csv``,
``summary.json``), ``summary.txt`` (the printed summary), ``plots/`` (PNGs and ``captions.json``),
``report.md`` and ``report.html``.

The printed summary is a list of sections (:data:`SECTIONS`): functions ``(tables, cfg) -> lines``
(an empty list leaves the section out). A new measurement adds its function to the list.

A rerun into the same folder first deletes only what an earlier ``ldpsim run`` wrote there; any other
non-empty folder is refused. ``--dry-run`` prints the plan and its memory estimate; a fleet that cannot
fit this machine is refused before it starts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import textwrap
from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.scenarios import options

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
    store. The manifest says ``running`` until :meth:`~ldpsim.runtime.runfolder.RunFolder.finalize`."""
    from ldpsim.runtime.runfolder import RunFolder
    identity = {"fingerprint": hashlib.sha256(config_json.encode()).hexdigest()[:16], "seed": seed}
    return RunFolder.open(out, "run", identity, resume=False, replace=True)


def run(args) -> int:
    from ldpsim.evaluation.cost import CostError, deployment_plan
    from ldpsim.runtime.runfolder import RunFolderError
    from ldpsim.runtime.cluster import ClusterError
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
                          f"{workers} worker{'s' if workers != 1 else ''} → {out}")
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

    from ldpsim.evaluation.deployment.estimates import measure
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.evaluation.privacy.shuffle_ledger import add_to_run as add_central_epsilon
    from ldpsim.simulator.deployment import run as run_deployment
    shards = min(workers, cfg.n_blocks)
    scheduler = args.scheduler or ("local" if shards > 1 else None)
    days = cfg.n_days + cfg.drain_days
    bar = options.Progress(days, f"simulated days (incl. {cfg.drain_days} drain days)", options.show_progress(args))
    result = run_deployment(cfg, out, shards, scheduler, lambda done: bar.update_to(done / shards))
    bar.close()
    tables = measure(cfg, result, np.random.SeedSequence(cfg.seed, spawn_key=(9,)))
    add_central_epsilon(out, cfg, result, tables)  # central ε bought by the shuffle (summary + tables + plot)
    summary = format_summary(tables, cfg)
    _write(out, cfg, result, tables, summary)
    report_from_run_dir(out, title=f"{meta['name']}: {cfg.n_devices} devices × {cfg.n_days} days, seed {cfg.seed}")
    print(summary)


def _write(out: Path, cfg, result, tables: dict, summary: str) -> None:
    import pandas as pd

    from ldpsim.evaluation.report.deployment_plots import write_plots
    from ldpsim.runtime.durable import write_file, write_text
    if not tables["daily"].empty:
        write_file(out / "daily_estimates.parquet", tables["daily"].to_parquet)
    for name, key in (("pooled_estimates", "pooled"), ("top", "top"), ("daily_estimates", "daily"),
                      ("daily_reports", "budget"), ("readings", "readings"), ("readings_pooled", "pooled_readings")):
        write_file(out / f"{name}.csv", lambda p, key=key: tables[key].to_csv(p, index=False, encoding="utf-8"))
    if not tables["words"].empty:
        write_file(out / "words.csv", lambda p: tables["words"].to_csv(p, index=False, encoding="utf-8"))
    for name, rows in result.records.items():
        write_file(out / f"{name}.csv", lambda p, rows=rows: pd.DataFrame(rows).to_csv(p, index=False))
    write_text(out / "summary.json", json.dumps(tables["summary"], indent=1, default=str, ensure_ascii=False))
    write_text(out / "summary.txt", summary + "\n")
    plots = write_plots(out / "plots", tables, cfg) + sorted((out / "plots").glob("central_*.png"))
    report = ["# Deployment run", "", "```text", summary, "```", ""]
    report += [f"![{p.stem}](plots/{p.name})" for p in plots]
    write_text(out / "report.md", "\n".join(report) + "\n")


# ---- the printed summary: a list of sections ---------------------------------------------------------------
def _width(text: str) -> int:
    """Terminal columns of ``text``: an emoji sequence (a character with U+FE0F, joined by U+200D or
    with a skin tone) takes 2; other characters 2 when East Asian wide, 0 when combining, else 1."""
    import unicodedata

    width, last, joined = 0, 0, False
    for c in text:
        if c == "\ufe0f":               # emoji presentation: the cluster is 2 wide
            width += 2 - last
            last = 2
        elif c == "\u200d":
            joined = True
        elif joined or 0x1F3FB <= ord(c) <= 0x1F3FF or unicodedata.combining(c):
            joined = False              # part of the previous cluster
        else:
            last = 2 if unicodedata.east_asian_width(c) in "WF" else 1
            width += last
    return width


def _pad(text: str, width: int) -> str:
    return text + " " * max(width - _width(text), 0)


#: the printed summary's line width (longer values wrap, indented under the value column)
WIDTH = 110


def _line(key: str, value: str) -> str:
    return textwrap.fill(value, WIDTH, initial_indent=f"{key:<16}", subsequent_indent=" " * 16)


def _para(text: str, indent: int = 2) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=" " * indent, subsequent_indent=" " * (indent + 2))


def _from(value) -> str:
    return "never" if value is None else f"from day {value}"


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def _uc_label(uc) -> str:
    from ldpsim.evaluation.deployment.estimates import mechanism_label
    return mechanism_label(uc)


def headline(tables: dict, cfg) -> list[str]:
    """The pooled top-k: truth vs estimate with the theory's interval, and the daily errors vs theory."""
    top, s = tables["top"], tables["summary"]
    if top.empty:
        return []
    uc = cfg.use_case("event")
    n_days = s["days_with_reports"]
    days = _days(cfg.n_days) + (f", {n_days} with reports" if n_days < cfg.n_days else "")
    lines = [*textwrap.wrap(f"Emoji, pooled over the {days} ({s['pooled_reports']:,} reports; {_uc_label(uc)}): "
                            "true share vs estimate ± the theory's 95% interval", WIDTH),
             f"{'rank':>4} {_pad('emoji', 6)}{'true':>8}{'estimate':>10}{'± 95%':>8}  {'in?':<4}{'est. rank':>9}"
             f"{'ΔE':>7}{'daily MSE÷theory':>18}"]
    for _, r in top.iterrows():
        lines.append(f"{r['true_rank']:>4} {_pad(str(r['token']), 6)}{r['true_donated']:>8.4f}{r['estimate']:>10.4f}"
                     f"{r['half_width']:>8.4f}  {'yes' if r['covered'] else 'NO':<4}{r['est_rank']:>9}"
                     f"{r['delta_e']:>7.3f}{r['mse_ratio']:>18.2f}")
    k = len(top)
    note = (f"{int(top['covered'].sum())} of {k} intervals hold the true share (each with 95% probability: "
            f"expect {0.95 * k:.1f}). ΔE = |estimate − truth| / truth. Daily MSE÷theory = mean over the days of "
            f"(that day's error)² / (the theory's MSE for that day's reports), so each day counts by its precision; "
            f"it should lie in [{s['mse_ratio_low']:.2f}, {s['mse_ratio_high']:.2f}] (95%: χ² with {n_days} degrees "
            f"of freedom, divided by {n_days}).")
    return lines + textwrap.wrap(note, WIDTH)


def budget(tables: dict, cfg) -> list[str]:
    """Budget exhaustion milestones per use case, and whether the daily budget binds."""
    from ldpsim.evaluation.deployment.budget import milestones
    b = tables["budget"]
    if b.empty:
        return []
    n = b.attrs.get("donating_devices", 0)
    lines = [f"Privacy budget: ε {cfg.budget_total:g} per device in total, {cfg.budget_daily:g} per day; "
             f"{n:,} devices donated (days count from 0)."]
    for uc in cfg.use_cases:
        share = b[f"exhausted_{uc.name}"]
        m = milestones(share)
        reached = [f"{100 * lv:.0f}% of donating devices by day {d}" if i == 0 else f"{100 * lv:.0f}% by day {d}"
                   for i, (lv, d) in enumerate((lv, d) for lv, d in m.items() if d is not None)]
        what = (", ".join(reached) + f"; {100 * share.iloc[-1]:.0f}% on the last day") if reached else \
            f"below 10% on every day ({100 * share.iloc[-1]:.0f}% on the last day)"
        name = uc.name.replace("_", " ")
        lines.append(_para(f"{name} (ε {uc.ledger_cost:g} charged a donation): total budget exhausted for {what}"))
    full = b["daily_full"]
    lines.append(_para("daily budget: never full" if full.max() == 0 else
                       f"daily budget: full for up to {100 * full.max():.0f}% of donating devices "
                       f"(day {int(full.idxmax())})"))
    return lines


def per_day(tables: dict, cfg) -> list[str]:
    """Reports per day per use case (every day up to 21 days; selected days beyond)."""
    from ldpsim.evaluation.deployment.budget import milestones
    b = tables["budget"]
    if b.empty:
        return []
    ucs = cfg.use_cases
    days = list(b["day"])
    note = ""
    if len(days) > 21:
        keep = {0, 1, 2, days[-1]} | {d for d in days if d % 5 == 0}
        for uc in ucs:
            keep |= {d + j for d in milestones(b[f"exhausted_{uc.name}"]).values() if d is not None for j in (-1, 0)}
        days = sorted(d for d in keep if 0 <= d <= days[-1])
        note = "; selected days"
    event = cfg.use_case("event")
    var = tables["summary"].get("top10_per_report_variance")
    cols = "".join(f"{u.name.replace('_', ' '):>16}" for u in ucs)
    lines = [f"Reports per day (all days in daily_reports.csv{note})", f"{'day':>5}{cols}"
             + (f"{'budget gone (' + event.name + ')':>24}" if event is not None else "")
             + (f"{'± 95% of the 10th share':>25}" if var is not None else "")]
    for d in days:
        row = b.loc[b["day"] == d].iloc[0]
        n = int(row[f"reports_{event.name}"]) if event is not None else 0
        lines.append(f"{d:>5}" + "".join(f"{int(row[f'reports_{u.name}']):>16,}" for u in ucs)
                     + (f"{100 * row[f'exhausted_{event.name}']:>23.0f}%" if event is not None else "")
                     + ((f"{1.96 * (var / n) ** 0.5:>25.4f}" if n else f"{'no reports':>25}") if var is not None
                        else ""))
    if var is not None:
        lines += textwrap.wrap(f"(± 95% of the 10th share: the theory's half-width 1.96·sqrt(σ²/n) of the 10th share's "
                               f"estimate from that day's n emoji reports; σ² = {var:.3g} per report)", WIDTH)
    return lines


def distinguishability(tables: dict, cfg, k: int = 10) -> list[str]:
    """The warning: days whose estimates rest on fewer reports than the top-k needs."""
    from ldpsim.evaluation.deployment.budget import day_ranges
    s, b, uc = tables["summary"], tables["budget"], cfg.use_case("event")
    n_star = s.get(f"top{k}_n_star")
    if n_star is None or uc is None:
        return []
    kth, nxt = cfg.items[s[f"top{k}_kth_item"]], cfg.items[s[f"top{k}_next_item"]]
    how = (f"top-{k} needs n* = {n_star:,.0f} reports per estimate: the n at which the theory's sd of the difference "
           f"of the {k}th and {k + 1}th shares ({kth} {s[f'top{k}_kth_share']:.4f}, "
           f"{nxt} {s[f'top{k}_next_share']:.4f}) "
           f"equals their gap" if n_star < float("inf") else
           f"top-{k}: the {k}th and {k + 1}th shares tie ({kth}, {nxt}): no number of reports orders them")
    reports = b[f"reports_{uc.name}"]
    below = b.loc[reports < n_star, "day"].tolist()
    pooled_ok = s["pooled_reports"] >= n_star
    lines = [_line("top-k check", how + "."),
             _line("", f"pooled estimate: {s['pooled_reports']:,} reports, "
                       + ("enough." if pooled_ok else "NOT enough: even the pooled top-{k} order is uncertain."))]
    if below:
        share = "all" if len(below) == len(reports) else f"{len(below)} of"
        lines.append(_line("WARNING", f"the daily {uc.name} estimates of {share} {_days(len(reports))} rest on fewer "
                                      f"than n* reports (days {day_ranges(below)}; the most on one day: "
                                      f"{int(reports.max()):,}): their daily top-{k} is not reliable"
                                      + ("; read the pooled one." if pooled_ok else ".")))
    return lines


def trend(tables: dict, cfg) -> list[str]:
    s = tables["summary"]
    if "trend_token" not in s:
        return []
    return [_line("trend", f"{s['trend_token']} trends from day {s['trend_start_day']}: in the estimated daily top-10 "
                           f"{_from(s.get('first_day_top10_estimate'))}, in the running (pooled so far) top-10 "
                           f"{_from(s.get('first_day_top10_running_estimate'))}; in the true daily top-10 "
                           f"{_from(s.get('first_day_top10_true_donated'))}")]


def new_word(tables: dict, cfg) -> list[str]:
    """The words use case: when the nightly discovery job found the slang word, and its share."""
    s = tables["summary"]
    if "slang_word" not in s:
        return []
    head = (f"{s['slang_word']} typed from day {s['slang_start_day']} ({100 * s['slang_share_typed']:g}% of words); "
            f"{s['words_mechanism']} at ε = {s['words_epsilon_report']:g} a report, {s['words_report_bytes']} B per report: ")
    if s["slang_first_day_found"] is None:
        return [_line("new word", head + f"not found by the last day (F1 of the top list {s['words_f1_last_day']:.2f})")]
    return [_line("new word", head + f"found on day {s['slang_first_day_found']} with estimated share "
                                     f"{100 * s['slang_estimated_share']:.2f}% (true {100 * s['slang_true_share']:.2f}% "
                                     f"of donated words so far); F1 of the top list on the last day "
                                     f"{s['words_f1_last_day']:.2f}")]


def readings(tables: dict, cfg) -> list[str]:
    from ldpsim.evaluation.deployment.estimates import READING_UNITS
    p, lines = tables["pooled_readings"], []
    for _, r in p.iterrows():
        uc = next(u for u in cfg.readings() if u.name == r["use_case"])
        unit = READING_UNITS.get(uc.name, "raw units")
        interval = f"± {1.96 * r['sd']:.2f} (95%, {r['sd_method']})"
        lines.append(_line(uc.name.replace("_", " "),
                           f"pooled ({int(r['reports']):,} reports; {_uc_label(uc)}): {r['estimate']:.2f} {unit} "
                           f"{interval}; true {r['true_donated']:.2f} (donated, clipped to range), "
                           f"{r['true_event']:.2f} (all sessions)"))
    return lines


def operations(tables: dict, cfg) -> list[str]:
    s = tables["summary"]
    return [
        _line("device-days/s", f"{s['device_days_per_s']:,.0f} ({s['devices']:,} devices × {_days(s['days'])} in "
                               f"{s['seconds']:.1f} s, {s['workers']} worker{'s' if s['workers'] != 1 else ''})"),
        _line("uploads", f"{100 * s['upload_success']:.2f}% of bundles acknowledged; {s['bundles_expired']:,} expired, "
                         f"{s['bundles_gave_up']:,} given up, {s['bundles_pending']:,} pending; "
                         f"{100 * s['attempt_loss']:.1f}% of attempts lost"),
        _line("server", f"{s['server_stored']:,} reports stored, {s['server_duplicates']:,} duplicates dropped, "
                        f"{s['server_lost_in_crash']:,} uploads lost in a crash (retried), "
                        f"queue mean {s['queue_mean']:.2f} max {s['queue_max']} batches"),
        _line("bandwidth", f"{s['bytes_per_uploading_device_day']:.0f} B per uploading device-day, "
                           f"{s['bytes_per_device_per_day']:.1f} B per device-day"),
        _line("ε spent", f"mean {s['epsilon_total_mean']:.2f}, max {s['epsilon_total_max']:.2f} per device "
                         f"(budget {s['budget_total']:g}); max {s['epsilon_daily_max']:.2f} per day "
                         f"(budget {s['budget_daily']:g}); {s['donations_refused']:,} donations refused"
                         + (f"; memoization saved mean {s['epsilon_saved_mean']:.2f}, max {s['epsilon_saved_max']:.2f}"
                            if s.get("epsilon_saved_mean", 0) > 0 else "")),
    ]


def central(tables: dict, cfg) -> list[str]:
    """The central ε the server's shuffle buys, beside the local ε spent (:mod:`ldpsim.evaluation.privacy.shuffle_ledger`)."""
    from ldpsim.evaluation.privacy.shuffle_ledger import format_central
    parts = format_central(tables["summary"])
    return [_line("central ε" if i == 0 else "", part) for i, part in enumerate(parts)]


def adversary(tables: dict, cfg) -> list[str]:
    s = tables["summary"]
    if "adversary_linked" not in s or s["adversary_linked"] != s["adversary_linked"]:
        return []
    return [_line("adversary", f"favourite emoji of {s['adversary_devices']:,} tapped devices guessed by the Bayes "
                               f"observer: {s['adversary_linked']:.3f} with reports linked by device id; "
                               f"{s['adversary_stripped']:.3f} stripped+shuffled = prior only (without ids a report "
                               f"says nothing about one device)")]


#: the sections of the printed summary, in order; each ``(tables, cfg) -> list of lines``
SECTIONS = [headline, distinguishability, budget, per_day, trend, new_word, readings, operations, central,
            adversary]


def format_summary(tables: dict, cfg) -> str:
    """The printed summary: the non-empty :data:`SECTIONS`, separated by blank lines."""
    return "\n\n".join("\n".join(lines) for section in SECTIONS if (lines := section(tables, cfg)))
