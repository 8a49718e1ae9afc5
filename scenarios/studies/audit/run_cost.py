"""Cost before spending: the whole-run audit's CPU estimate, and its refusal before any run — docs/math.md §11.8.

One run of the canary costs its n = D·R rounds (one client call, noise draw or threshold release per round,
vectorised over the runs), so an audit of T runs per world costs about 2·T·n·s CPU seconds, s the design's
:data:`SECONDS_PER_RUN_ROUND`. The run audit starts at most
:data:`~ldpsim.evaluation.cost.MAX_STUDY_SECONDS` of it (the limit of every study command), and never more
than :data:`~ldpsim.evaluation.audit.run_audit.MAX_RUNS` runs per world: :func:`max_runs`. Beyond, it is
refused (:class:`~ldpsim.evaluation.cost.CostError`) before the first run, naming the runs asked or needed,
the runs that fit and what to change: :func:`check_runs` for runs given, :func:`needed_runs` for the
default runs (each planted bug's runs for power 0.95, searched only up to the runs that fit), raised where
too few for any outcome to exceed the audited claim (:func:`refutable_runs`), and :func:`check_total` for
the designs together.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ldpsim.evaluation.audit.bounds import fewest_trials, largest_lower_bound
from ldpsim.evaluation.audit.run_audit import MAX_RUNS, RunPlan, event_epsilon, run_hits, trials_to_fail
from ldpsim.evaluation.cost import MAX_STUDY_SECONDS, CostError

#: CPU seconds per run and round of the canary (both worlds counted apart), measured by :func:`measure` on
#: each design's honest plan at its defaults (10⁵ runs per world, the larger of two seeds; one process, 2-core
#: Linux, numpy 2, a machine shared with other jobs), ×1.5
SECONDS_PER_RUN_ROUND = {
    "grr": 3.1e-8, "oue": 1.3e-7, "olh": 5.6e-8, "ldp_trie": 1.9e-8, "gboard": 2.2e-8, "secagg": 2.2e-7,
    "threshold": 1.1e-7, "two_server": 8.1e-7, "shuffle": 2.2e-8, "secagg_local": 2.3e-8, "tee": 1.4e-6,
    "tee_selection": 1.1e-6, "triehh": 2.4e-7, "sample_threshold": 1.3e-7, "pem": 9.7e-7, "treehist": 1.3e-6,
    "sfp": 2.2e-6, "prefix_tree": 1.4e-7, "rr": 2.8e-8, "sdgrr": 3.3e-8, "sue": 1.3e-7, "blh": 5.1e-8, "flh": 6.4e-8,
    "hr": 5e-8, "she": 3.8e-8, "the": 9e-8, "cms": 2.4e-7, "hcms": 7.1e-8, "dbitflip": 1.3e-7,
    "urr": 2.2e-8, "personalized-sdgrr": 7.6e-8, "pm": 3.9e-8, "sdpm": 1.1e-7, "sw": 5.4e-8, "onebitmean": 4.7e-8,
    "personalized-sdpm": 2e-7,
    "grr_memo": 8.1e-8, "rappor": 8.8e-7, "dbitflip_memo": 2.9e-7, "onebitmean_memo": 5.5e-8}


def seconds(design: str, rounds: int, runs: int) -> float:
    """The estimated CPU seconds of ``runs`` runs per world of ``design``'s audit over ``rounds`` rounds."""
    return 2.0 * runs * rounds * SECONDS_PER_RUN_ROUND[design]


def max_runs(design: str, rounds: int) -> int:
    """The most runs per world the run audit starts for ``design`` over ``rounds`` rounds: within
    :data:`~ldpsim.evaluation.cost.MAX_STUDY_SECONDS` of estimated CPU and at most :data:`MAX_RUNS`."""
    return max(1, min(MAX_RUNS, math.floor(MAX_STUDY_SECONDS / seconds(design, rounds, 1))))


def _cpu(seconds_: float) -> str:
    return f"{seconds_:,.0f}" if seconds_ >= 10 else f"{seconds_:.2g}"


def _length(plan: RunPlan) -> str:
    delta = f", δ = {plan.delta:g}" if plan.delta > 0 else ""
    return f"{plan.days} day(s) × {plan.rounds_per_day} round(s){delta}"


def _over(plan: RunPlan, runs: int, cap: int) -> str:
    return (f"about {_cpu(seconds(plan.design, plan.rounds, runs))} CPU-s, more than the {cap:,} runs per world "
            f"the run audit starts for {plan.design} over {_length(plan)} (at most {MAX_STUDY_SECONDS:,} CPU-s "
            f"and {MAX_RUNS:.0e} runs)")


def check_runs(plan: RunPlan, runs: int) -> None:
    """Refuse ``runs`` runs per world of ``plan`` beyond :func:`max_runs` (:class:`CostError` naming 'trials')."""
    cap = max_runs(plan.design, plan.rounds)
    if runs > cap:
        raise CostError(f"run audit: trials = {runs:,} runs per world of {plan.design} need "
                        f"{_over(plan, runs, cap)}; give at most trials = {cap:,} (--trials), or fewer days or "
                        f"rounds a day (--days, --rounds-per-day)")


def check_total(plans: list, runs: list) -> None:
    """Refuse the audits of ``plans`` with ``runs`` runs per world each when together they exceed
    :data:`~ldpsim.evaluation.cost.MAX_STUDY_SECONDS` of estimated CPU (:class:`CostError` naming 'designs')."""
    parts = [seconds(p.design, p.rounds, t) for p, t in zip(plans, runs)]
    if sum(parts) > MAX_STUDY_SECONDS:
        each = ", ".join(f"{p.design} {_cpu(s)}" for p, s in zip(plans, parts))
        raise CostError(f"run audit: the {len(plans)} designs need about {_cpu(sum(parts))} CPU-s together ({each}), "
                        f"more than the {MAX_STUDY_SECONDS:,} CPU-s the run audit starts; audit fewer designs at a "
                        f"time (--design)")


def needed_runs(plans: dict, design: str, confidence: float) -> int:
    """The default runs per world of ``design``'s audit: the most any of its planted bugs (``plans``: bug →
    :class:`RunPlan`) needs to FAIL with probability ≥ 0.95 (:func:`trials_to_fail`, searched up to
    :func:`max_runs`). Refused before any run when one needs more (:class:`CostError` naming the bug, the
    runs it needs or that no feasible count detects it, the runs that fit and what to change)."""
    need = {}
    for bug, plan in plans.items():
        cap = max_runs(design, plan.rounds)
        need[bug] = trials_to_fail(plan, confidence, max_trials=cap)
        if need[bug] > cap:
            beyond = trials_to_fail(plan, confidence, max_trials=MAX_RUNS * 1000)
            ratio = event_epsilon(plan)
            gap = "not above it" if ratio <= plan.claim else f"above it by only {ratio - plan.claim:.2g}"
            what = (f"{beyond:,} runs per world, {_over(plan, beyond, cap)}" if beyond <= MAX_RUNS * 1000 else
                    f"more than {MAX_RUNS * 1000:.0e} runs per world to FAIL its claim {plan.claim:.4g} (the "
                    f"planned event's exact ratio, {ratio:.4g}, is {gap})")
            raise CostError(f"run audit: the default trials are the runs at which every planted bug of {design} "
                            f"FAILS with probability 0.95, and its planted {bug!r} needs {what}; audit a shorter "
                            f"run (--days, --rounds-per-day), a larger δ (--delta, central and (ε, δ) designs), "
                            f"or give the runs (--trials, at most {cap:,}: an audit with fewer runs has less power)")
    return max(need.values())


def refutable_runs(plan: RunPlan, confidence: float, runs: int) -> int:
    """``runs``, or the fewest runs per world at which some outcome of ``plan``'s audit exceeds its claim when
    ``runs`` are too few (:func:`~ldpsim.evaluation.audit.bounds.largest_lower_bound`, docs/math.md §11.3): a
    default audit is never INCONCLUSIVE by construction. Refused (:class:`CostError`) when that exceeds
    :func:`max_runs`: every audit that fits would be INCONCLUSIVE."""
    def exceeds(t: int) -> bool:
        return largest_lower_bound(t, t, 1 - confidence, plan.delta) > plan.claim

    if exceeds(runs):
        return runs
    cap = max_runs(plan.design, plan.rounds)
    need = fewest_trials(exceeds, cap)
    if need > cap:
        raise CostError(f"run audit: no audit of at most {cap:,} runs per world can show an ε lower bound above "
                        f"{plan.design}'s claim {plan.claim:.4g} over {_length(plan)} at confidence {confidence:g} "
                        f"(every such audit is INCONCLUSIVE); audit a shorter run (--days, --rounds-per-day)")
    return need


def measure(plan: RunPlan, runs: int = 100_000, seed: int = 0) -> float:
    """CPU seconds per run and round of ``plan``'s audit: ``runs`` runs in each world, timed (process time)."""
    rng = np.random.default_rng(seed)
    start = time.process_time()
    for value in (plan.x, plan.x_prime):
        run_hits(plan, value, runs, rng)
    return (time.process_time() - start) / (2 * runs * plan.rounds)
