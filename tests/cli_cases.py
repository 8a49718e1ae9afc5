"""The command-line tests' shared pieces: a command's own argument parser, and a command line whose
placeholders ({RUN}, {SWEEP}, {DIR}, {OUT}) point at a small scenario, a sweep and folders in ``tmp_path``."""

from __future__ import annotations

import argparse

from ldpsim.scenarios.cli import build_parser, main
from tests.fleets import SWEEP, TINY


def command_parser(command: str) -> argparse.ArgumentParser:
    """The subparser of ``ldpsim COMMAND``."""
    sub = next(a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def fill_placeholders(argv, tmp_path):
    """``argv`` with its placeholders replaced (the scenario files written into ``tmp_path``)."""
    (tmp_path / "run.toml").write_text(TINY, encoding="utf-8")
    (tmp_path / "sweep.toml").write_text(SWEEP, encoding="utf-8")
    subst = {"{RUN}": str(tmp_path / "run.toml"), "{SWEEP}": str(tmp_path / "sweep.toml"), "{DIR}": str(tmp_path),
             "{OUT}": str(tmp_path / "out")}
    return [subst.get(a, a).replace("{DIR}", str(tmp_path)) for a in argv]


def expect_clear_refusal(argv, names, capsys):
    """``main(argv)`` exits 2, without a traceback, naming each of ``names`` in its message."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, f"exit {code} for {argv}: {err[-600:]}"
    assert "Traceback" not in err and "internal error" not in err, err
    for name in names:
        assert name in err, f"{name!r} not named in: {err}"
