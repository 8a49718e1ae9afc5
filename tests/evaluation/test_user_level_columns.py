"""Every printed table with an ε also prints what one item and one person over the run get
(``epsilon_item``, ``epsilon_person``; docs/math.md §8.7), even on a narrow terminal, and the trust models'
two columns come from their own accountants."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tests.by_hand import tee_epsilon_by_hand

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


def _trust_comparison_discovery(width):
    from ldpsim.evaluation.privacy.trust_tables import DISCOVERY_COLUMNS, discovery_lines
    from ldpsim.mechanisms.bounding import ContributionBound
    params = {"days": 30, "delta": 1e-9, "fleet": "f", "typed": 8, "bound": ContributionBound(2, 1, "uniform"),
              "discovery_seed": 0}
    return discovery_lines(_table(DISCOVERY_COLUMNS), params, width=width, full=None)


def _word_discovery(width):
    from ldpsim.mechanisms.bounding import ContributionBound
    from ldpsim.scenarios.studies.trust.word_discovery import COLUMNS, WordDiscoveryComparison
    params = {"fleet": "f", "word_devices": 10, "typed": 8, "epsilon": 4.0, "days": 30, "delta": 1e-9, "seeds": [0],
              "bound": ContributionBound(2, 1, "uniform"), "per_run": None}
    return WordDiscoveryComparison(_table(COLUMNS), pd.DataFrame(), params).lines(width=width, full=None)


PRINTERS = {"ldpsim trust": _trust_scenario, "ldpsim trust --compare": _trust_comparison,
            "ldpsim trust --compare (discovery)": _trust_comparison_discovery,
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
    assert got["epsilon_person"] == pytest.approx(tee_epsilon_by_hand(tee.tee, 2 * days * reports_per_day, delta), rel=1e-6)
    assert got["epsilon_item"] == pytest.approx(tee_epsilon_by_hand(tee.tee, 2 * days, delta), rel=1e-6)
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


# --- the tables whose every row is one report a device: sweep, accuracy, poison, audit, the report page ---

def _levels_of(epsilon):
    from ldpsim.evaluation.privacy.levels import levels
    g = levels(epsilon, reports_per_day=1, days=1)
    return g.epsilon_item, g.epsilon_person


def _fits(lines, width):
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]


def test_the_helper_puts_levels_values_right_after_the_eps():
    """level_columns.beside is levels() of one report, inserted right after the ε it reads."""
    from ldpsim.evaluation.privacy.level_columns import beside, one_report
    table = pd.DataFrame({"mechanism": ["grr", "oue", "rappor"], "epsilon_report": [0.5, 2.0, 0.2654],
                          "gain": [0.1, 0.2, 0.3]})
    shown = beside(table, "epsilon_report")
    assert list(shown.columns) == ["mechanism", "epsilon_report", *LEVELS, "gain"]
    for e, item, person in zip(shown["epsilon_report"], shown["epsilon_item"], shown["epsilon_person"]):
        assert (item, person) == pytest.approx(_levels_of(e))
    # more reports a device: the composed scopes of the same function, never the one report's ε
    from ldpsim.evaluation.privacy.levels import levels
    assert one_report(0.5, reports_per_day=3, days=10)["epsilon_person"] == levels(0.5, 3, 10).epsilon_person == 15.0


def test_sweep_cells_and_their_report_carry_the_levels(tmp_path):
    """Every row a sweep stores carries epsilon_item / epsilon_person (one report a user); its report
    page's results show them with what they mean."""
    import ldpsim
    from ldpsim.scenarios.studies.sweep.sweep_report import report_sweep, sweep_results
    from ldpsim.scenarios.studies.sweep.store import RunStore
    path = tmp_path / "tiny.toml"
    path.write_text('[scenario]\nname = "tiny"\nseed = 1\nrepeats = 2\npath = "direct"\ntop = 5\n'
                    '[workload]\nname = "harmonic"\nn = 2000\ndomain_size = 20\n[[mechanism]]\nname = "grr"\n'
                    '[grid]\nepsilon = [0.5, 2.0]\n[metrics]\nnames = ["mse"]\n')
    ldpsim.sweep(str(path), out=tmp_path / "run", workers=1)
    summary = RunStore(tmp_path / "run").read("summary")
    assert set(LEVELS) <= set(summary.columns)
    for row in summary.drop_duplicates("epsilon_report").itertuples():
        assert (row.epsilon_item, row.epsilon_person) == pytest.approx(_levels_of(row.epsilon_report))
    assert set(LEVELS) <= set(sweep_results(tmp_path / "run").columns)
    page = report_sweep(tmp_path / "run").read_text(encoding="utf-8")
    assert "one item of one person (epsilon_item)" in page and "ε of one person (run)" in page


def test_accuracy_prints_the_levels_of_each_rows_one_report(monkeypatch):
    from ldpsim.scenarios.studies.bench import accuracy
    monkeypatch.setattr(accuracy, "ROWS", [("RAPPOR", "rappor", {"epsilon": 4.0}, 20), ("GRR ε = 1", "grr",
                                                                                        {"epsilon": 1.0}, 10)])
    printed = []
    table = accuracy.accuracy_table(300, 2, report=printed.append)
    header = [c.strip() for c in accuracy.markdown_header(300, 2)[0].split("|")]
    assert header[-4:-1] == ["epsilon_report", *LEVELS]
    assert "epsilon_person" in accuracy.MARKDOWN_NOTE
    for row, line in zip(table.itertuples(), printed):
        assert (row.epsilon_item, row.epsilon_person) == pytest.approx(_levels_of(row.epsilon_report))
        assert line.count("|") == accuracy.markdown_header(300, 2)[0].count("|")   # a cell under each header
    # RAPPOR's one report is its instantaneous ε₁, below the permanent ε_∞ = 4 its label gives
    assert table["epsilon_report"].iloc[0] < 4.0


@pytest.mark.parametrize("width", [80, 100, 200])
def test_poison_prints_the_levels_within_the_width(width):
    from ldpsim.evaluation.privacy.level_columns import beside
    from ldpsim.scenarios.studies.poisoning.experiment import PoisonResult
    cells = 4
    table = beside(pd.DataFrame({"mechanism": ["grr", "oue", "rappor", "rappor"], "attack": ["mga"] * cells,
                                 "epsilon": [1.0, 4.0, 1.0, 4.0], "epsilon_report": [1.0, 4.0, 0.2654, 0.9919],
                                 "beta": [0.01] * cells, "defense": ["normalization"] * cells,
                                 "gain": [0.0123456] * cells, "gain_se": [0.000123] * cells,
                                 "closed_form": [0.0123] * cells}), "epsilon_report")
    lines = PoisonResult("population", table).lines(width=width)
    assert set(LEVELS) <= set(lines[0].split())
    _fits(lines, width)
    text = " ".join(" ".join(lines).split())
    assert "one item of one person (epsilon_item)" in text and "permanent ε_∞" in text


def test_audit_says_each_claims_scope_and_its_levels():
    """One report: a device sending it once gets the claim at both levels; RAPPOR's ε_∞ and the repeated
    mode cover one value's reports (no person level: said in a note); the printed table fits."""
    import ldpsim
    report = ldpsim.audit("all", mode="declared", trials=10_000, epsilons=[1.0])
    table = report.table
    one = table[table["scope"] == "one report"]
    assert len(one) > 10
    for level in LEVELS:
        assert (one[level] == one["epsilon_claimed"]).all()
    permanent = table[table["target"] == "permanent"]
    assert len(permanent) and permanent["epsilon_person"].isna().all()
    assert (permanent["epsilon_item"] == permanent["epsilon_claimed"]).all()
    for width in (80, 100):
        lines = report.table_lines(width=width)
        assert set(LEVELS) <= set(lines[0].split()), lines[0]
        _fits(lines, width)
        assert any(line.startswith("nan in epsilon_item/epsilon_person") for line in lines)
        assert any(line.startswith("ε claimed: of one report") for line in lines)


def test_a_poisoned_deployment_prints_what_a_genuine_device_gets_over_the_run():
    """The fleet rows' epsilon_item / epsilon_person are the accountant's for the attacked use case over
    the run: here one fresh report a day, so levels(ε, 1, days) — not the one report's ε."""
    from ldpsim.evaluation.privacy.levels import levels
    from ldpsim.scenarios.api import _resolved
    from ldpsim.scenarios.studies.poisoning.deployment_attack import genuine_levels, with_epsilon
    from ldpsim.scenarios.studies.poisoning.experiment import PoisonResult
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    cfg, _ = load_deployment(str(_resolved("keyboard")), 300, 3)
    run_cfg = with_epsilon(cfg, "event", 4.0)
    uc = run_cfg.use_case("event")
    got = genuine_levels(run_cfg, "event")
    want = levels(4.0, reports_per_day=uc.daily_limit, days=3)
    assert (got["epsilon_item"], got["epsilon_person"]) == pytest.approx((want.epsilon_item, want.epsilon_person))
    assert got["epsilon_person"] > 4.0
    table = pd.DataFrame({"use_case": ["event"] * 2, "epsilon": [4.0] * 2, **{k: [v] * 2 for k, v in got.items()},
                          "fakes": [0, 30], "defense": ["none", "rate limit 10 ids × 5/day"],
                          "fakes_accepted_per_day": [0, 30], "days_in_top": [0, 3], "estimated_share": [0.0034, 0.2074],
                          "closed_form_share": [0.0034, 0.2076], "true_share": [0.0036, 0.0036]})
    for width in (80, 100):
        lines = PoisonResult("fleet", table).lines(width=width)
        assert set(LEVELS) <= set(lines[0].split())
        _fits(lines, width)
        assert "one person over the run" in " ".join(" ".join(lines).split())


def test_a_deployments_trust_model_states_one_item_and_one_person():
    """The run report's trust block (trust_guarantees.csv) has an item and a person row from the model's
    own accountant (trust_levels), beside report, day and run; one report a day: both are the run's."""
    from ldpsim.evaluation.deployment.trust_estimates import trust_guarantees
    from ldpsim.evaluation.privacy.trust_levels import trust_levels
    from ldpsim.evaluation.privacy.trust_models import model_from
    from ldpsim.scenarios.catalog import shipped
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    cfg, _ = load_deployment(shipped()["keyboard_trust"], 2000, 3)
    table = trust_guarantees(cfg)
    assert len(table)
    for name, g in table.groupby("use_case"):
        g = g.set_index("scope")
        p = dict(cfg.use_cases[[u.name for u in cfg.use_cases].index(name)].trust)
        want = trust_levels(model_from(p), p["n_plan"], cfg.n_days, p["delta"])
        assert g.loc["item", "epsilon"] == pytest.approx(want["epsilon_item"])
        assert g.loc["person", "epsilon"] == pytest.approx(want["epsilon_person"])
        assert g.loc["person", "epsilon"] == pytest.approx(g.loc["run", "epsilon"])
        assert g.loc["person", "delta"] == g.loc["run", "delta"] and "one person" in g.loc["person", "meaning"]
