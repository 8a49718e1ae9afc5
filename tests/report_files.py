"""A run folder shaped like ``ldpsim run``'s, for the HTML report's tests (unit and browser), with text that
would break the page if the report did not escape it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

#: text that would break out of a <pre> block or run a script if the report did not escape it
HOSTILE = "</pre><script>alert('x')</script>"


def small_figure(title="tiny figure") -> Figure:
    """A 3 × 2 inch line plot titled ``title``."""
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 9], marker="o")
    ax.set_title(title)
    return fig


def put(path: Path, write) -> None:
    """Write a file as a run does (:mod:`ldpsim.runtime.durable`): the report embeds only files the run wrote.
    ``write`` is text, or a callable filling the temporary path."""
    from ldpsim.runtime.durable import write_file, write_text
    write_file(path, write) if callable(write) else write_text(path, write)


def make_run_dir(root: Path) -> Path:
    """A run folder shaped like ``ldpsim run``'s: config, report.md, CSV (+ Parquet twin), JSON, plots."""
    root.mkdir(parents=True, exist_ok=True)
    put(root / "config.json", json.dumps({"seed": 2026, "note": HOSTILE}))
    put(root / "scenario.toml", '[deployment]\nseed = 2026\n')
    put(root / "report.md", "# Deployment run\n\n```\nrank  true\n1     0.5\n```\n\n![fig](plots/fig.png)\n")
    table = pd.DataFrame({"item": ["a", HOSTILE, "c"], "share": [0.5, 0.3, 0.2]})
    put(root / "top.csv", lambda p: table.to_csv(p, index=False))
    put(root / "top.parquet", table.to_parquet)
    put(root / "days.parquet", pd.DataFrame({"day": range(3)}).to_parquet)
    put(root / "summary.json", json.dumps({"devices": 10}))
    (root / "plots").mkdir(exist_ok=True)
    put(root / "plots" / "fig.png", lambda p: small_figure().savefig(p, dpi=60, format="png"))
    put(root / "plots" / "vector.svg", lambda p: small_figure("svg only").savefig(p, format="svg"))
    put(root / "plots" / "fig.svg", lambda p: small_figure().savefig(p, format="svg"))  # PNG twin: not embedded twice
    return root
