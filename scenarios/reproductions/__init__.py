"""Reproductions of published figures as scenarios, one command each (``ldpsim reproduce NAME``).

Every reproduction is a small scenario file ``scenarios/<name with _>.toml`` (e.g. ``sdldp_fig5.toml``
for ``sdldp-fig5``) naming its ``kind`` — the computation in :data:`KINDS` — and its parameters.
:func:`reproduce` validates the file, computes a tidy table, draws the figure and writes
``NAME.csv``, ``NAME.png``, ``NAME.svg`` and ``NAME.json`` (resolved config and runtime).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ldpsim.scenarios.reproductions import sdldp_adversary, sdldp_frequency, sdldp_numeric, sdldp_theory
from ldpsim.scenarios.reproductions import seed001_rr, seed002_central, seed004_quadtree
from ldpsim.scenarios.reproductions.sdldp import Kind, load_reproduction, shrink, write_outputs

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
}
#: reproductions of the other seeds: name → scenario file (the SDLDP ones are found by file name)
SEED_REPRODUCTIONS = {"rr-survey": "seed001_rr.toml", "central-vs-local": "seed002_central.toml",
                      "quadtree-budget": "seed004_quadtree.toml"}
#: where the reproduction scenario files live
SCENARIO_DIR = Path(__file__).resolve().parent.parent


def available() -> dict[str, Path]:
    """Reproduction name → scenario file: every ``sdldp_*.toml`` beside the scenarios package, then
    :data:`SEED_REPRODUCTIONS`."""
    found = {p.stem.replace("_", "-"): p for p in sorted(SCENARIO_DIR.glob("sdldp_*.toml"))}
    return {**found, **{name: SCENARIO_DIR / file for name, file in SEED_REPRODUCTIONS.items()}}


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
    (see :func:`.sdldp.shrink`) for a smoke run; ``seed`` overrides the file's root entropy. Raises :class:`ldpsim.evaluation.scenario.schema.ScenarioError`
    for a broken file and ``ValueError`` for an unknown name.
    """
    known = available()
    path = known.get(str(name_or_path), Path(name_or_path))
    if str(name_or_path) not in known and not path.suffix == ".toml":
        raise ValueError(f"Unknown reproduction {name_or_path!r}; choose one of {sorted(known)} or give a .toml file.")
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise ValueError(f"The 'repeats' parameter of reproduce must be an int >= 1. Got {repeats!r} instead.")
    config = shrink(load_reproduction(path, KINDS), quick, repeats)
    if seed is not None:
        config["seed"] = seed
    kind = KINDS[config["kind"]]
    start = time.perf_counter()
    table = kind.compute(config)
    paths, runtime = write_outputs(table, kind.figure(table, config), config, out, start)
    return Reproduction(config, table, kind.summary(table, config), paths, runtime)
