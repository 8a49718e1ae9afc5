"""Gboard's guarantees (docs/math.md §10.6): local and central rows, the central round at its exact
boundary, the calibration of ε₀, the reproduction of (0.315, 1e-10), and 'gboard' in the days comparison."""

from __future__ import annotations

import math

import pytest

from ldpsim.evaluation.discovery.equal_privacy import equal_privacy_protocols, round_cohort
from ldpsim.scenarios.studies.discovery.days import growing_slang
from ldpsim.evaluation.privacy.amplification import shuffle_delta
from ldpsim.evaluation.privacy.composition import compose
from ldpsim.evaluation.privacy.secagg_rounds import round_guarantees, epsilon_report_for
from ldpsim.scenarios.studies.trust.trust_reproductions import (GBOARD_2024, gboard_2024_table, gboard_central_epsilon,
                                                                gboard_epsilon_report)
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie


def test_local_and_central_rows_and_the_central_round_at_its_boundary():
    """The central round ε is FMT21's numerical bound at δ/2 (one replaced report moves two bins): the
    exact divergence of the FMT21 pair is ≤ δ/2 there and > δ/2 just below (bisection tolerance 1e-4)."""
    g = round_guarantees(GboardTrie(epsilon=2.0, length=4, passes=2), cohort=100_000, delta=1e-10)
    g = g.set_index("scope")
    assert g.loc["round, local", "epsilon"] == 2.0 and g.loc["run, local", "epsilon"] == 16.0
    assert g.loc["round, local", "delta"] == 0.0
    e_round = g.loc["round, central", "epsilon"]
    assert shuffle_delta(e_round, 2.0, 100_000) <= 0.5e-10 < shuffle_delta(e_round - 2e-4, 2.0, 100_000)
    # over the run: the accountant's composition of the 8 rounds, each at δ/16
    from ldpsim.evaluation.privacy.amplification import numerical_epsilon
    per = numerical_epsilon(2.0, 100_000, 1e-10 / 16, tol=1e-4)
    assert g.loc["run, central", "epsilon"] == pytest.approx(compose([(per, 1e-10 / 16)] * 8, 1e-10).epsilon)
    assert e_round < g.loc["run, central", "epsilon"] < 8 * per + 1e-12


def test_reproduction_table_gives_the_stated_epsilon_and_stops_at_its_boundary():
    """docs/math.md §10.6: the ε₀ solved for each assumed (cohort, rounds) gives 0.315 at 1e-10 under FMT21
    Thm 3.1 (δ/R per round, basic composition); a hair less ε₀ falls short."""
    t = gboard_2024_table(cohorts=(10**5, 10**6), rounds=(1, 10))
    assert (t["epsilon_central"] - GBOARD_2024[0]).abs().max() < 1e-6
    for n, r, e0 in t[["cohort", "rounds", "epsilon_report"]].itertuples(index=False):
        assert gboard_central_epsilon(e0 - 1e-6, n, r) < GBOARD_2024[0]
    # the quoted cell: 10⁶ devices a round, one round, ε₀ = 4.514
    assert t.set_index(["cohort", "rounds"]).loc[(10**6, 1), "epsilon_report"] == pytest.approx(4.5144, abs=1e-4)


def test_the_closed_form_is_fmt21_theorem_3_1():
    e0, n, d = 3.0, 10**6, 1e-10
    e = math.exp(e0)
    hand = math.log1p((e - 1) / (e + 1) * (8 * math.sqrt(e * math.log(4 / d)) / math.sqrt(n) + 8 * e / n))
    assert gboard_central_epsilon(e0, n, 1, d) == pytest.approx(hand, rel=1e-12)
    assert gboard_central_epsilon(e0, n, 5, d) == pytest.approx(
        5 * gboard_central_epsilon(e0, n, 1, d / 5), rel=1e-12)
    assert math.isnan(gboard_epsilon_report(cohort=300, rounds=1))    # outside Thm 3.1's range


@pytest.mark.slow
def test_calibrated_epsilon_report_spends_just_under_the_target():
    e0 = epsilon_report_for(2.0, 1e-9, 50_000, 10)
    run = round_guarantees(GboardTrie(epsilon=e0, length=5, passes=2), 50_000, 1e-9).set_index("scope")
    assert 0.99 * 2.0 <= run.loc["run, central", "epsilon"] <= 2.0
    assert e0 > 2.0 / 10                      # far more than the pure-LDP share of the same ε


@pytest.mark.slow
def test_days_comparison_runs_gboard_at_its_central_guarantee():
    sd = growing_slang("en", n_days=2)
    cohort = round_cohort(20_000, 0.5)
    assert cohort == int(10_000 - 5 * math.sqrt(10_000 * 0.5))
    prot = equal_privacy_protocols(sd.codec, 4.0, 1e-9, 2, 2, 0.05, names=("gboard",), cohort=cohort)
    proto, row = prot["gboard"]
    assert isinstance(proto, GboardTrie) and proto.min_cohort == cohort
    assert row["kind"] == "central (ε, δ) after secure aggregation" and 0.99 * 4.0 <= row["epsilon"] <= 4.0
    with pytest.raises(ValueError, match="cohort"):
        equal_privacy_protocols(sd.codec, 4.0, 1e-9, 2, 2, 0.05, names=("gboard",))


def test_the_prefix_tree_has_the_same_guarantees_as_any_trie_of_local_reports_at_its_epsilon():
    """The amplification depends only on ε₀, the cohort and the rounds, not on the local randomizer
    (GRR or unary encoding): both tries get the same rows; the prefix tree's pass is its ``rounds``."""
    from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree

    tree = round_guarantees(PrefixTree(epsilon=2.0, length=4, alphabet="ab", rounds=2), 100_000, 1e-10)
    trie = round_guarantees(GboardTrie(epsilon=2.0, length=4), 100_000, 1e-10, rounds=2)
    assert tree.equals(trie) and tree.set_index("scope").loc["run, local", "epsilon"] == 4.0
