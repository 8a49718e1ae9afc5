"""``ldpsim.poison``: a library call; a closed-form check without power says so; the folder is owned
like a run's; names that become paths stay plain; costs are refused before spending (docs/math.md §11.4)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldpsim
from ldpsim.evaluation.cost import CostError
from ldpsim.scenarios.studies.poisoning.experiment import power_check
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.runtime.runfolder import RunFolderError
from ldpsim.scenarios.cli import main

TINY = """
[poisoning]
seed = 1
repeats = 4
n = 2000
domain_size = 8
targets = 2
mechanisms = ["grr", "oue"]
attacks = ["mga"]
defenses = ["none"]
epsilon = [1.0]
beta = [0.05]
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


def _table(repeats: int, cells: int) -> pd.DataFrame:
    return pd.DataFrame({"defense": ["none"] * cells, "z": [0.5] * cells, "repeats": [repeats] * cells,
                         "gain_se": [0.01] * cells, "closed_form": [0.1] * cells})


def test_two_repeats_are_not_a_check(tiny, tmp_path, capsys):
    """The defect: `--repeats 2` printed "all agree" against a bound of 28 648 standard errors."""
    assert main(["poison", str(tiny), "--repeats", "2", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "not checked: too few repeats (2)" in out and "all agree" not in out
    check = power_check(_table(2, 450))
    assert not check["checked"] and check["bound"] > 28_000 and check["repeats_needed"] == 35
    assert power_check(_table(40, 450))["checked"]  # the shipped scenario's 40 repeats over 450 cells


def test_power_is_the_rejection_rate_at_one_standard_deviation():
    """Monte Carlo: r = 8 repeats off by one σ, t-test at the check's bound (3 cells): the rejection rate
    matches the stated power (binomial, α = 1e-4 two-sided)."""
    r, cells, sims = 8, 3, 4000
    rng = np.random.default_rng(3)
    x = rng.normal(1.0, 1.0, size=(sims, r))
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(r))
    bound = stats.t.isf(0.01 / (2 * cells), r - 1)
    rate = np.mean(np.abs(t) > bound)
    power = power_check(_table(r, cells))["power"]
    assert abs(rate - power) <= stats.norm.isf(5e-5) * math.sqrt(power * (1 - power) / sims)


@pytest.mark.slow
def test_the_folder_is_owned_like_a_run(tiny, tmp_path, capsys):
    out = tmp_path / "same"
    assert main(["poison", str(tiny), "--out", str(out), "-q"]) == 0
    first = (out / "poisoning.csv").read_text()
    other = tmp_path / "other.toml"
    other.write_text(TINY.replace("seed = 1", "seed = 2"), encoding="utf-8")
    assert main(["poison", str(other), "--out", str(out), "-q"]) == 2
    assert "--force" in capsys.readouterr().err and (out / "poisoning.csv").read_text() == first
    assert main(["poison", str(tiny), "--out", str(out), "-q"]) == 0  # the same experiment may rerun
    assert main(["poison", str(other), "--out", str(out), "-q", "--force"]) == 0
    assert (out / "poisoning.csv").read_text() != first


@pytest.mark.parametrize("name", ["../../x", "/tmp/ldpsim-abs", "a/b", ".hidden", ""])
def test_names_that_become_paths_are_plain(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "p.toml"
    path.write_text(TINY.replace("seed = 1", f"seed = 1\nname = {name!r}"), encoding="utf-8")
    assert main(["poison", str(path), "-q"]) == 2
    assert "must be a plain name" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() and not (tmp_path.parent / "x").exists()
    fleet = tmp_path / "f.toml"
    fleet.write_text(f'[poisoning_fleet]\nname = {name!r}\n', encoding="utf-8")
    with pytest.raises(ScenarioError, match="must be a plain name"):
        ldpsim.poison(fleet)


@pytest.mark.parametrize("argv, message", [
    (["{tiny_huge}"], "at most repeats = 1,000,000 fit"),
    (["--deployment", "--devices", "1000000000000"], "at most about"),
    (["--deployment", "--devices", "300", "--days", "2", "--fakes", "10000000"], "at most 1,111,111 fakes"),
    (["{tiny}", "--repeats", "1"], "--repeats must be an integer >= 2"),
])
def test_costs_are_refused_before_spending(argv, message, tiny, tmp_path, capsys):
    huge = tmp_path / "huge.toml"
    huge.write_text(TINY.replace("repeats = 4", "repeats = 1_000_000_000"), encoding="utf-8")
    argv = [a.format(tiny=tiny, tiny_huge=huge) for a in argv]
    assert main(["poison", *argv, "--out", str(tmp_path / "o"), "-q"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o" / "poisoning.csv").exists()


@pytest.mark.slow
def test_notebook_and_command_line_print_the_same(tiny, tmp_path, capsys):
    result = ldpsim.poison(tiny)
    assert result.kind == "population" and result.out is None and len(result.table) == 2
    assert main(["poison", str(tiny), "--out", str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr().out.splitlines()
    table = result.lines()[:3]  # header and the two rows; the lines after name each side's own CSV file
    assert printed[:3] == table and all(line in printed for line in result.lines() if line.startswith("epsilon:"))
    assert result.check["message"] in printed
    written = result.to_folder(tmp_path / "nb")
    assert pd.read_csv(written / "poisoning.csv")["gain"].tolist() == pd.read_csv(
        tmp_path / "cli" / "poisoning.csv")["gain"].tolist()
    with pytest.raises(RunFolderError):
        ldpsim.poison(tiny, seed=5).to_folder(tmp_path / "nb")
    with pytest.raises(CostError):
        ldpsim.poison(tiny, repeats=10**9)
