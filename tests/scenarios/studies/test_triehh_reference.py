"""ldpsim's TrieHH beside the reference TrieHH (scenarios/studies/bench/triehh_reference.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.scenarios.studies.bench import triehh_reference as ref


def test_without_the_reference_the_comparison_is_skipped(monkeypatch, tmp_path):
    monkeypatch.delenv(ref.PYTHON_ENV, raising=False)
    monkeypatch.setenv(ref.TREE_ENV, str(tmp_path))
    assert ref.reference_setup() is None and ref.compare_reference() is None
    monkeypatch.setenv(ref.PYTHON_ENV, str(tmp_path / "python"))  # named but absent
    assert ref.reference_setup() is None


def test_words_are_ranked_by_their_votes_before_scoring():
    case = ref.ReferenceCase(n=1000, top=50)
    w = case.workload()
    top2 = [str(x) for x in w.items[:2]]
    # two true top-2 words found, listed after a non-word with fewer votes: ranked first, F1 = 1 at k = 2
    assert ref._f1(w, ["zzzz", *top2], [1, 9, 8], 2) == 1.0
    assert ref._f1(w, ["zzzz", *top2], [10, 9, 8], 2) == pytest.approx(0.5)


def test_ours_finds_the_head_and_times_its_rounds():
    out = ref.run_ours(ref.ReferenceCase(repeats=2))
    assert out["f1"].shape == (2,) and (out["f1"] >= 0.8).all() and (out["seconds"] > 0).all()


@pytest.mark.slow
@pytest.mark.skipif(ref.reference_setup() is None, reason="reference TrieHH not set up (LDPSIM_TRIEHH_PYTHON, LDPSIM_TRIEHH_TREE)")
def test_against_the_reference():
    row = ref.compare_reference(ref.ReferenceCase(n=5000, top=100, length=4, repeats=3))
    assert row["f1_ref"] > 0.5 and row["f1_ours"] > 0.5 and row["speedup"] > 1
