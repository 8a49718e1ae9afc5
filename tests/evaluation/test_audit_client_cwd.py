"""``ldpsim audit --client MODULE:FUNC`` finds a module in the current folder, as ``python -c`` would."""

from __future__ import annotations

import sys
import uuid

from ldpsim.evaluation.audit import load_callable
from ldpsim.scenarios.cli import main

CLIENT = '''from ldpsim.mechanisms import GRR


def perturb(values, rng):
    return GRR(1.0, 3).perturb(values, rng)
'''


def _module_in(folder) -> str:
    name = f"team_client_{uuid.uuid4().hex}"
    (folder / f"{name}.py").write_text(CLIENT, encoding="utf-8")
    return name


def test_client_module_in_the_current_folder_is_found(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path_before = list(sys.path)
    name = _module_in(tmp_path)
    assert main(["audit", "--client", f"{name}:perturb", "--epsilon", "1", "--domain-size", "3",
                 "--trials", "20000", "-q"]) == 0
    assert "PASS" in capsys.readouterr().out
    assert sys.path == path_before  # the folder is searched for this import only


def test_load_callable_searches_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert callable(load_callable(f"{_module_in(tmp_path)}:perturb"))
