"""Gboard 2024 from named assumptions (evaluation/privacy/gboard_assumptions.py, docs/math.md §10.6): the
central ε per report, word and person equal the trie's own accountant at the matching rounds, stay below
the closed-form bound of FMT21 Theorem 3.1 composed by basic composition, and the grid marks exactly the
combinations at or under 0.315."""

from __future__ import annotations

import pytest

from ldpsim.evaluation.privacy.gboard_assumptions import (GBOARD_2024, GboardAssumptions, implied,
                                                         parse_assumptions, reaching_grid)
from ldpsim.evaluation.privacy.secagg_rounds import round_guarantees
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.trust.trust_reproductions import gboard_central_epsilon


@pytest.mark.slow
def test_implied_equals_the_tries_accountant_and_respects_the_closed_form():
    a = GboardAssumptions(eps0=2.0, devices_per_round=10**5, layers=3, passes=2, collections=2)
    g = implied(a)
    trie = GboardTrie(epsilon=2.0, length=3, passes=2)
    rows = round_guarantees(trie, 10**5, GBOARD_2024[1], rounds=a.rounds_person).set_index("scope")["epsilon"]
    assert g.epsilon_report == pytest.approx(rows["round, central"], rel=1e-12)
    assert g.epsilon_person == pytest.approx(rows["run, central"], rel=1e-12)
    item = round_guarantees(trie, 10**5, GBOARD_2024[1], rounds=3).set_index("scope")["epsilon"]
    assert g.epsilon_item == pytest.approx(item["run, central"], rel=1e-12)
    assert a.rounds_person == 12 and g.epsilon_report < g.epsilon_item < g.epsilon_person
    # the numerical bound and PLD composition are never looser than Thm 3.1 summed over the rounds
    assert g.epsilon_person <= gboard_central_epsilon(2.0, 10**5, 12) * (1 + 1e-9)


@pytest.mark.slow
def test_grid_marks_exactly_the_combinations_under_the_stated_epsilon():
    t = reaching_grid({"eps0": (1.0, 4.0), "devices_per_round": (10**5,), "layers": (10,), "passes": (1, 2)})
    assert len(t) == 4
    assert (t["item_reaches_0.315"] == (t["epsilon_item"] <= 0.315)).all()
    assert (t["person_reaches_0.315"] == (t["epsilon_person"] <= 0.315)).all()
    assert t["item_reaches_0.315"].any() and not t["item_reaches_0.315"].all()
    assert (t["item_reaches_0.315"] & ~t["person_reaches_0.315"]).any()   # a word reaches it, the person not
    one = t[t.passes == 1]
    assert (one.epsilon_item == one.epsilon_person).all()   # one pass, one collection: a word is the person


def test_assumptions_parsed_and_refused_by_name():
    a = parse_assumptions(["eps0=3", "devices_per_round=1e6", "layers=12"])
    assert (a.eps0, a.devices_per_round, a.layers, a.passes) == (3.0, 10**6, 12, 1)
    for bad, match in ((["foo=1"], "eps0"), (["eps0=x"], "'eps0' must be a number"),
                       (["layers=2", "layers=3"], "twice"), (["layers=0"], "layers"),
                       (["devices_per_round=1"], "devices_per_round"), (["eps0=-1"], "eps0")):
        with pytest.raises(InputError, match=match):
            parse_assumptions(bad)
