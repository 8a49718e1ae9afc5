"""The words use case of a deployment: the server's daily discovery job, and when it found the slang.

Each day d the job runs the use case's discovery protocol (``discover(agg, top_k)``, docs/math.md
§7.4) over the merged aggregate of every report stored for collection days ≤ d — the aggregates
are mergeable and candidate-free, so "all reports so far" is their sum. It is scored against the
truth of the same reports (the donated words of days ≤ d). The slang word (the last of
``cfg.words``) counts as *found* from the first day after which it stays in the returned list; the
summary gives that day, its estimated and true share that day, the last day's F1 against the true
top-k, the words' report size and the ε one donation costs. (One run gives one such day; the day at
which the discovery probability over repeated runs reaches 0.9 needs several seeds and
:func:`~ldpsim.evaluation.discovery.scores.first_reaching` on the per-day found rates.)

With an interactive protocol (TrieHH, TrieHH++, LDPTrie, …: docs/math.md §10.8) there are no word
reports: the server runs the protocol's rounds across the nights over the devices that answer
(:func:`~ldpsim.evaluation.discovery.fleet_rounds.rounds_table`, its tallies drawn from the run's
stream ``"rounds"``), and each day is scored on the list of the latest completed pass. The summary
then states the run's guarantee: its kind, ε and δ per device over the run, and what ε means.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.evaluation.discovery.scores import first_reaching, run_scores


def word_discovery(cfg, result) -> tuple[pd.DataFrame, dict]:
    """(one row per day: reports, slang found / estimated share / true share, F1, the invented words the list
    states to expect (docs/math.md §10.10), the live prefixes its caps dropped; summary dict)."""
    uc = cfg.use_case("word")
    if uc is None:
        return pd.DataFrame(), {}
    if uc.interactive:
        return _rounds_discovery(cfg, result, uc)
    mech = uc.make_mechanism()
    slang = cfg.words[-1]
    donated = result.truth["word_donated"].cumsum(axis=0)
    rows, running = [], None
    for day in range(cfg.n_days):
        agg = result.aggregates.get((uc.name, day))
        if agg is not None:
            running = agg if running is None else running + agg
        if running is None:
            continue
        res = mech.discover(running, top_k=uc.top_k)
        truth = donated[day]
        order = np.argsort(-truth, kind="stable")
        words = np.asarray(cfg.words, dtype=object)[order]
        scores = run_scores(words, truth[order], res.words, res.counts, uc.top_k, planted=slang)
        found = dict(zip(res.words.tolist(), res.frequencies.tolist()))
        rows.append({"day": day, "reports": running.n, "slang_found": bool(scores["found"]),
                     "slang_estimate": found.get(slang, np.nan), "slang_true": truth[-1] / max(truth.sum(), 1),
                     "f1": scores["f1"], "ncr": scores["ncr"], "relative_error": scores["relative_error"],
                     "expected_false": res.expected_false, "dropped": res.dropped})
    table = pd.DataFrame(rows)
    summary = {"words_mechanism": uc.mechanism, "words_epsilon_report": uc.guarantee.epsilon_report, "words_report_bytes": mech.report_bytes,
               "slang_word": slang, "slang_start_day": cfg.slang_start_day, "slang_share_typed": cfg.slang_share,
               "slang_first_day_found": None, "slang_estimated_share": np.nan, "slang_true_share": np.nan,
               "words_f1_last_day": float(table["f1"].iloc[-1]) if len(table) else np.nan}
    if len(table):
        first = first_reaching(table["day"], table["slang_found"].astype(float), level=1.0)
        if first is not None:
            hit = table[table["day"] == first].iloc[0]
            summary.update(slang_first_day_found=int(first), slang_estimated_share=float(hit["slang_estimate"]),
                           slang_true_share=float(hit["slang_true"]))
    return table, summary


def _rounds_discovery(cfg, result, uc) -> tuple[pd.DataFrame, dict]:
    """:func:`word_discovery` of an interactive protocol (module docstring)."""
    from ldpsim.evaluation.discovery.fleet_rounds import first_found, rounds_table
    from ldpsim.simulator.fleet import stream

    plan = uc.make_mechanism()
    table = rounds_table(cfg, result, plan.protocol, plan.rounds_per_day, uc.top_k, stream(cfg.seed, "rounds"))
    first, estimate, true = first_found(table)
    g = plan.guarantee
    return table, {"words_mechanism": uc.mechanism, "words_epsilon_report": g.epsilon_report, "words_report_bytes": 0,
                   "words_kind": g.label, "words_privacy": plan.meaning, "words_epsilon_device": plan.epsilon,
                   "words_delta_device": plan.delta, "words_epsilon_round": plan.epsilon_round,
                   "words_delta_round": plan.delta_round, "words_rounds_per_day": plan.rounds_per_day,
                   "words_theta": int(plan.protocol.theta) if plan.kind == "central" else None,
                   "words_gamma": float(plan.protocol.gamma) if plan.kind == "central" else None,
                   "slang_word": cfg.words[-1], "slang_start_day": cfg.slang_start_day,
                   "slang_share_typed": cfg.slang_share, "slang_first_day_found": first,
                   "slang_estimated_share": estimate, "slang_true_share": true,
                   "words_f1_last_day": float(table["f1"].iloc[-1]) if len(table) else np.nan}


def slang_discovery_by_day(cfg, seeds, out_dir, level: float = 0.9) -> tuple[pd.DataFrame, int | None]:
    """Run the deployment once per seed and return (per day: the share of runs whose nightly job has
    the slang word in its list, with its standard error; the first day from which that share stays
    ≥ ``level``, or None). Each run writes its store under ``out_dir/seed<s>``."""
    import dataclasses
    from pathlib import Path

    from ldpsim.simulator.deployment import run

    found = []
    for s in seeds:
        c = dataclasses.replace(cfg, seed=int(s))
        table, _ = word_discovery(c, run(c, Path(out_dir) / f"seed{s}"))
        found.append(table.set_index("day")["slang_found"].astype(float))
    runs = pd.concat(found, axis=1).fillna(0.0)
    p = runs.mean(axis=1)
    se = np.sqrt(p * (1 - p) / runs.shape[1])
    by_day = pd.DataFrame({"day": p.index, "p_found": p.to_numpy(), "se": se.to_numpy(), "runs": runs.shape[1]})
    return by_day, first_reaching(by_day["day"], by_day["p_found"], level)
