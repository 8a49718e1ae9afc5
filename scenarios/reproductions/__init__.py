"""Reproductions of published figures as scenarios, one command each (``ldpsim reproduce NAME``).

Every reproduction is a small shipped scenario file whose ``[reproduction]`` table names it (e.g.
``sdldp-fig5``, ``rr-survey``: the names ``ldpsim scenarios`` lists) and its ``kind`` — the computation
in :data:`KINDS` — beside its parameters.
:func:`reproduce` validates the file, computes a tidy table, draws the figure and writes
``NAME.csv``, ``NAME.png``, ``NAME.svg`` and ``NAME.json`` (resolved config and runtime).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ldpsim.scenarios.reproductions import sdldp_adversary, sdldp_frequency, sdldp_numeric, sdldp_theory
from ldpsim.scenarios.reproductions import seed001_rr, seed002_central, seed004_quadtree, triehh_sfp
from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.reproductions.sdldp import Kind, load_reproduction, shrink, write_outputs
from ldpsim.runtime.runfolder import Layout

#: reproductions accumulate figures by name in one folder: resumed, never cleared
LAYOUT = Layout("reproduce", ("*.csv", "*.png", "*.svg", "*.json", "report.html"))

#: kind (as written in a scenario file) → how to compute, draw and summarize it
KINDS: dict[str, Kind] = {
    "frequency-variance": sdldp_theory.FIG2,
    "numeric-variance": sdldp_theory.FIG4,
    "frequency-mse": sdldp_frequency.KIND,
    "mean-mse": sdldp_numeric.KIND,
    "adversary": sdldp_adversary.KIND,
    "rr-survey": seed001_rr.KIND,
    "central-vs-local": seed002_central.KIND,
    "quadtree-budget": seed004_quadtree.KIND,
    "triehh-fig4": triehh_sfp.KIND,
}


def available() -> dict[str, Path]:
    """Reproduction name → scenario file: the shipped scenarios of kind ``reproduction``, by name."""
    from ldpsim.scenarios.catalog import listing, shipped
    paths = shipped()
    return {name: paths[name] for name, kind, _ in listing() if kind == "reproduction"}


def reproduction_file(name_or_path) -> tuple[Path, str | None]:
    """The file of a reproduction name (or its file's older stem, with a note), or a ``.toml`` path.

    Raises
    ------
    InputError
        Neither a reproduction's name nor an existing ``.toml`` file.
    """
    from ldpsim.scenarios.catalog import lookup
    text = str(name_or_path)
    if text.endswith(".toml") and Path(text).is_file():
        return Path(text), None
    try:
        path, note = lookup(text, "reproduction")
    except ScenarioError:
        path, note = None, None
    if path is None or path not in available().values():
        raise InputError(f"Unknown reproduction {text!r}; choose one of {', '.join(available())}, or all, "
                         "or give a reproduction .toml file")
    return path, note


@dataclass(frozen=True)
class Reproduction:
    """What one run produced: its resolved config, table, short summary, files and runtime."""

    config: dict
    table: pd.DataFrame
    summary: pd.DataFrame
    paths: list
    runtime_s: float


def reproduce(name_or_path, out, repeats: int | None = None, quick: bool = False,
              seed: int | None = None) -> Reproduction:
    """Run one reproduction (a name from :func:`available` or a scenario file path) into ``out``.

    ``repeats`` overrides the file's repeats; ``quick`` shrinks repeats, n, EM bins and the ε grid
    (see :func:`.sdldp.shrink`) for a smoke run; ``seed`` overrides the file's root entropy. Raises
    :class:`ldpsim.scenarios.studies.scenario.schema.ScenarioError` for a broken file, ``InputError`` for an
    unknown name or a bad ``repeats`` or ``seed``.
    """
    path, _ = reproduction_file(name_or_path)
    for key, value, low in (("repeats", repeats, 1), ("seed", seed, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise InputError(f"reproduce: {key} (--{key}) must be an integer >= {low}; got {value!r}")
    config = shrink(load_reproduction(path, KINDS), quick, repeats)
    if seed is not None:
        config["seed"] = seed
    kind = KINDS[config["kind"]]
    start = time.perf_counter()
    table = kind.compute(config)
    paths, runtime = write_outputs(table, kind.figure(table, config), config, out, start)
    return Reproduction(config, table, kind.summary(table, config), paths, runtime)


@dataclass(frozen=True)
class Reproductions:
    """What :func:`reproduce_into` returns: the folder, one :class:`Reproduction` per name, the report."""

    out: Path
    runs: list
    html: Path
    notes: list

    def describe(self) -> str:
        """The lines ``ldpsim reproduce`` prints: each reproduction's summary, runtime and files."""
        lines = []
        with pd.option_context("display.width", 160, "display.max_columns", 20, "display.precision", 4):
            for result in self.runs:
                quick = " (--quick)" if result.config.get("quick") else ""
                lines += [f"== {result.config['name']}: {result.config['title']}", str(result.summary),
                          f"runtime {result.runtime_s:.1f} s{quick}; wrote " + ", ".join(map(str, result.paths))]
        return "\n".join(lines + [f"report: {self.html}"])


def reproduce_into(names, out, *, repeats: int | None = None, quick: bool = False,
                   seed: int | None = None) -> Reproductions:
    """Run the reproductions ``names`` (names, older file stems, ``.toml`` paths, or ``"all"``) into ``out``.

    ``out`` is a locked run folder of kind ``"reproduce"`` (new, empty, or holding earlier
    reproductions: figures accumulate by name); every name is checked before anything runs.
    """
    from ldpsim.evaluation.report.html import report_from_run_dir
    from ldpsim.runtime.runfolder import RunFolder
    names = [names] if isinstance(names, (str, Path)) else list(names)
    names = list(available()) if names == ["all"] else names
    files = [reproduction_file(n) for n in names]
    for path, _ in files:  # every file valid before the folder is touched
        load_reproduction(path, KINDS)
    notes = [note for _, note in files if note]
    out = Path(out)
    with RunFolder.open(out, LAYOUT, {"fingerprint": "reproductions"}, resume=True) as folder:
        runs = [reproduce(path, out, repeats=repeats, quick=quick, seed=seed) for path, _ in files]
        html = report_from_run_dir(out, title="ldpsim reproductions")
        folder.finalize(adopt=True)
    return Reproductions(out, runs, html, notes)
