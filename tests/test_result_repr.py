"""Result objects print briefly, the README says what ``ldpsim.sweep`` returns, and library calls name the
run folder they write by default."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import ldpsim
from ldpsim.scenarios.studies.deployment.compare import Comparison
from ldpsim.scenarios.studies.deployment.study import DeploymentStudy
from ldpsim.scenarios.studies.discovery.days import DaysResult
from ldpsim.scenarios.studies.poisoning.experiment import PoisonResult
from ldpsim.scenarios.studies.trust.trust_compare import TrustComparison
from ldpsim.scenarios.studies.sweep.grid_run import SweepResult
from ldpsim.runtime.brief_repr import FIELD_CHARS, BriefRepr, brief
from ldpsim.simulator.deployment import DeploymentResult

ROOT = Path(__file__).resolve().parents[1]
RESULTS = (Comparison, DeploymentStudy, DaysResult, PoisonResult, TrustComparison, SweepResult, DeploymentResult)


def test_every_study_result_uses_the_brief_repr():
    for cls in RESULTS:
        assert cls.__repr__ is BriefRepr.__repr__, cls.__name__


def test_brief_repr_of_a_result_holding_big_tables():
    @dataclass(repr=False)
    class Big(BriefRepr):
        out: Path
        table: pd.DataFrame
        ledger: np.ndarray
        tables: dict
        text: str

    frame = pd.DataFrame({"item": range(50_000), "count": 1.5})
    big = Big(Path("runs/x"), frame, np.zeros((2000, 30)), {f"t{i}": frame for i in range(12)}, "line\n" * 5000)
    text = repr(big)
    assert len(text) < 400, text
    assert "out='runs/x'" in text and "<DataFrame 50000 rows × 2 columns>" in text
    assert "<array 2000×30 float64>" in text and "… 12 keys" in text and "(25000 chars)" in text
    for value in (frame, big.ledger, big.tables, big.text, list(range(10_000)), object()):
        assert len(brief(value)) <= 2 * FIELD_CHARS


def test_readme_says_what_sweep_returns():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for line in readme.splitlines():
        if re.search(r"ldpsim\.sweep\(", line) and "DataFrame" in line:
            assert ".summary" in line, line  # the call returns a SweepResult; its .summary is the DataFrame


def test_default_run_folder_is_named(tmp_path, monkeypatch, capsys):
    """``ldpsim.sweep`` without ``out`` writes under runs/ in the current folder and says so on stderr;
    with ``out`` it says nothing more."""
    monkeypatch.chdir(tmp_path)
    result = ldpsim.sweep("smoke")
    err = capsys.readouterr().err
    assert result.out.resolve() == (tmp_path / "runs" / "smoke").resolve()
    assert f"run folder: {(tmp_path / 'runs' / 'smoke').resolve()}" in err and "current folder" in err
    assert len(repr(result)) < 600
    ldpsim.sweep("smoke", out=tmp_path / "chosen")
    assert "run folder" not in capsys.readouterr().err


def test_brief_repr_docstring_example():
    import doctest

    import ldpsim.runtime.brief_repr as module
    assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
