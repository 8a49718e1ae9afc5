"""``ldpsim trust --gboard``: Gboard 2024's central ε from named assumptions, a thin layer over
ldpsim.evaluation.privacy.gboard_assumptions (same numbers, same refusals)."""

from __future__ import annotations

import pytest

from ldpsim.evaluation.privacy.gboard_assumptions import GboardAssumptions, implied
from ldpsim.scenarios.cli import main
from tests.cli_cases import expect_clear_refusal


@pytest.mark.slow
def test_gboard_prints_the_librarys_numbers(capsys):
    assert main(["trust", "--gboard", "--assume", "eps0=3", "--assume", "layers=12"]) == 0
    out = capsys.readouterr().out
    assert "\n".join(implied(GboardAssumptions(eps0=3.0, layers=12)).lines()) in out
    assert "which assumptions reach 0.315" in out and "person_reaches_0.315" in out


@pytest.mark.parametrize("argv, names", [
    (["trust", "--gboard", "--assume", "foo=1"], ["foo=1", "eps0"]),
    (["trust", "--assume", "eps0=1"], ["--assume", "--gboard"]),
    (["trust", "--gboard", "--compare"], ["--compare", "--gboard"]),
    (["trust", "--gboard", "--assume", "layers=0"], ["layers"]),
])
def test_gboard_refusals_name_the_option(argv, names, capsys):
    expect_clear_refusal(argv, names, capsys)
