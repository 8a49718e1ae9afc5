"""The guarantees of a trie grown from local reports summed by secure aggregation — Gboard's
out-of-vocabulary discovery (:class:`~ldpsim.mechanisms.discovery.gboard_trie.GboardTrie`) and the
prefix tree (:class:`~ldpsim.mechanisms.discovery.prefix_tree.PrefixTree`): local per round and over the
run, and central after secure aggregation — docs/math.md §10.6.

Each round, every device sends one ε₀-LDP report (GRR or unary encoding, of a word it chose); secure
aggregation publishes only the sum over a cohort of at least ``cohort`` reports. The sum of one-hot
reports is the histogram of the reports, a post-processing of the shuffled reports, so the shuffle
amplification bound (Feldman, McMillan, Talwar 2021, numerical version;
:mod:`~ldpsim.evaluation.privacy.amplification`) gives each round a central (ε_r, δ_r) per device at
the cohort size; the rounds compose through the project's accountant. This is the ``secagg_local``
trust model of :mod:`~ldpsim.evaluation.privacy.trust_accounting` with one cohort of ``cohort``
devices that all arrive, and R = passes·L reports per device. The neighbouring relation is one
device's whole word list replaced (device level); the sampler is inside the local randomizer.

>>> from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
>>> g = round_guarantees(GboardTrie(epsilon=2.0, length=4), cohort=100_000, delta=1e-10)
>>> g["scope"].tolist()
['round, local', 'run, local', 'round, central', 'run, central']
>>> float(g.set_index("scope").loc["run, local", "epsilon"])
8.0
"""

from __future__ import annotations

import pandas as pd

from ldpsim.evaluation.privacy.trust_accounting import calibrate, guarantees, run_epsilon
from ldpsim.evaluation.privacy.trust_local import SecAggLocal
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.deltas import DELTA_RELEASE


def cohort_model(epsilon_report: float, cohort: int) -> SecAggLocal:
    """The ``secagg_local`` trust model of one secure-aggregation cohort of ``cohort`` reports, all arriving."""
    cohort = check_int("cohort_model", "cohort", cohort, low=2)
    return SecAggLocal(epsilon_report=epsilon_report, min_cohort=cohort, min_arrival=1.0)


def round_guarantees(protocol, cohort: int, delta: float = DELTA_RELEASE, rounds: int | None = None) -> pd.DataFrame:
    """Local and central (ε, δ) per device of one round and of the run (module docstring).

    Parameters
    ----------
    protocol : GboardTrie or PrefixTree (any protocol with an ``epsilon`` per round and ``rounds`` a pass)
    cohort : int ≥ 2
        Reports summed by secure aggregation in each round (the round's devices).
    delta : float in (0, 1)
        δ of the central guarantees (per round and over the run).
    rounds : int, optional
        Rounds a device answers (default: one pass, times ``passes`` where the protocol has them).

    Returns
    -------
    pandas.DataFrame
        Columns scope, epsilon, delta, meaning.
    """
    delta = check_real("round_guarantees", "delta", delta, 0.0, 1.0)
    rounds = (getattr(protocol, "passes", 1) * protocol.rounds if rounds is None
              else check_int("round_guarantees", "rounds", rounds))
    eps0 = protocol.epsilon
    central = {g.scope: g for g in guarantees(cohort_model(eps0, cohort), cohort, 1, delta, reports_per_day=rounds)}
    return pd.DataFrame([
        ("round, local", eps0, 0.0, "one round's report, whoever sees it (pure ε-LDP)"),
        ("run, local", rounds * eps0, 0.0, f"one device over {rounds} rounds, whoever sees the reports (pure)"),
        ("round, central", central["report"].epsilon, delta,
         f"one round's report after secure aggregation of {cohort} reports"),
        ("run, central", central["run"].epsilon, delta,
         f"one device over {rounds} rounds after secure aggregation (accountant)"),
    ], columns=["scope", "epsilon", "delta", "meaning"])


def epsilon_report_for(epsilon_device: float, delta: float, cohort: int, rounds: int) -> float:
    """ε₀ per round whose central ε per device over ``rounds`` rounds, after secure aggregation of
    ``cohort`` reports a round, is just under ``epsilon_device`` at ``delta`` (bisection; see
    :func:`~ldpsim.evaluation.privacy.trust_accounting.calibrate`)."""
    rounds = check_int("epsilon_report_for", "rounds", rounds)
    model = calibrate(cohort_model(epsilon_device / rounds, cohort), epsilon_device, cohort, 1, delta,
                      reports_per_day=rounds)
    return model.epsilon_report


def central_run_epsilon(epsilon_report: float, cohort: int, rounds: int, delta: float = DELTA_RELEASE) -> float:
    """Central ε per device over ``rounds`` rounds of ``epsilon_report``-LDP reports, each round summed by
    secure aggregation over ``cohort`` reports, at ``delta`` (the "run, central" row of
    :func:`round_guarantees`)."""
    rounds = check_int("central_run_epsilon", "rounds", rounds)
    return run_epsilon(cohort_model(epsilon_report, cohort), cohort, 1, delta, reports_per_day=rounds)
