"""Shared machinery of the SDLDP paper reproductions (seed 000): scenario files, high sets, outputs.

A reproduction scenario file (``scenarios/sdldp_*.toml``) has two tables, both validated by
:func:`ldpsim.scenarios.studies.scenario.schema.parse_table` before anything runs::

    [reproduction]            # what is reproduced (common to every figure)
    name = "sdldp-fig5"
    kind = "frequency-mse"    # which computation: see ldpsim.scenarios.reproductions.KINDS
    title = "Fig. 5: frequency MSE vs ε, 25 % high-sensitivity values"
    seed = 5                  # root entropy (ignored by the purely theoretical kinds)

    [parameters]              # the kind's own parameters (ε grid, n, repeats, mechanisms, ...)
    epsilon = [0.1, 0.2, 0.5, 1.0]

Mechanism labels follow the paper (section 5.1.3): ``GRR``, ``URR-25`` (|X_S| = 25 % of the domain),
``SDGRR-25`` (|X_H| = 25 %), ``SDGRR-Personalized``, ``PM``, ``PM+EM``, ``SDPM-50`` (high range 50 %),
``SDPM-Personalized``. A share s of a D-value domain means ``round(s·D)`` values (as
:mod:`ldpsim.scenarios.studies.scenario.grid` rounds ``high_fraction``); which values is the scenario's ``high_choice``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd
from matplotlib.figure import Figure

from ldpsim.scenarios.studies.scenario.schema import Field, ScenarioError, load_toml, parse_table, require_kind
from ldpsim.evaluation.report.plots import FORMATS
from ldpsim.runtime.plain import plain_name

#: how the high-sensitivity (or URR-sensitive) values are chosen among the categories
HIGH_CHOICES = ("least-frequent", "most-frequent")
#: a mechanism label: a name and an optional share in per cent, or "Personalized"
LABEL = re.compile(r"^(GRR|URR|SDGRR|PM|PM\+EM|SDPM)(?:-(\d{1,2}|Personalized))?$")
#: the kind of guarantee each base label's ε is (docs/math.md §8.1); the figures mark it in their legends,
#: since the paper draws unlike guarantees on one ε axis
GUARANTEE_OF = {"GRR": "ε-LDP", "PM": "ε-LDP", "PM+EM": "ε-LDP", "URR": "ε-ULDP", "SDGRR": "ε-SDLDP",
                "SDPM": "ε-SDLDP"}
#: the x label of a figure whose curves hold several kinds of guarantee
MIXED_EPSILON_AXIS = "ε (each curve's own guarantee, marked in the legend)"


def marked(label: str) -> str:
    """A legend entry with its guarantee kind: ``marked("SDGRR-25") == "SDGRR-25 (ε-SDLDP)"``."""
    return f"{label} ({GUARANTEE_OF[LABEL.match(label).group(1)]})"


#: parameters reduced by ``--quick`` (to at most these values) and the ε grid (to its two ends)
QUICK_LIMITS = {"repeats": 2, "n": 4000, "bins": 16}


# ---- checks used by the kinds' parameter specs --------------------------------------------------
def positive(v):
    return None if v >= 1 else "must be >= 1"


def epsilons(v):
    if not v or not all(isinstance(e, (int, float)) and not isinstance(e, bool) and e > 0 for e in v):
        return "must be a non-empty list of positive numbers"
    return None if list(v) == sorted(set(v)) else "must be strictly increasing"


def shares(v):
    if not v or not all(isinstance(s, (int, float)) and not isinstance(s, bool) and 0 < s < 1 for s in v):
        return "must be a non-empty list of shares strictly between 0 and 1"
    return None


def weights(v):
    if not v or not all(isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 for s in v):
        return "must be a non-empty list of positive weights"
    return None


def one_of_each(choices):
    def check(v):
        bad = [x for x in v if x not in choices] if v else ["(empty)"]
        return f"must be a non-empty list of {', '.join(map(repr, choices))}; bad entry {bad[0]!r}" if bad else None
    return check


def labels(allowed_names):
    """Check a list of mechanism labels (see the module docstring) against the allowed base names."""
    def check(v):
        for label in v or ["(empty)"]:
            m = LABEL.match(label) if isinstance(label, str) else None
            if not m or m.group(1) not in allowed_names:
                return f"entry {label!r} is not a label of {', '.join(allowed_names)} (e.g. 'SDGRR-25')"
            needs_share = m.group(1) in ("URR", "SDGRR", "SDPM")
            if needs_share != (m.group(2) is not None):
                return f"entry {label!r}: URR, SDGRR and SDPM take a share ('-25') or '-Personalized'; others none"
            if m.group(1) == "URR" and m.group(2) == "Personalized":
                return f"entry {label!r}: URR has no personalized variant"
        return None
    return check


def same_length(a: str, b: str):
    """A cross-key check: the lists ``a`` and ``b`` have the same length."""
    def check(params):
        if len(params[a]) != len(params[b]):
            return b, f"must have one entry per entry of {a!r} ({len(params[a])}); got {len(params[b])}"
        return None
    return check


def parse_label(label: str) -> tuple[str, float | str | None]:
    """``"SDGRR-25"`` → ``("SDGRR", 0.25)``; ``"SDPM-Personalized"`` → ``("SDPM", "Personalized")``."""
    name, share = LABEL.match(label).groups()
    if share is None or share == "Personalized":
        return name, share
    return name, int(share) / 100


def n_of(share: float, domain_size: int) -> int:
    """Number of values in a share of the domain: ``round(share·D)``, at least 1 and at most D − 1."""
    return min(max(int(round(share * domain_size)), 1), domain_size - 1)


def high_ids(share: float, domain_size: int, choice: str) -> tuple[int, ...]:
    """The high-sensitivity ids of a share of a domain whose ids are in rank order (0 = most frequent)."""
    k = n_of(share, domain_size)
    return tuple(range(k)) if choice == "most-frequent" else tuple(range(domain_size - k, domain_size))


# ---- scenario files -----------------------------------------------------------------------------
REPRODUCTION_SPEC = {
    "name": Field(str, check=plain_name,
                  help="the name given to `ldpsim reproduce`, and of its output files"),
    "kind": Field(str, help="which computation (see `ldpsim reproduce --list`)"),
    "title": Field(str, help="the figure's title"),
    "seed": Field(int, 0, lambda v: None if v >= 0 else "must be >= 0", "root entropy of the run"),
}
TOP_SPEC = {"reproduction": Field(dict), "parameters": Field(dict)}


@dataclass(frozen=True)
class Kind:
    """One kind of reproduction: its parameter spec and its three steps (compute, draw, summarize)."""

    spec: dict  # parameter name → ldpsim.scenarios.studies.scenario.schema.Field
    compute: Callable[[dict], pd.DataFrame]  # resolved config → tidy table
    figure: Callable[[pd.DataFrame, dict], Figure]
    summary: Callable[[pd.DataFrame, dict], pd.DataFrame]  # the short table printed after a run
    doc: str = ""
    check: Callable[[dict], tuple[str, str] | None] | None = None  # cross-key check → (key, problem)


def load_reproduction(path, kinds: dict[str, Kind]) -> dict:
    """Read and validate a reproduction file; returns the resolved config (one flat dict)."""
    raw = load_toml(path)
    require_kind(raw, "reproduction", path)
    top = parse_table(raw, TOP_SPEC, "", path)
    head = parse_table(top["reproduction"], REPRODUCTION_SPEC, "reproduction", path)
    if head["kind"] not in kinds:
        raise ScenarioError(path, "reproduction.kind", f"must be one of {', '.join(sorted(kinds))}; "
                                                       f"got {head['kind']!r}")
    kind = kinds[head["kind"]]
    params = parse_table(top["parameters"], kind.spec, "parameters", path)
    problem = kind.check(params) if kind.check else None
    if problem:
        raise ScenarioError(path, f"parameters.{problem[0]}", problem[1])
    return {**head, **params, "file": str(path)}


def shrink(config: dict, quick: bool = False, repeats: int | None = None) -> dict:
    """Apply ``--repeats`` and ``--quick`` (tiny repeats, n, bins; the ε grid's two ends)."""
    out = dict(config)
    if quick:
        for key, limit in QUICK_LIMITS.items():
            if key in out:
                out[key] = min(out[key], limit)
        out["epsilon"] = sorted({out["epsilon"][0], out["epsilon"][-1]})
    if repeats is not None and "repeats" in out:
        out["repeats"] = repeats
    out["quick"] = quick
    return out


# ---- outputs ------------------------------------------------------------------------------------
def new_figure(n_panels: int, width: float = 5.0, height: float = 3.8, top: float = 0.85) -> tuple[Figure, list]:
    """Panels of ``width`` × ``height`` inches (2 × 2 for four, else one row), ``top`` inches above.

    Built on :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state); the margins are fixed
    in inches instead of ``tight_layout``, which would draw every figure twice.
    """
    ncols = 2 if n_panels == 4 else n_panels
    nrows = -(-n_panels // ncols)
    fig = Figure(figsize=(width * ncols, height * nrows + 0.3))
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(n_panels)]
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=0.75 / w, right=1 - 0.15 / w, bottom=0.5 / h, top=1 - top / h,
                        wspace=0.9 / width, hspace=1.3 / height)
    return fig, axes


def write_outputs(table: pd.DataFrame, fig: Figure, config: dict, out, start: float) -> tuple[list[Path], float]:
    """Write ``NAME.csv`` (tidy table), ``NAME.png``/``.svg`` and ``NAME.json`` (config and runtime).

    The runtime is measured from ``start`` (a ``time.perf_counter()`` value) to the last figure
    written; returns the paths and that runtime in seconds.
    """
    from ldpsim.runtime.durable import make_dirs, write_file, write_text
    out = make_dirs(Path(out))
    name = config["name"]
    paths = [write_file(out / f"{name}.csv", lambda tmp: table.to_csv(tmp, index=False, float_format="%.6g"))]
    for fmt in FORMATS:
        paths.append(write_file(out / f"{name}.{fmt}", lambda tmp, fmt=fmt: fig.savefig(tmp, dpi=100, format=fmt)))
    runtime = time.perf_counter() - start
    paths.append(write_text(out / f"{name}.json", json.dumps({**config, "runtime_s": round(runtime, 2)}, indent=1)))
    return paths, runtime
