"""The summary of a deployment run: one list of blocks, rendered as console text and as HTML tables.

Each section of :data:`SECTIONS` is a function ``(tables, cfg) -> list of Block`` reading the tables of
:func:`ldpsim.evaluation.deployment.estimates.measure` (an empty list leaves it out); a new measurement
adds its function to the list. A :class:`Block` holds a heading, a sentence introducing it, a table of
display strings with human headers, key–value lines and notes — the facts once, so that the printed
summary (:func:`format_summary`) and the report page (:func:`html_sections`) say the same.

An event the scenario plans outside the simulated days (a trend from day 7 in a 3-day run, a slang word,
a server crash) is stated as outside the run, never as "not found".
"""

from __future__ import annotations

import math
import textwrap
import unicodedata
from dataclasses import dataclass

import pandas as pd

from ldpsim.evaluation.deployment.estimates import READING_UNITS, mechanism_label
from ldpsim.evaluation.confidence import Z95
from ldpsim.evaluation.report.numeric_use_plots import numeric_title
from ldpsim.evaluation.privacy.accountant import device_spend
from ldpsim.evaluation.privacy.person_level import SAME_PATTERN, use_case_person_level

#: the printed summary's line width (longer values wrap, indented under the value column)
WIDTH = 110


@dataclass(frozen=True)
class Block:
    """One part of the summary.

    Attributes
    ----------
    heading : str
        Short heading (the report page's sub-heading).
    title : str
        A sentence printed above the table ("" for none).
    table : pandas.DataFrame, optional
        Display strings under human headers.
    left : tuple of str
        Columns of ``table`` aligned left in the console (the others align right).
    lines : tuple of (str, str)
        Key–value lines; a key "" continues the previous one.
    notes : tuple of str
        Paragraphs printed after the table and lines.
    """

    heading: str
    title: str = ""
    table: pd.DataFrame | None = None
    left: tuple = ()
    lines: tuple = ()
    notes: tuple = ()


# ---- console text ----------------------------------------------------------------------------------
def text_width(text: str) -> int:
    """Terminal columns of ``text``: an emoji sequence (a character with U+FE0F, joined by U+200D or
    with a skin tone) takes 2; other characters 2 when East Asian wide, 0 when combining, else 1."""
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


def pad(text: str, width: int, left: bool = True) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (on the right when ``left``)."""
    fill = " " * max(width - text_width(text), 0)
    return text + fill if left else fill + text


def _line(key: str, value: str) -> str:
    return textwrap.fill(value, WIDTH, initial_indent=f"{key:<16}", subsequent_indent=" " * 16)


def _columns(table: pd.DataFrame, left) -> list[str]:
    cols = [str(c) for c in table.columns]
    cells = [[str(v) for v in row] for row in table.itertuples(index=False)]
    widths = [max([text_width(c)] + [text_width(r[j]) for r in cells]) for j, c in enumerate(cols)]
    rows = [cols] + cells
    return ["  ".join(pad(r[j], widths[j], cols[j] in left) for j in range(len(cols))).rstrip() for r in rows]


def render_text(block: Block) -> list[str]:
    """The console lines of a block."""
    out = textwrap.wrap(block.title, WIDTH) if block.title else []
    if block.table is not None and not block.table.empty:
        out += _columns(block.table, block.left)
    out += [_line(k, v) for k, v in block.lines]
    for note in block.notes:
        out += textwrap.wrap(note, WIDTH)
    return out


# ---- words -------------------------------------------------------------------------------------------
def _from(value) -> str:
    return "never" if value is None else f"from day {value}"


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def _name(uc) -> str:
    return uc.name.replace("_", " ")


def _after_run(what: str, day: int, cfg) -> str:
    """An event planned on ``day``, outside the simulated days 0 … n_days − 1."""
    return f"{what} is planned from day {day}, after the run's last day (day {cfg.n_days - 1}): not in this run"


# ---- sections ----------------------------------------------------------------------------------------
def headline(tables: dict, cfg) -> list[Block]:
    """The pooled top-k: truth vs estimate with the theory's interval, and the daily errors vs theory."""
    top, s = tables["top"], tables["summary"]
    if top.empty:
        return []
    uc = cfg.use_case("event")
    n_days = s["days_with_reports"]
    days = _days(cfg.n_days) + (f", {n_days} with reports" if n_days < cfg.n_days else "")
    table = pd.DataFrame({
        "rank": top["true_rank"].astype(str), "emoji": top["token"].astype(str),
        "true share": top["true_donated"].map("{:.4f}".format), "estimate": top["estimate"].map("{:.4f}".format),
        "± 95%": top["half_width"].map("{:.4f}".format), "in?": top["covered"].map({True: "yes", False: "NO"}),
        "est. rank": top["est_rank"].astype(str), "ΔE": top["delta_e"].map("{:.3f}".format),
        "daily MSE÷theory": top["mse_ratio"].map("{:.2f}".format)})
    k = len(top)
    note = (f"{int(top['covered'].sum())} of {k} intervals hold the true share (each with 95% probability: "
            f"expect {0.95 * k:.1f}). ΔE = |estimate − truth| / truth. Daily MSE÷theory = mean over the days of "
            f"(that day's error)² / (the theory's MSE for that day's reports), so each day counts by its precision; "
            f"it should lie in [{s['mse_ratio_low']:.2f}, {s['mse_ratio_high']:.2f}] (95%: χ² with {n_days} degrees "
            f"of freedom, divided by {n_days}).")
    return [Block("Emoji over the whole run",
                  f"Emoji, pooled over the {days} ({s['pooled_reports']:,} reports; {mechanism_label(uc)}): "
                  "true share vs estimate ± the theory's 95% interval", table, ("emoji", "in?"), notes=(note,))]


def distinguishability(tables: dict, cfg, k: int = 10) -> list[Block]:
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
    lines = [("top-k check", how + "."),
             ("", f"pooled estimate: {s['pooled_reports']:,} reports, "
                  + ("enough." if pooled_ok else f"NOT enough: even the pooled top-{k} order is uncertain."))]
    if below:
        share = "all" if len(below) == len(reports) else f"{len(below)} of"
        lines.append(("WARNING", f"the daily {uc.name} estimates of {share} {_days(len(reports))} rest on fewer "
                                 f"than n* reports (days {day_ranges(below)}; the most on one day: "
                                 f"{int(reports.max()):,}): their daily top-{k} is not reliable"
                                 + ("; read the pooled one." if pooled_ok else ".")))
    return [Block(f"Can the top-{k} be told apart?", lines=tuple(lines))]


def budget(tables: dict, cfg) -> list[Block]:
    """Budget exhaustion milestones per use case, and whether the daily budget binds."""
    from ldpsim.evaluation.deployment.budget import milestones
    b = tables["budget"]
    if b.empty:
        return []
    n = b.attrs.get("donating_devices", 0)
    lines = []
    for uc in cfg.use_cases:
        per = "a night of rounds" if uc.interactive else "a donation"
        if math.isinf(cfg.budget_total):           # nothing to exhaust: the ledger only records the spend
            lines.append((_name(uc), f"ε {uc.ledger_cost:.3g} charged {per}; no total budget to exhaust"))
            continue
        share = b[f"exhausted_{uc.name}"]
        m = milestones(share)
        reached = [f"{100 * lv:.0f}% of donating devices by day {d}" if i == 0 else f"{100 * lv:.0f}% by day {d}"
                   for i, (lv, d) in enumerate((lv, d) for lv, d in m.items() if d is not None)]
        what = (", ".join(reached) + f"; {100 * share.iloc[-1]:.0f}% on the last day") if reached else \
            f"below 10% on every day ({100 * share.iloc[-1]:.0f}% on the last day)"
        lines.append((_name(uc), f"ε {uc.ledger_cost:.3g} charged {per}: total budget exhausted for {what}"))
    full = b["daily_full"]
    lines.append(("daily budget", "none: no cap on the ε a device spends in a day" if math.isinf(cfg.budget_daily)
                  else "never full" if full.max() == 0 else
                  f"full for up to {100 * full.max():.0f}% of donating devices (day {int(full.idxmax())})"))
    unbounded = "" if math.isfinite(cfg.budget_total) else \
        " (with no cap, what a device spends grows with its donations: see ε spent)"
    return [Block("Privacy budget", f"Privacy budget: {budget_caps(cfg)}{unbounded}; {n:,} devices donated "
                                    "(days count from 0).", lines=tuple(lines))]


def budget_caps(cfg) -> str:
    """The ledger's two caps in words ("ε 8 per device over the run, 4 per device per day"; an infinite one
    is "no cap", never "ε inf")."""
    total = (f"ε {cfg.budget_total:g} per device over the run" if math.isfinite(cfg.budget_total) else
             "no cap on ε per device over the run")
    daily = f"{cfg.budget_daily:g} per device per day" if math.isfinite(cfg.budget_daily) else "none per day"
    return f"{total}, {daily}"


def _cap(budget: float) -> str:
    """A ledger budget as the summary states it: its value, or "no cap" when it is infinite."""
    return f"budget {budget:g}" if math.isfinite(budget) else "no cap"


def per_day(tables: dict, cfg) -> list[Block]:
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
    rows = b.set_index("day").loc[days]
    table = pd.DataFrame({"day": [str(d) for d in days]})
    for u in ucs:
        table[_name(u)] = [f"{int(v):,}" for v in rows[f"reports_{u.name}"]]
    if event is not None and math.isfinite(cfg.budget_total):
        table[f"budget gone ({event.name})"] = [f"{100 * v:.0f}%" for v in rows[f"exhausted_{event.name}"]]
    notes = ()
    if var is not None:
        n = rows[f"reports_{event.name}"]
        table["± 95% of the 10th share"] = [f"{Z95 * (var / v) ** 0.5:.4f}" if v else "no reports" for v in n]
        notes = (f"(± 95% of the 10th share: the theory's half-width 1.96·sqrt(σ²/n) of the 10th share's "
                 f"estimate from that day's n emoji reports; σ² = {var:.3g} per report)",)
    return [Block("Reports per day", f"Reports per day (all days in daily_reports.csv{note})", table, notes=notes)]


def trend(tables: dict, cfg) -> list[Block]:
    s = tables["summary"]
    if "trend_token" not in s:
        return []
    if s["trend_start_day"] >= cfg.n_days:
        return [Block("Trend", lines=(("trend", _after_run(f"{s['trend_token']}'s trend", s["trend_start_day"],
                                                           cfg)),))]
    lines = (("trend", f"{s['trend_token']} trends from day {s['trend_start_day']}: in the "
                       f"estimated daily top-10 {_from(s.get('first_day_top10_estimate'))}, "
                       "in the running (pooled so far) top-10 "
                       f"{_from(s.get('first_day_top10_running_estimate'))}; in the true daily "
                       f"top-10 {_from(s.get('first_day_top10_true_donated'))}"),)
    return [Block("Trend", lines=lines + trend_metric_lines(s, cfg))]


def _num(value, unit: str = "", fmt: str = ".3g") -> str:
    return "—" if value is None or value != value else f"{value:{fmt}}{unit}"


def trend_metric_lines(s: dict, cfg) -> tuple:
    """The rising-item detector's measurements of the run beside their theory (trend_metrics.csv)."""
    if "trend_limit" in s:
        return (("detector", f"not measured: {s['trend_limit']}"),)
    if "trend_delay_days" not in s:
        return ()
    last = cfg.n_days - 1
    delay = (f"{s['trend_delay_days']:g} days after the start" if s["trend_delay_days"] is not None else
             f"no alarm by the run's last day (day {last}, {last - s['trend_start_day']} days after the start)")
    return (("detector", f"{s['trend_window']}-day window sum of the released daily count above a threshold that an "
                         f"item nobody uses crosses {s['trend_rate']:g} times a month; over this run's {cfg.n_days} "
                         f"days a detection list expects {s['trend_expected_false_alarms_run']:.3g} false alarms"),
            ("", f"ε = {s['trend_epsilon_person']:.3g} per person over the run, the event use case's (local)"),
            ("  delay", f"{delay} (theory: {_num(s['trend_delay_theory_days'], ' days', 'g')})"),
            ("  false alarms", f"{_num(s['trend_false_alarms_month'])} a month on the {s['trend_start_day']} days "
                               f"before the start (theory at the item's own share: "
                               f"{_num(s['trend_false_alarms_month_theory'])})"),
            ("  tracking", f"RMSE of the daily count {_num(s['trend_tracking_error'])} reports (theory "
                           f"{_num(s['trend_tracking_error_theory'])})"),
            ("  growth", "smallest detectable: — (no day of the run after the start)" if s["trend_smallest_growth"] is None
                         else f"smallest detectable: {_num(s['trend_smallest_growth'])} reports a day per day, alarmed "
                              f"with probability ½ by day {last}"))


def new_word(tables: dict, cfg) -> list[Block]:
    """The words use case: when the nightly discovery job found the slang word, and its share."""
    s = tables["summary"]
    if "slang_word" not in s:
        return []
    if "words_privacy" in s:  # an interactive protocol: rounds each night, the run's guarantee per device
        delta = f", δ = {s['words_delta_device']:.2g}" if s["words_delta_device"] else ""
        how = (f"{s['words_mechanism']}, {s['words_rounds_per_day']} rounds a night, ε = {s['words_epsilon_device']:g}"
               f"{delta} per device over the run ({s['words_privacy']})")
        truth = "of the devices answering that night"
    else:
        how = (f"{s['words_mechanism']} at ε = {s['words_epsilon_report']:g} per report, {s['words_report_bytes']} B "
               "per report")
        truth = "of donated words so far"
    f1 = f"F1 of the top list on the last day {s['words_f1_last_day']:.2f}"
    estimate = ("no share estimate (the protocol publishes only the words)" if s["slang_estimated_share"] != s["slang_estimated_share"]
                else f"estimated share {100 * s['slang_estimated_share']:.2f}%")
    if s["slang_start_day"] >= cfg.n_days:
        text = f"{_after_run(s['slang_word'], s['slang_start_day'], cfg)}; {how}; {f1}"
    elif s["slang_first_day_found"] is None:
        text = (f"{s['slang_word']} typed from day {s['slang_start_day']} ({100 * s['slang_share_typed']:g}% of "
                f"words); {how}: not found by the last day ({f1})")
    else:
        text = (f"{s['slang_word']} typed from day {s['slang_start_day']} ({100 * s['slang_share_typed']:g}% of "
                f"words); {how}: found on day {s['slang_first_day_found']} with {estimate} (true "
                f"{100 * s['slang_true_share']:.2f}% {truth}); {f1}")
    return [Block("New word", lines=(("new word", text),))]


def readings(tables: dict, cfg) -> list[Block]:
    p, lines = tables["pooled_readings"], []
    for _, r in p.iterrows():
        uc = next(u for u in cfg.readings() if u.name == r["use_case"])
        unit = READING_UNITS.get(uc.name, "raw units")
        interval = f"± {Z95 * r['sd']:.2f} (95%, {r['sd_method']})"
        lines.append((_name(uc), f"pooled ({int(r['reports']):,} reports; {mechanism_label(uc)}): "
                                 f"{r['estimate']:.2f} {unit} {interval}; true {r['true_donated']:.2f} (donated, "
                                 f"clipped to range), {r['true_event']:.2f} (all sessions)"))
    return [Block("Readings", lines=tuple(lines))] if lines else []


def numeric(tables: dict, cfg) -> list[Block]:
    """One line per key of a heat-map use case and per reading use case of ``[numeric.<name>]``: its headline
    error over the run and what its ε means (:mod:`ldpsim.evaluation.deployment.numeric_runs`)."""
    m = tables.get("numeric_metrics", pd.DataFrame())
    if m.empty:
        return []
    lines = []
    for (name, key), rows in m.groupby(["use_case", "key"], sort=False, dropna=False):
        value = rows.set_index("metric")["value"]
        r = rows.iloc[0]
        error = (f"√Σ(p̂ − p)² = {value['heatmap_l2']:.3g} of the cells' shares" if r["family"] == "heatmap" else
                 f"Wasserstein-1 {value['wasserstein']:.3g} {r['unit']}, quantiles {value['quantile_error']:.3g} "
                 f"{r['unit']} off")
        lines.append((name if not lines or lines[-1][0] != name else "",
                      f"{numeric_title(r, key if isinstance(key, str) else '').split(': ', 1)[1]}: {error} "
                      f"({int(r['reports']):,} reports)"))
    return [Block("Numeric use cases", lines=tuple(lines), notes=(
        "numeric_metrics.csv holds every error; numeric_cells.csv the true and estimated counts.",))]


def _crash(s: dict, cfg) -> str:
    """What became of the scenario's planned server crash."""
    if cfg.crash_at_h is None:
        return "no crash planned"
    day, hour = divmod(cfg.crash_at_h, 24)
    when = f"day {int(day)} at {int(hour):02d}:{int(round(60 * (hour % 1))):02d}"
    if cfg.crash_at_h >= 24 * (cfg.n_days + cfg.drain_days):
        return (f"the crash planned on {when} is after the simulation's end (day {cfg.n_days + cfg.drain_days - 1} "
                f"with the {cfg.drain_days} drain days): no crash in this run")
    return f"crashed on {when}: {s['server_lost_in_crash']:,} uploads lost in the crash (retried)"


def operations(tables: dict, cfg) -> list[Block]:
    s = tables["summary"]
    return [Block("Operations", lines=(
        ("device-days/s", f"{s['device_days_per_s']:,.0f} ({s['devices']:,} devices × {_days(s['days'])} in "
                          f"{s['seconds']:.1f} s, {s['workers']} worker{'s' if s['workers'] != 1 else ''})"),
        ("uploads", f"{100 * s['upload_success']:.2f}% of bundles acknowledged; {s['bundles_expired']:,} expired, "
                    f"{s['bundles_gave_up']:,} given up, {s['bundles_pending']:,} pending; "
                    f"{100 * s['attempt_loss']:.1f}% of attempts lost"),
        ("server", f"{s['server_stored']:,} reports stored, {s['server_duplicates']:,} duplicates dropped; "
                   f"{_crash(s, cfg)}; queue mean {s['queue_mean']:.2f} max {s['queue_max']} batches"),
        ("bandwidth", f"{s['bytes_per_uploading_device_day']:.0f} B per uploading device-day, "
                      f"{s['bytes_per_device_per_day']:.1f} B per device-day"),
        ("ε spent", f"one device over the run: mean {s['epsilon_device_mean']:.2f}, max {s['epsilon_device_max']:.2f} "
                    f"({_cap(s['budget_total'])}); one device on one day: max {s['epsilon_daily_max']:.2f} "
                    f"({_cap(s['budget_daily'])}); {s['donations_refused']:,} donations refused"
                    + (f"; memoization saved mean {s['epsilon_saved_mean']:.2f}, max {s['epsilon_saved_max']:.2f}"
                       if s.get("epsilon_saved_mean", 0) > 0 else "")
                    + ("; the ledger's use cases only: the numeric use cases' spend is in the ε per report, item "
                       "and person table" if cfg.numeric else "")),
        *(("ε per person" if i == 0 else "", line) for i, line in enumerate(person_lines(cfg))),
    ))]


def central(tables: dict, cfg) -> list[Block]:
    """The central ε the server's shuffle buys, beside the local ε spent
    (:mod:`ldpsim.evaluation.privacy.shuffle_ledger`)."""
    from ldpsim.evaluation.privacy.shuffle_ledger import format_central
    parts = format_central(tables["summary"])
    return [Block("Central ε (shuffle)", lines=tuple(("central ε" if i == 0 else "", part)
                                                    for i, part in enumerate(parts)))]


def trust(tables: dict, cfg) -> list[Block]:
    """The collected use case's trust model: its guarantees per report, device-day and run (with δ and
    meaning), who must be trusted, what is left if they misbehave, and what the collectors did
    (:mod:`ldpsim.evaluation.deployment.trust_estimates`)."""
    g, s = tables.get("trust"), tables["summary"]
    if g is None or g.empty:
        return []
    table = pd.DataFrame({"scope": g["scope"], "ε": g["epsilon"].map("{:.4g}".format),
                          "δ": g["delta"].map("{:.0e}".format), "meaning": g["meaning"]})
    lines = [("trusted", f"{s['trusted']}: the central guarantee needs it"),
             ("noise", f"{s['trust_noise'] or 'none'}; {s['trust_bytes_per_report']:,} B uploaded per report "
                       "(shares and proofs: published protocol costs)"),
             ("reports", f"{s['trust_donations']:,} donated, {s['trust_counted']:,} counted, "
                         f"{s['trust_rejected']:,} rejected as invalid, {s['trust_lost']:,} never counted "
                         "(offline, dropped out or expired)")]
    if "trust_cohorts" in s:
        aborted = s["trust_cohorts"] - s["trust_cohorts_published"]
        lines.append(("cohorts", f"{s['trust_cohorts_published']:,} of {s['trust_cohorts']:,} published"
                                 + (f"; {aborted:,} fell below the quorum and their devices retried" if aborted else "")))
    if s.get("trust_collector_events"):
        lines.append(("collectors", f"{s['trust_collector_events']:,} rounds or jobs skipped or held while a "
                                    "collector was down (their reports wait for a later round, job or night)"))
    return [Block(f"Trust model ({s['aggregation']})", f"{s['aggregation']}: the device's guarantee from the "
                  "accountant (dp-accounting PLDs; one device's report replaced)", table, ("scope", "meaning"),
                  lines=tuple(lines))]


def adversary(tables: dict, cfg) -> list[Block]:
    s = tables["summary"]
    if "adversary_linked" not in s or s["adversary_linked"] != s["adversary_linked"]:
        return []
    return [Block("Adversary", lines=(("adversary", f"favourite emoji of {s['adversary_devices']:,} tapped devices "
                                                    "guessed by the Bayes observer: "
                                                    f"{s['adversary_linked']:.3f} with reports linked by device id; "
                                                    f"{s['adversary_stripped']:.3f} stripped+shuffled = prior only "
                                                    "(without ids a report says nothing about one device)"),))]


#: the sections of the summary, in order; each ``(tables, cfg) -> list of Block``
def scopes(tables: dict, cfg) -> list[Block]:
    """What one report, one item and one person over the run get, per use case (the accountant's
    ``epsilon_report``, ``epsilon_item``, ``epsilon_person``; docs/math.md §8.7)."""
    spend = device_spend(cfg).table
    if spend.empty:
        return []

    def eps(v):
        return "—" if v != v else ("∞" if math.isinf(v) else f"{v:.3g}")

    table = pd.DataFrame({"use case": [("all, " + r.kind) if r.use_case == "total" else r.use_case.replace("_", " ")
                                       for r in spend.itertuples()],
                          "epsilon_report": spend["epsilon_report"].map(eps),
                          "epsilon_item": spend["epsilon_item"].map(eps),
                          "epsilon_person": spend["epsilon_person"].map(eps)})
    return [Block("ε per report, item and person",
                  "ε (δ = 0) of one report, of one item of one device over the run, and of one person over the run "
                  "(the whole history replaced)", table, ("use case",),
                  notes=(("Memoized use cases: epsilon_item is one value's reports; epsilon_person holds between "
                          "any two histories (see ε per person).",) if spend["memoize"].any() else ())
                  + _delta_note(spend))]


def _delta_note(spend: pd.DataFrame) -> tuple[str, ...]:
    """The δ beside ε per person of the rows whose releases carry one (numeric secure-aggregation designs)."""
    rows = spend[spend["delta_device"] > 0]
    return (("With a δ (the releases' δ summed over the run): " + "; ".join(
        f"{'all, ' + r.kind if r.use_case == 'total' else r.use_case.replace('_', ' ')} δ = {r.delta_device:.3g}"
        for r in rows.itertuples()) + "."),) if len(rows) else ()


SECTIONS = [headline, distinguishability, trust, budget, scopes, per_day, trend, new_word, readings, numeric, operations,
            central, adversary]


def blocks(tables: dict, cfg) -> list[Block]:
    """Every block of the summary, in order."""
    return [block for section in SECTIONS for block in section(tables, cfg)]


def format_summary(tables: dict, cfg) -> str:
    """The printed summary: the blocks' console text, separated by blank lines."""
    return "\n\n".join("\n".join(render_text(b)) for b in blocks(tables, cfg))


def html_sections(tables: dict, cfg) -> list[tuple[str, list]]:
    """The summary as report-page sections ``(heading, items)``: sentences as paragraphs, tables as
    tables, key–value lines as a two-column table (:mod:`ldpsim.evaluation.report.html`)."""
    from ldpsim.evaluation.report.html import KeyValues
    out = []
    for b in blocks(tables, cfg):
        items = [b.title] if b.title else []
        if b.table is not None and not b.table.empty:
            items.append(b.table)
        if b.lines:
            items.append(KeyValues(b.lines))
        items += list(b.notes)
        out.append((b.heading, items))
    return out


def person_lines(cfg) -> list[str]:
    """One line per memoized use case of ``cfg`` — the scope of its printed ε per device and its
    person-level ε beside it — and the accountant's totals per kind with their person-level ε
    (:func:`~ldpsim.evaluation.privacy.accountant.device_spend`); empty when nothing is memoized."""
    out = []
    for uc in cfg.use_cases:
        pl = use_case_person_level(cfg, uc)
        if pl is not None:
            out.append(f"{uc.name}: memoized, ε per device {SAME_PATTERN}; {pl.text()}")
    if out:
        totals = device_spend(cfg).table.query("use_case == 'total'")
        for r in totals.itertuples():
            value = "∞" if math.isinf(r.epsilon_person) else f"≤ {r.epsilon_person:.3g}"
            out.append(f"all use cases ({r.kind}): per device over the run {r.epsilon_device:.3g} "
                       f"({SAME_PATTERN}), per person over the run {value}")
    return out
