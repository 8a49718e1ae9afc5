"""An interactive protocol at ε per device over a run (docs/math.md §10.8): ε/R a round, a day of rounds
charged ε/D, pure ε-LDP for locally randomized rounds and central (ε, δ) with the smallest θ for the
threshold protocols; bad keys refused naming the key, the allowed values and the value."""

from __future__ import annotations

import pytest

from ldpsim.mechanisms.discovery.run_budget import is_local, run_rounds
from ldpsim.mechanisms.discovery.threshold_privacy import run_privacy
from ldpsim.mechanisms.registry import INTERACTIVE


@pytest.mark.parametrize("name", sorted(INTERACTIVE))
def test_every_interactive_protocol_splits_its_epsilon_over_the_rounds(name):
    params = {} if is_local(name) else {"gamma": 0.5, "delta": 1e-3}
    plan = run_rounds(name, epsilon=6.0, n_days=3, rounds_per_day=4, length=4, alphabet="ab", **params)
    assert plan.rounds == 12 and plan.epsilon_round == pytest.approx(0.5)
    assert plan.epsilon_day == pytest.approx(2.0) and plan.guarantee.epsilon_report == pytest.approx(2.0)
    assert plan.epsilon == pytest.approx(6.0) and len(plan.steps) == 12
    assert plan.kind == ("ldp" if is_local(name) else "central") and plan.meaning


def test_threshold_is_the_smallest_meeting_delta():
    plan = run_rounds("triehh", epsilon=4.0, n_days=2, gamma=0.2, delta=1e-6, length=4, alphabet="ab")
    theta = plan.protocol.theta
    assert plan.rounds_per_day == 4 and plan.delta <= 1e-6  # one pass of L = 4 rounds a day by default
    assert run_privacy(4.0, 0.2, theta - 1, plan.rounds)["delta"] > 1e-6  # θ − 1 does not meet it
    given = run_rounds("triehh_pp", epsilon=4.0, n_days=2, gamma=0.2, theta=7, length=4, alphabet="ab")
    assert given.protocol.theta == 7
    assert given.delta == pytest.approx(run_privacy(4.0, 0.2, 7, 8, counts=True)["delta"])


@pytest.mark.parametrize("name, kwargs, match", [
    ("ldp_trie", {"delta": 1e-6}, "'delta' parameter of ldp_trie does not apply.*1e-06"),
    ("ldp_trie", {"theta": 3}, "'theta' parameter of ldp_trie does not apply.*3"),
    ("triehh", {"gamma": 0.5, "delta": 1e-6, "theta": 3}, "not both.*delta = 1e-06, theta = 3"),
    ("triehh", {"gama": 0.5}, "takes no parameter 'gama'; allowed: .*gamma"),
    ("pem", {}, "'mechanism' parameter of run_rounds must be one of .*'triehh'.*Got 'pem'"),
    ("triehh", {"gamma": 0.5, "rounds_per_day": 0}, "rounds_per_day"),
    ("triehh", {"gamma": 1.5}, "gamma"),
])
def test_bad_parameters_are_refused(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_rounds(name, epsilon=4.0, n_days=2, **kwargs)


def test_a_missing_required_parameter_is_named():
    with pytest.raises(ValueError, match="triehh needs the parameter 'gamma'"):
        run_rounds("triehh", epsilon=4.0, n_days=3)


@pytest.mark.parametrize("gamma, epsilon, delta, rounds", [(0.05, 4.0, 1e-9, 112), (0.022, 4.0, 2.3e-12, 10),
                                                          (0.5, 2.0, 1e-6, 6), (0.9, 8.0, 1e-3, 3)])
def test_the_threshold_search_finds_the_smallest_theta_a_linear_scan_finds(gamma, epsilon, delta, rounds):
    from ldpsim.mechanisms.discovery.threshold_privacy import run_privacy
    from ldpsim.mechanisms.discovery.triehh import TrieHH

    linear = next(t for t in range(1, 10_000) if run_privacy(epsilon, gamma, t, rounds)["delta"] <= delta)
    assert TrieHH(gamma=gamma, theta=1).threshold_for(epsilon, delta, rounds) == linear
