"""The linking observer over many days: flat under memoization, growing without it."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.adversary.linking import linking_accuracy, linking_study, plot_linking
from ldpsim.mechanisms import make

D = 8
PRIOR = np.array([8, 6, 5, 4, 3, 2, 1, 1], float)
ITEMS = list(range(D))
Z = 4.0  # one-sided z bound: false-alarm rate ≈ 3e-5 per comparison


def _two_proportion_z(a: float, b: float, n: int) -> float:
    """z of a − b for two accuracies over n devices each (pooled binomial variance)."""
    p = (a + b) / 2
    return (a - b) / np.sqrt(max(2 * p * (1 - p) / n, 1e-12))


@pytest.mark.parametrize("name,params", [("grr", {"domain_size": D}), ("oue", {"domain_size": D}),
                                         ("cms", {"k": 16, "m": 32, "seed": 1})])
def test_memoized_linked_accuracy_is_flat_and_fresh_grows(name, params):
    mech = make(name, epsilon=1.0, **params)
    n = 3000
    memo = linking_accuracy(mech, ITEMS, PRIOR, n, 30, memoize=True, rng=1)
    fresh = linking_accuracy(mech, ITEMS, PRIOR, n, 30, memoize=False, rng=2)
    # memoized: the observer sees the very same reports every day, so its accuracy cannot move
    assert memo["linked"].nunique() == 1
    assert (memo["report_changed"] == 0).all()
    # fresh: 30 days of reports reveal far more than one
    assert _two_proportion_z(fresh["linked"].iloc[-1], fresh["linked"].iloc[0], n) > Z
    assert fresh["linked"].iloc[-1] > memo["linked"].iloc[-1]
    # stripped and shuffled: no better than the prior (one-sided z)
    for df in (memo, fresh):
        assert _two_proportion_z(df["stripped"].iloc[-1], df["prior_only"].iloc[-1], n) < Z


def test_memo_reveals_the_change_of_value():
    mech = make("grr", epsilon=1.0, domain_size=D)
    n = 3000
    df = linking_accuracy(mech, ITEMS, PRIOR, n, 20, memoize=True, change_day=10, rng=3)
    changed = df.set_index("day")["report_changed"]
    assert changed.drop(10).max() == 0.0
    # the report changes unless both values' memoized reports coincide: P = Σ_y P[y|x]P[y|x'] small
    assert changed[10] > 0.7
    # after the change the observer guesses the new value from one report: flat again
    assert df.loc[df["day"] >= 10, "linked"].nunique() == 1


def test_linking_study_and_plot(tmp_path):
    cases = {"grr": make("grr", epsilon=1.0, domain_size=D)}
    df = linking_study(cases, ITEMS, PRIOR, n_devices=200, n_days=6, change_day=3)
    assert len(df) == 2 * 2 * 6 and set(df["value"]) == {"constant", "changes"}
    plot_linking(df, tmp_path / "l.png")
    assert (tmp_path / "l.png").stat().st_size > 0


def test_linking_validates_change_day():
    with pytest.raises(ValueError, match="change_day"):
        linking_accuracy(make("grr", epsilon=1.0, domain_size=D), ITEMS, PRIOR, 10, 5, change_day=9)
