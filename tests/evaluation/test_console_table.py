"""Console tables fit a terminal: the columns that fit, the first rows, and where the full table is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldpsim.scenarios.studies.deployment.compare import Comparison
from ldpsim.scenarios.studies.poisoning.experiment import PoisonResult
from ldpsim.evaluation.console_table import HEAD_ROWS, cell, console_lines, fitted_columns


def _wide(rows: int, cols: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {"name": [f"design {i}" for i in range(rows)]}
    for j in range(cols):
        data[f"column_{j}"] = rng.normal(scale=10.0 ** rng.integers(-3, 7), size=rows)
    data["who"] = ["the secure-aggregation protocol (no server–device collusion)"] * rows
    return pd.DataFrame(data)


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_lines_fit_the_width_and_say_what_was_left_out(width):
    table = _wide(980, 30)
    lines = console_lines(table, width=width, full="poisoning.csv", notes=["a note " * 40])
    assert all(len(line) <= width for line in lines), max(lines, key=len)
    shown = fitted_columns(table, width=width)
    assert shown[0] == "name" and len(shown) < table.shape[1]
    assert lines[0].split() == shown                                   # header: the fitted columns, in order
    assert len(lines) <= 1 + HEAD_ROWS + 20                             # header, rows, footer and notes
    footer = " ".join(" ".join(lines[1 + HEAD_ROWS:]).split())
    assert "960 more rows" in footer and f"{table.shape[1] - len(shown)} more columns" in footer
    assert "full table in poisoning.csv" in footer


def test_a_table_that_fits_is_printed_whole_without_a_footer():
    table = pd.DataFrame({"model": ["ldp", "secagg"], "rmse": [6630.615, 151.2237], "devices": [50_000, 45_081]})
    lines = console_lines(table, width=80, full="x.csv", head=None)
    assert lines == ["model    rmse  devices", "ldp      6631   50,000", "secagg  151.2   45,081"]


def test_cells():
    assert cell(10_800) == "10,800" and cell(10_800.0) == "10,800" and cell(0.000123456) == "0.0001235"
    assert cell(float("nan")) == "nan" and cell(float("inf")) == "inf" and cell(True) == "True"
    assert cell("x" * 100).endswith("…") and len(cell("x" * 100)) == 30


def test_poison_result_prints_the_head_of_a_long_table(monkeypatch):
    """A fleet experiment of 980 rows printed every one of them."""
    monkeypatch.setenv("COLUMNS", "100")
    table = _wide(980, 12).rename(columns={"name": "mechanism"})
    lines = PoisonResult("fleet", table).lines()
    assert len(lines) <= HEAD_ROWS + 4 and all(len(line) <= 100 for line in lines)
    text = " ".join(" ".join(lines).split())
    assert "960 more rows" in text and "full table in fakes.csv" in text


def test_compare_prints_a_titled_table_that_fits(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    cols = ("design", "mechanism", "memoize", "epsilon", "epsilon_report", "epsilon_permanent", "epsilon_device",
            "epsilon_central", "share_mse_top10", "share_mse_top10_theory", "mse_low", "mse_high", "top10_precision",
            "rank_error",
            "slang_first_day", "bytes_per_device", "server_cells")
    table = pd.DataFrame({c: [1.2345678, 2.5] if c not in ("design", "mechanism") else ["cms", "olh"] for c in cols})
    result = Comparison(table, pd.DataFrame(), {"per": "device", "epsilon": 8.0, "days": 30, "devices": 10_800,
                                                "seed": 1})
    lines = result.lines()
    assert lines[0].startswith("Designs at the same budget: ε = 8 per device over 30 days")
    assert all(len(line) <= 100 for line in lines[1:])
    assert "full table in compare.csv" in " ".join(" ".join(lines[-3:]).split())
    # the theory's 95 % interval the how-to promises is printed beside the measured MSE and its theory
    assert lines[1].split()[:6] == ["design", "epsilon_device", "share_mse_top10", "share_mse_top10_theory",
                                    "mse_low", "mse_high"]
