"""`ldpsim reproduce triehh-fig4`: TrieHH vs SFP top-K F1 (scenarios/reproductions/triehh_sfp.py)."""

from __future__ import annotations

import math
import re

import pytest

from ldpsim.evaluation.privacy.amplification import shuffle_delta
from ldpsim.mechanisms.discovery.threshold_privacy import paper_parameters, run_privacy
from ldpsim.scenarios.api import reproduce
from ldpsim.scenarios.reproductions import available
from ldpsim.scenarios.reproductions.triehh_sfp import exact_gamma, paper_f1, paper_words, shuffled_epsilon_report


def test_paper_f1_hand_values():
    """Recall over all found words, precision = share of found words any device holds."""
    top = ["a", "b", "c", "d"]
    f1, recall, precision = paper_f1(["b", "zz", "a"], top, {"a", "b", "c", "d"}, [1, 2, 4])
    assert precision == pytest.approx(2 / 3)
    assert recall.tolist() == pytest.approx([1.0, 1.0, 0.5])
    assert f1[2] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert paper_f1([], top, set(top), [2])[0].tolist() == [0.0]


def test_sfp_gets_the_largest_epsilon_report_meeting_the_central_guarantee():
    """The shuffled ε₀ meets (ε, δ) and 0.01 more does not; below amplification's range ε stays."""
    eps, delta, n = 4.0, 2.3e-12, 1_000_000
    eps0 = shuffled_epsilon_report(eps, delta, n)
    assert shuffle_delta(eps, eps0, n) <= delta < shuffle_delta(eps, eps0 + 0.01, n)
    assert shuffled_epsilon_report(eps, delta, 1) == eps


def test_exact_gamma_is_the_largest_meeting_the_closed_forms_delta():
    paper = paper_parameters(4.0, 2.3e-12, 10)
    gamma = exact_gamma(4.0, paper["theta"], 10, paper["delta"])
    assert run_privacy(4.0, gamma, 15, 10)["delta"] <= paper["delta"] < run_privacy(4.0, gamma + 1e-4, 15, 10)["delta"]
    assert gamma == pytest.approx(0.0347, abs=1e-4) and gamma > paper["gamma"]


@pytest.mark.slow
def test_paper_words_keep_the_papers_word_rule():
    work = paper_words(10_000, 3000, 10)
    assert work.n == 10_000 and work.domain_size > 2000
    assert all(re.fullmatch(r"[a-z']{3,10}", str(w)) for w in work.items)
    assert list(work.counts) == sorted(work.counts, reverse=True)


@pytest.mark.slow
def test_quick_run_is_registered_and_writes_its_outputs(tmp_path):
    """Slow tier (~3 s): the quick mode end to end; TrieHH's words are all held (precision 1 or none found)."""
    assert "triehh-fig4" in available()
    result = reproduce("triehh-fig4", out=tmp_path, quick=True).runs[0]
    table = result.table
    assert set(table["method"]) == {"TrieHH", "TrieHH exact γ", "SFP shuffled", "SFP ε-LDP"}
    assert table["repeats"].max() == 2 and table["n"].max() == 4000
    assert ((table["f1"] >= 0) & (table["f1"] <= 1)).all()
    assert (tmp_path / "triehh-fig4.png").exists() and (tmp_path / "triehh-fig4.csv").exists()
    assert not math.isnan(result.runtime_s)
