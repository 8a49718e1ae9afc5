"""Every printed table with an ε also prints what one item and one person over the run get
(``epsilon_item``, ``epsilon_person``; docs/math.md §8.7), even on a narrow terminal, and the trust models'
two columns come from their own accountants."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

LEVELS = ("epsilon_item", "epsilon_person")


def _table(columns, rows=3) -> pd.DataFrame:
    return pd.DataFrame({c: (["x"] * rows if c in ("use_case", "aggregation", "model", "design", "discovery",
                                                   "trusted", "trust_model") else np.linspace(0.5, 2, rows))
                         for c in columns})


def _trust_scenario(width):
    from ldpsim.evaluation.privacy.trust_tables import COLUMNS, scenario_lines
    run = SimpleNamespace(settings={"devices": 1000, "days": 30, "delta": 1e-9}, table=_table(COLUMNS))
    return scenario_lines(run, width=width, full=None)


def _trust_comparison(width):
    from ldpsim.evaluation.privacy.trust_tables import COLUMNS, comparison_lines
    comparison = SimpleNamespace(params={"days": 30, "delta": 1e-9, "fleet": "f", "devices": 1000, "domain_size": 10,
                                         "repeats": 2}, table=_table(COLUMNS))
    return comparison_lines(comparison, width=width, full=None)


def _word_discovery(width):
    from ldpsim.mechanisms.bounding import ContributionBound
    from ldpsim.scenarios.studies.trust.word_discovery import COLUMNS, WordDiscoveryComparison
    params = {"fleet": "f", "word_devices": 10, "typed": 8, "epsilon": 4.0, "days": 30, "delta": 1e-9, "seeds": [0],
              "bound": ContributionBound(2, 1, "uniform"), "per_run": None}
    return WordDiscoveryComparison(_table(COLUMNS), pd.DataFrame(), params).lines(width=width, full=None)


PRINTERS = {"ldpsim trust": _trust_scenario, "ldpsim trust --compare": _trust_comparison,
            "ldpsim discover --trust": _word_discovery}


@pytest.mark.parametrize("width", [80, 100, 200])   # 80: the narrowest terminal the tables promise
@pytest.mark.parametrize("printer", list(PRINTERS))
def test_an_eps_table_prints_the_item_and_person_columns(printer, width):
    lines = PRINTERS[printer](width)
    header = lines[1].split()
    shows_eps = any(c.startswith("epsilon") for c in header)
    assert shows_eps or width < 100, f"{printer}: no ε printed at the default width {width}"
    if shows_eps:
        assert set(LEVELS) <= set(header), f"{printer} prints an ε without {LEVELS} at width {width}: {header}"
        text = "\n".join(lines)
        for c in LEVELS:
            assert f"  {c}: " in text                                # and says what each means


def test_an_unbounded_level_is_explained():
    from ldpsim.evaluation.privacy.trust_tables import COLUMNS, scenario_lines
    table = _table(COLUMNS)
    table.loc[0, "epsilon_person"] = math.inf
    run = SimpleNamespace(settings={"devices": 1000, "days": 30, "delta": 1e-9}, table=table)
    assert any(line.strip().startswith("inf in epsilon_person: no finite guarantee")
               for line in scenario_lines(run, width=200, full=None))


def _tee_by_hand(tee, changes, delta):
    """ε of the enclave over ``changes`` unit changes of L∞ at δ: the Gaussian at √changes·L∞ at δ − δ_T."""
    from scipy import optimize, stats
    p1 = stats.norm.sf((tee.threshold - tee.max_per_key) / tee.scale)
    rest = delta - (1 - (1 - p1) ** changes)
    sens = math.sqrt(changes) * tee.max_per_key

    def excess(eps):
        a, b = sens / (2 * tee.scale), eps * tee.scale / sens
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b) - rest
    return optimize.brentq(excess, 1e-9, 60.0, xtol=1e-12)


@pytest.mark.parametrize("reports_per_day", [1, 3])
def test_trust_levels_against_a_hand_computation(reports_per_day):
    """Local LDP: r fresh reports a day, an item may fill all of them (events sampler): item = person =
    days·r·ε₀ by basic composition. The enclave: one key per night for an item, r for the person, one
    person replaced: 2·days and 2·days·r unit changes."""
    from ldpsim.evaluation.privacy.trust_levels import trust_levels
    from ldpsim.evaluation.privacy.trust_models import DEFAULTS
    n, days, delta = 10_000, 20, 1e-9
    ldp = DEFAULTS["ldp"].calibrate(2.0, n, days, delta, reports_per_day)
    got = trust_levels(ldp, n, days, delta, reports_per_day)
    assert got["epsilon_person"] == pytest.approx(days * reports_per_day * ldp.epsilon_report)
    assert got["epsilon_item"] == pytest.approx(got["epsilon_person"])
    tee = DEFAULTS["tee"].calibrate(2.0, n, days, delta, reports_per_day)
    got = trust_levels(tee, n, days, delta, reports_per_day)
    assert got["epsilon_person"] == pytest.approx(_tee_by_hand(tee.tee, 2 * days * reports_per_day, delta), rel=1e-6)
    assert got["epsilon_item"] == pytest.approx(_tee_by_hand(tee.tee, 2 * days, delta), rel=1e-6)
    assert got["epsilon_person"] <= 2.0 * (1 + 1e-6)
    if reports_per_day > 1:
        assert got["epsilon_item"] < got["epsilon_person"]


def test_tune_prints_the_item_and_person_columns_beside_its_eps():
    from ldpsim.scenarios.studies.sweep.tune import TuneResult
    tried = pd.DataFrame({"k": [2], "m": [64], "epsilon": [4.0], "report_bytes": [9], "memory_km": [128],
                          "mean": [0.5], "se": [0.1], "bound": [0.7], "meets": [True], "seconds": [0.1]})
    text = TuneResult("rank_deviation<=1", tried, tried.iloc[0].to_dict()).describe()
    header = text.splitlines()[0].split()
    assert header[header.index("epsilon"):header.index("epsilon") + 3] == ["epsilon", *LEVELS]
    assert "a device sends one" in text
