"""What the whole-run audit can detect at realistic run lengths: each planted bug's runs for power 0.95 —
docs/math.md §11.8.

:func:`run_power` plans a design's run audit over a given length (days × rounds, δ of the claim) and reports,
for each planted bug, the claim, the most the plan's event can show with unlimited runs (ln((P[S|A] − δ)/P[S|B])
of its exact law under the bug) and the runs per world at which the audit FAILS that bug with probability
≥ 0.95 (:func:`~ldpsim.evaluation.audit.run_audit.trials_to_fail`, "beyond" :data:`MAX_RUNS`). An audit with
fewer runs has less power: a PASS then says only that no effect that large was seen.
"""

from __future__ import annotations

from ldpsim.evaluation.audit.run_audit import MAX_RUNS, event_epsilon, trials_to_fail
from ldpsim.scenarios.studies.audit.run_designs import design_bugs
from ldpsim.mechanisms.deltas import DELTA_AUDIT
from ldpsim.scenarios.studies.audit.gate import plan_run

#: the lengths of :func:`run_power`'s default table: (design, days, rounds a day, δ of the claim)
CASES = (("grr", 7, 2, DELTA_AUDIT), ("grr", 30, 1, DELTA_AUDIT), ("secagg", 3, 2, 1e-5), ("two_server", 3, 2, 1e-5),
         ("two_server", 30, 1, 1e-5), ("shuffle", 7, 30, DELTA_AUDIT), ("tee", 30, 1, 1e-5),
         ("tee_selection", 30, 1, 1e-5), ("triehh", 7, 2, DELTA_AUDIT))
COLUMNS = ("design", "days", "rounds_per_day", "delta", "bug", "claim", "event_epsilon", "runs_for_power")


def run_power(cases=CASES, confidence: float = 0.95):
    """One row per (case, planted bug) of ``cases`` ((design, days, rounds a day, δ) tuples; the frequency
    oracles' ε a round is the run audit's): columns :data:`COLUMNS`, ``runs_for_power`` −1 when beyond
    :data:`MAX_RUNS` (pandas.DataFrame)."""
    import pandas as pd

    rows = []
    for design, days, per_day, delta in cases:
        for bug in design_bugs(design):
            plan = plan_run(design, bug, days=days, rounds_per_day=per_day, delta=delta)
            runs = trials_to_fail(plan, confidence, max_trials=MAX_RUNS)
            rows.append({"design": design, "days": days, "rounds_per_day": per_day, "delta": delta, "bug": bug,
                         "claim": plan.claim, "event_epsilon": event_epsilon(plan),
                         "runs_for_power": runs if runs <= MAX_RUNS else -1})
    return pd.DataFrame(rows, columns=list(COLUMNS))
