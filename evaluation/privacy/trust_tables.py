"""The trust-model tables as a team reads them: a title, each column's unit, what NaN and inf mean, and a
flag on every row that is not at the privacy the table states (docs/math.md §9.6).

:func:`scenario_lines` prints :func:`~ldpsim.scenarios.studies.trust.trust_scenario.run_trust_scenario`'s table,
:func:`comparison_lines` :func:`~ldpsim.scenarios.studies.trust.trust_compare.compare_trust_models`'s two: the
frequencies at equal ε per device, then (:func:`discovery_lines`) each model's new-word design at equal ε per
person over the run, its ``epsilon_person`` beside its ``epsilon_item`` and δ. All go through
:func:`~ldpsim.evaluation.console_table.console_lines` (the columns that fit the terminal; the full table is
the CSV file named on the last line).
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
    "bytes_per_device": "bytes a device sends (and receives, for secure aggregation) per report (bytes)",
    "trusted": "who must be trusted for the stated ε",
}
#: the discovery table's column → its unit and meaning (ε per person, not per device: every word a person types);
#: ``ldpsim discover --trust`` prints the same columns with the same meanings
DISCOVERY_COLUMNS = {
    "model": "the trust model",
    "discovery": "the design that finds new words under this model",
    "epsilon_person": "ε of one person over the run, every word typed: the (night, word) cells the bounds let a "
                      "person touch (days·L0 under a nightly bound), by the design's own accountant, (ε, δ) "
                      "against the published lists",
    "epsilon_item": "ε of one word of one person over the run (the nights it can be contributed), same accountant",
    "delta": "δ of epsilon_person and epsilon_item (0: pure ε-LDP)",
    "days_to_discovery": "median days from the new word's first day until it stays in the published top 20 (days)",
    "found_share": "share of seeds whose published top 20 keeps the new word (0 to 1)",
    "slang_error": "mean |estimated − true share| of the new word on the nights it is listed (shares of the "
                   "words typed, 0 to 1)",
    "entries_lost": "share of the typed (night, device, word) entries the discovery design never sees: the "
                    "bound's drops (a voting trie: one vote a night)",
    "occurrences_lost": "share of the typed word occurrences the discovery design never counts",
    "epsilon_target": "ε per person over the run the design is calibrated to",
}
_NO_WORDS = "the fleet has no typed words: no design ran"
#: the discovery table's column → what NaN and inf in it mean
DISCOVERY_SPECIAL = {
    "days_to_discovery": {"nan": "not found within the run (found_share 0), or " + _NO_WORDS},
    "slang_error": {"nan": "never listed with an estimate, or " + _NO_WORDS},
    **{k: {"nan": _NO_WORDS} for k in ("found_share", "entries_lost", "occurrences_lost", "delta")},
    **{k: {"inf": "no finite guarantee at this δ (the design's accountant finds none)", "nan": _NO_WORDS}
       for k in LEVEL_COLUMNS},
}
#: column → what NaN and inf in it mean
SPECIAL = {
    "mse_low": {"nan": "no interval: a threshold's errors are biased and not normal"},
    "mse_high": {"nan": "no interval: a threshold's errors are biased and not normal"},
    "min_frequency": {"inf": "no count is detected with 95 % power"},
    "if_misbehaving": {"inf": "no guarantee is left: the trusted party sees every report"},
    "epsilon_target": {"nan": "ε follows from the sampling rate and threshold given"},
    **{k: {"inf": "no finite guarantee at this δ (the model's accountant finds none)"}
       for k in ("epsilon_device", "epsilon_day", "epsilon_report", *LEVEL_COLUMNS)},
}


def _notes(table, shown, meanings=COLUMNS, special=SPECIAL) -> list[str]:
    """The units of the shown columns, then what their NaN and inf mean (where they hold one)."""
    lines = ["columns:"] + [f"  {c}: {meanings[c]}" for c in shown if c in meanings]
    for c in shown:
        values = table[c].to_numpy() if c in table else np.array([])
        if values.dtype.kind != "f":
            continue
        for key, found in (("nan", np.isnan(values)), ("inf", np.isinf(values))):
            if found.any() and key in special.get(c, {}):
                lines.append(f"  {key} in {c}: {special[c][key]}")
    return lines


def off_target(table, column: str = "epsilon_device", scope: str = "ε per device over the run") -> list[str]:
    """A line for each row whose ``column`` (its ``scope``) is not the target its table states; a row
    that could not be measured (NaN in both) is explained by the notes instead."""
    name = "use_case" if "use_case" in table else "model"
    stated = table["epsilon_target"].dropna().unique()
    flags = []
    for row in table.itertuples():
        target, got = row.epsilon_target, getattr(row, column)
        if math.isnan(got) or (not math.isnan(target) and got <= target * (1 + EPSILON_SLACK)):
            continue
        why = (f"above its target {target:g}" if not math.isnan(target) else
               "set by its sampling rate and threshold" + (f", not calibrated to the {stated[0]:g} of the other rows"
                                                           if stated.size == 1 else ""))
        flags.append(f"! {getattr(row, name)}: {scope} is {got:.3g}, {why}; "
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
    title = (f"Trust models, one simulated day each: {s['devices']:,} devices, {_budget(t)} per device over "
             f"{s['days']} days (δ = {s['delta']:g})")
    notes = off_target(t) + _notes(t, fitted_columns(t, cols, width=width))
    return console_lines(t, cols, title=title, width=width, full=full, notes=notes)


def comparison_lines(comparison, *, width: int | None = None, full: str | None = "comparison.csv",
                     discovery_full: str | None = "discovery.csv") -> list[str]:
    """A :class:`~ldpsim.scenarios.studies.trust.trust_compare.TrustComparison` as ``ldpsim trust --compare``
    and ``ldpsim compare --trust`` print it: the frequency table, then, where the comparison ran its
    discovery designs, :func:`discovery_lines` (``full`` and ``discovery_full``: the two tables' CSV files)."""
    p, t = comparison.params, comparison.table
    cols = ["model", "epsilon_device", *LEVEL_COLUMNS, "rmse_frequency_theory", "min_frequency", "epsilon_target",
            "top_k_precision", "if_misbehaving", "bytes_per_device", "reports_counted",
            "mse_theory", "mse_measured", "mse_low", "mse_high", "epsilon_day", "trusted"]
    title = (f"Trust models at equal ε per device over {p['days']} days (δ ≤ {p['delta']:g}), {p['fleet']}: "
             f"{p['devices']:,} devices, {p['domain_size']:,} items")
    notes = off_target(t) + [f"{p['repeats']} draws of the day a row (mse_measured, top_k_precision)"] + \
        _notes(t, fitted_columns(t, cols, width=width))
    lines = console_lines(t, cols, title=title, width=width, full=full, notes=notes)
    found = getattr(comparison, "discovery", None)
    return lines if found is None else lines + [""] + discovery_lines(found, p, width=width, full=discovery_full)


def discovery_lines(table, params: dict, *, width: int | None = None, full: str | None = "discovery.csv") -> list[str]:
    """The comparison's discovery table (``TrustComparison.discovery``): each model's new-word design at the
    target ε per person over the run, its ``epsilon_person`` (the bounded cells' accountant, docs/math.md
    §8.8) beside ``epsilon_item`` and δ; a row above its target is flagged; the bound every design runs
    under is stated."""
    b = params["bound"]
    cols = ["model", "discovery", "epsilon_person", "epsilon_item", "delta", "days_to_discovery", "found_share",
            "slang_error", "entries_lost", "occurrences_lost", "epsilon_target"]
    one = table["epsilon_target"].nunique() <= 1
    if not one:                                     # several targets: each row's beside its model
        cols = ["model", "epsilon_target", *cols[2:6], "discovery", *cols[6:10]]
    title = (f"New words at {_budget(table) if one else 'each row’s epsilon_target'} per person over "
             f"{params['days']} days (δ ≤ {params['delta']:g}), {params['fleet']}")
    ran = bool(table["found_share"].notna().any())      # a fleet without words ran no design: its NaN say so
    notes = off_target(table, "epsilon_person", "ε per person over the run") + ([
        f"each online device types {params['typed']} words a night and keeps ≤ {b.l0} distinct ({b.sampler}), "
        f"≤ {b.linf} each, before every design; seed {params['discovery_seed']}",
        "this ε is the word collection's alone: a person also in a frequency collection spends both"] if ran else [])
    shown = fitted_columns(table, cols, width=width)
    notes += _notes(table, shown, DISCOVERY_COLUMNS, DISCOVERY_SPECIAL)
    return console_lines(table, cols, title=title, width=width, full=full, notes=notes)
