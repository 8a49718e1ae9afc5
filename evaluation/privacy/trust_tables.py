"""The trust-model tables as a team reads them: a title, each column's unit, what NaN and inf mean, and a
flag on every row that is not at the privacy the table states (docs/math.md §9.6).

:func:`scenario_lines` prints :func:`~ldpsim.scenarios.studies.trust.trust_scenario.run_trust_scenario`'s table,
:func:`comparison_lines` :func:`~ldpsim.scenarios.studies.trust.trust_compare.compare_trust_models`'s; both
through :func:`~ldpsim.evaluation.console_table.console_lines` (the columns that fit the terminal;
the full table is the CSV file named on the last line).
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.evaluation.console_table import console_lines, fitted_columns
from ldpsim.evaluation.privacy.trust_levels import COLUMNS as LEVEL_COLUMNS

#: ε off its target by more than this share is flagged (calibration lands at or just below the target)
EPSILON_SLACK = 1e-3

_EPS = "(ε, δ) per device against the released output"
#: column → its unit and meaning, for both tables (one fact in one place)
COLUMNS = {
    "use_case": "the scenario's use case",
    "model": "the trust model",
    "aggregation": "the trust model",
    "design": "its estimator: the local oracle, or the noise it releases with",
    "epsilon_target": "ε per device over the run the row is calibrated to",
    "epsilon_device": f"ε per device over the whole run, {_EPS}",
    "epsilon_day": f"ε per device over one day, {_EPS}",
    "epsilon_report": f"ε of one report, {_EPS}",
    **{k: f"{v}, {_EPS}" for k, v in LEVEL_COLUMNS.items()},
    "delta": "δ of the guarantees (0: pure ε-LDP)",
    "parameter": "the calibrated knob: local ε, the noise's scale (in counts), or sampling rate p and threshold τ",
    "if_misbehaving": "ε per device over the run left if the trusted party misbehaves",
    "devices": "devices reporting that day (devices)",
    "counted": "reports counted in the day's estimate (reports)",
    "rejected": "reports refused by the aggregators' validity check (reports)",
    "rmse": "root mean squared error of the day's per-item counts against the counted reports' true counts "
            "(reports; ÷ counted for a frequency)",
    "mse_theory": "exact mean squared error of the day's per-item counts (reports²)",
    "mse_low": "low end of the theory's 95 % interval of mse_measured (reports²)",
    "mse_high": "high end of the theory's 95 % interval of mse_measured (reports²)",
    "mse_measured": "measured mean squared error of the day's per-item counts (reports²)",
    "top_k_precision": "share of the true top k among the estimated top k (0 to 1)",
    "reports_counted": "reports the day's estimate covers (expected; secure aggregation: those that arrive)",
    "rmse_frequency_theory": "exact RMSE of the day's frequencies (share of the counted reports, 0 to 1)",
    "min_frequency": "smallest frequency detected with 95 % power at a 5 % family-wise false-alarm rate "
                     "(share of the counted reports; above 1: no item can be)",
    "discovery": "the design that finds new words under this model",
    "days_to_discovery": "median days until the new word stays in the published top 20 (days)",
    "entries_lost": "share of the typed (night, device, word) entries the discovery design never sees: the "
                    "bound's drops (a voting trie: one vote a night)",
    "occurrences_lost": "share of the typed word occurrences the discovery design never counts",
    "bytes_per_device": "bytes a device sends (and receives, for secure aggregation) per report (bytes)",
    "trusted": "who must be trusted for the stated ε",
}
#: column → what NaN and inf in it mean
SPECIAL = {
    "mse_low": {"nan": "no interval: a threshold's errors are biased and not normal"},
    "mse_high": {"nan": "no interval: a threshold's errors are biased and not normal"},
    "min_frequency": {"inf": "no count is detected with 95 % power"},
    "days_to_discovery": {"nan": "not found within the run, or the fleet has no new word"},
    "if_misbehaving": {"inf": "no guarantee is left: the trusted party sees every report"},
    "epsilon_target": {"nan": "ε follows from the sampling rate and threshold given"},
    **{k: {"inf": "no finite guarantee at this δ (the model's accountant finds none)"}
       for k in ("epsilon_device", "epsilon_day", "epsilon_report", *LEVEL_COLUMNS)},
}


def _notes(table, shown) -> list[str]:
    """The units of the shown columns, then what their NaN and inf mean (where they hold one)."""
    lines = ["columns:"] + [f"  {c}: {COLUMNS[c]}" for c in shown if c in COLUMNS]
    for c in shown:
        values = table[c].to_numpy() if c in table else np.array([])
        if values.dtype.kind != "f":
            continue
        for key, found in (("nan", np.isnan(values)), ("inf", np.isinf(values))):
            if found.any() and key in SPECIAL.get(c, {}):
                lines.append(f"  {key} in {c}: {SPECIAL[c][key]}")
    return lines


def off_target(table) -> list[str]:
    """A line for each row whose ε per device over the run is not the target its table states."""
    name = "use_case" if "use_case" in table else "model"
    stated = table["epsilon_target"].dropna().unique()
    flags = []
    for row in table.itertuples():
        target = row.epsilon_target
        if not math.isnan(target) and row.epsilon_device <= target * (1 + EPSILON_SLACK):
            continue
        why = (f"above its target {target:g}" if not math.isnan(target) else
               "set by its sampling rate and threshold" + (f", not calibrated to the {stated[0]:g} of the other rows"
                                                           if stated.size == 1 else ""))
        flags.append(f"! {getattr(row, name)}: ε per device over the run is {row.epsilon_device:.3g}, {why}; "
                     "it does not have the privacy of the other rows")
    return flags


def _budget(table) -> str:
    stated = table["epsilon_target"].dropna().unique()
    return f"ε = {stated[0]:g}" if stated.size == 1 else "the ε of each row"


def scenario_lines(run, *, width: int | None = None, full: str | None = "trust.csv") -> list[str]:
    """A :class:`~ldpsim.scenarios.studies.trust.trust_scenario.TrustRun`'s table as ``ldpsim trust`` prints it."""
    s, t = run.settings, run.table
    cols = ["use_case", "aggregation", "epsilon_device", *LEVEL_COLUMNS, "epsilon_target", "epsilon_day", "rmse",
            "counted", "if_misbehaving", "bytes_per_device", "epsilon_report", "delta", "devices", "rejected"]
    title = (f"Trust models, one simulated day each: {s['devices']:,} devices, calibrated to {_budget(t)} per device "
             f"over {s['days']} days (δ = {s['delta']:g})")
    notes = off_target(t) + _notes(t, fitted_columns(t, cols, width=width))
    return console_lines(t, cols, title=title, width=width, full=full, notes=notes)


def comparison_lines(comparison, *, width: int | None = None, full: str | None = "comparison.csv") -> list[str]:
    """A :class:`~ldpsim.scenarios.studies.trust.trust_compare.TrustComparison`'s table as ``ldpsim trust --compare``
    and ``ldpsim compare --trust`` print it."""
    p, t = comparison.params, comparison.table
    cols = ["model", "epsilon_device", *LEVEL_COLUMNS, "rmse_frequency_theory", "min_frequency", "epsilon_target",
            "top_k_precision", "days_to_discovery", "entries_lost", "occurrences_lost", "if_misbehaving", "bytes_per_device", "reports_counted",
            "mse_theory", "mse_measured", "mse_low", "mse_high", "epsilon_day", "discovery", "trusted"]
    title = (f"Trust models at equal ε per device over {p['days']} days (δ ≤ {p['delta']:g}), one day of "
             f"{p['fleet']}: {p['devices']:,} devices, D = {p['domain_size']:,} items, {p['repeats']} draws a row")
    notes = off_target(t) + _discovery_note(p, t) + _notes(t, fitted_columns(t, cols, width=width))
    return console_lines(t, cols, title=title, width=width, full=full, notes=notes)


def _discovery_note(params: dict, table) -> list[str]:
    """The typed words and the bound every discovery row runs under, where a row ran one."""
    if "days_to_discovery" not in table or table["days_to_discovery"].isna().all() or "bound" not in params:
        return []
    b = params["bound"]
    return [f"discovery: each online device types {params['typed']} words a night and keeps ≤ {b.l0} distinct "
            f"({b.sampler}), ≤ {b.linf} each, before every design; days_to_discovery is at ε per person over the run "
            f"under that bound"]
