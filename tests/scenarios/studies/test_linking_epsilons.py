"""The linking study says what its ε means: one report's, and one person's over the run's days — fresh reports
composed, memoized ones infinite between arbitrary histories (docs/math.md §8.2, §8.6)."""

from __future__ import annotations

import math

import pytest

from ldpsim.mechanisms import make
from ldpsim.scenarios.studies.link.linking_study import memo_linking, person_epsilons


def test_person_epsilons_compose_fresh_reports_and_memoized_ones_are_unbounded():
    cases = {"grr": make("grr", epsilon=0.7, domain_size=8), "oue": make("oue", epsilon=0.7, domain_size=8)}
    eps = person_epsilons(cases, 30).set_index(["mechanism", "memoize"])
    for name in cases:
        assert eps.loc[(name, False), "epsilon_report"] == pytest.approx(0.7)
        assert eps.loc[(name, False), "epsilon_person"] == pytest.approx(30 * 0.7, rel=1e-12)
        assert math.isinf(eps.loc[(name, True), "epsilon_person"])


def test_linking_table_summary_and_figure_title_carry_the_epsilons(tmp_path):
    result = memo_linking(devices=40, epsilon=2.0, days=6, change_day=3)
    summary = result.summary()
    fresh = summary.xs(False, level="memoize")
    assert fresh["epsilon_person"].tolist() == pytest.approx([12.0] * len(fresh))
    assert (summary["epsilon_report"] == 2.0).all()
    assert summary.xs(True, level="memoize")["epsilon_person"].map(math.isinf).all()
    assert "ε = 2 per report" in result.title() and "fresh 12" in result.title() and "∞" in result.title()
    assert "ε = 2 of one report" in result.epsilon_note() and "6 days" in result.epsilon_note()
    paths = result.to_folder(tmp_path / "l")
    assert {p.name for p in paths} == {"linking.csv", "linking.png"}
