"""``ldpsim trust --compare`` prints each discovery design's ε per person over the run beside its ε per word
and δ — docs/math.md §8.8.

The printed ``epsilon_person`` of every row is recomputed here from the design's calibrated parameters over
the C = days·L0 cells of :func:`~ldpsim.evaluation.privacy.levels.bounded_cells` (a local design: C pure
reports at its ε; an amplified one: L0 reports a round through its model's accountant; a voting trie: its
threshold's run of one vote a night; the enclave: the analytic Gaussian over 2·C unit changes), and the
command prints exactly what the library's result prints. The table fits 100 columns, every row is at the
stated ε per person or flagged, and its NaN and inf are explained.
"""

import math

import numpy as np
import pandas as pd
import pytest

from ldpsim.evaluation.privacy.levels import bounded_cells
from ldpsim.evaluation.privacy.trust_tables import EPSILON_SLACK, comparison_lines, discovery_lines
from ldpsim.evaluation.privacy.trust_models import MODELS, TRUST_MODELS
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.scenarios.studies.trust.trust_fleet import BOUND

EPS, DELTA, DAYS, DEVICES = 4.0, 1e-9, 10, 3000
PARAMS = {"days": 30, "delta": 1e-9, "fleet": "keyboard", "typed": 8, "bound": ContributionBound(2, 1, "uniform"),
          "discovery_seed": 0}


def _discovery_table(**changed) -> pd.DataFrame:
    t = pd.DataFrame({"model": ["ldp", "secagg", "sample_threshold", "tee"],
                      "discovery": ["pem", "ldp_trie", "triehh", "tee_histogram"], "epsilon_target": [2.0] * 4,
                      "epsilon_person": [2.0, 1.99, 2.0, 2.0], "epsilon_item": [1.0, 0.98, 2.0, 1.1],
                      "delta": [0.0, 1e-9, 3.9e-10, 1e-9], "found_share": [0.0, 0.0, 1.0, 1.0],
                      "days_to_discovery": [math.nan, math.nan, 12.0, 0.0], "entries_lost": [0.738] * 4,
                      "occurrences_lost": [0.75] * 4})
    for column, values in changed.items():
        t[column] = values
    return t


@pytest.mark.parametrize("width", [80, 100])
def test_the_discovery_table_fits_and_states_its_privacy(width):
    lines = discovery_lines(_discovery_table(), PARAMS, width=width, full="discovery.csv")
    assert all(len(line) <= 100 for line in lines) and all(len(line) <= width for line in lines[1:])
    assert lines[0] == "New words at ε = 2 per person over 30 days (δ ≤ 1e-09), keyboard"
    header = lines[1].split()
    assert header[:5] == ["model", "discovery", "epsilon_person", "epsilon_item", "delta"]    # δ beside both
    text = "\n".join(lines)
    flat = " ".join(line.strip() for line in lines)
    assert "  epsilon_person: ε of one person over the run, every word typed" in text
    assert "  delta: δ of epsilon_person and epsilon_item (0: pure ε-LDP)" in text
    assert "keeps ≤ 2 distinct (uniform), ≤ 1 each" in flat and "!" not in text
    assert "a person also in a frequency collection spends both" in flat       # the two tables' ε add up
    if width == 100:
        assert "days_to_discovery" in header and "nan in days_to_discovery: not found within the run" in text


def test_several_targets_put_each_rows_target_beside_its_model():
    t = pd.concat([_discovery_table(), _discovery_table(epsilon_target=[4.0] * 4, epsilon_person=[4.0] * 4)])
    lines = discovery_lines(t, PARAMS, width=100, full=None)
    assert lines[0].startswith("New words at each row’s epsilon_target per person over 30 days")
    assert lines[1].split()[:6] == ["model", "epsilon_target", "epsilon_person", "epsilon_item", "delta",
                                    "days_to_discovery"]
    assert all(len(line) <= 100 for line in lines) and not any(line.startswith("!") for line in lines)


def test_a_discovery_row_above_its_person_epsilon_is_flagged_and_inf_explained():
    t = _discovery_table(epsilon_person=[2.0, 2.5, 2.0, math.inf], epsilon_item=[1.0, 1.2, 2.0, math.inf])
    text = "\n".join(discovery_lines(t, PARAMS, width=100, full=None))
    assert "! secagg: ε per person over the run is 2.5, above its target 2; it does not have the privacy" in text
    assert "! tee: ε per person over the run is inf, above its target 2" in text
    assert "! ldp" not in text and "! sample_threshold" not in text
    assert "inf in epsilon_person: no finite guarantee at this δ" in text


def test_a_fleet_without_words_says_why_its_discovery_row_is_nan():
    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models
    r = compare_trust_models("zipf", n=20_000, domain_size=50, epsilons=(EPS,), models=("ldp", "tee"), repeats=2,
                             rng=1)
    assert list(r.discovery["discovery"]) == ["pem", "tee_histogram"] and r.discovery["epsilon_person"].isna().all()
    lines = comparison_lines(r, width=100, full=None, discovery_full=None)
    assert all(len(line) <= 100 for line in lines)
    text = "\n".join(lines)
    assert "nan in epsilon_person: the fleet has no typed words: no design ran" in text and "!" not in text


def _codec(fleet):
    """The codec the comparison's discovery designs are built on (the fleet's words and the new word)."""
    from ldpsim.evaluation.workloads.vocabulary import Vocabulary
    from ldpsim.scenarios.studies.discovery.days import growing_slang
    from ldpsim.scenarios.studies.trust.trust_fleet import NEW_WORD
    return growing_slang(Vocabulary(fleet.words, fleet.word_shares, "share"), NEW_WORD, n_days=fleet.days,
                         start_day=fleet.slang_start_day, peak_share=fleet.slang_share, ramp_days=1, top=None).codec


def _person_epsilon_by_hand(model: str, fleet, codec) -> tuple[float, float]:
    """(ε per person, δ) of ``model``'s discovery design over the bounded cells, from its calibrated parameters."""
    from ldpsim.evaluation.privacy.threshold_composition import threshold_run
    from ldpsim.scenarios.studies.trust.bounded_discovery import bounded_design
    from tests.by_hand import tee_epsilon_by_hand

    name = TRUST_MODELS[model].discovery
    cells = bounded_cells(DAYS, BOUND)[1]
    assert cells == DAYS * BOUND.l0
    proto, row, _ = bounded_design(name, model, EPS, fleet, DELTA, codec)
    if name == "tee_histogram":
        return tee_epsilon_by_hand(proto, 2 * cells, DELTA), DELTA
    if name in ("triehh", "triehh_pp"):                  # one vote a night: the run of DAYS rounds
        run = threshold_run(proto, EPS, DELTA, DAYS)
        assert run["theta"] == proto.theta
        return EPS, run["delta"]
    if "model" in row:                                    # L0 local reports a round, amplified in the cohort
        cohort = max(2, round(fleet.word_devices * fleet.p_online))
        assert row["model"].epsilon_report == pytest.approx(proto.epsilon)
        return row["model"].epsilon(cohort, cells, DELTA, 2), DELTA
    return cells * proto.epsilon, 0.0                     # pure ε-LDP, one report a cell


def _rows(lines, header_at):
    """model → its printed cells of the console table whose header is ``lines[header_at]``."""
    header = lines[header_at].split()
    out = {}
    for line in lines[header_at + 1:]:
        cells = line.split()
        if not cells or cells[0] not in MODELS:
            break
        out[cells[0]] = dict(zip(header, cells))
    return out


@pytest.mark.slow
def test_the_printed_person_epsilon_is_the_accountants_and_the_command_prints_the_library(tmp_path, capsys,
                                                                                       monkeypatch):
    from ldpsim.scenarios.cli import main
    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models
    from ldpsim.scenarios.studies.trust.trust_fleet import keyboard_fleet

    monkeypatch.setenv("COLUMNS", "100")
    out = tmp_path / "t"
    assert main(["trust", "--compare", "--epsilons", str(EPS), "--days", str(DAYS), "--devices", str(DEVICES),
                 "--delta", str(DELTA), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    library = compare_trust_models(epsilons=(EPS,), days=DAYS, devices=DEVICES, delta=DELTA, rng=2026)
    expected = comparison_lines(library, full=str(out / "comparison.csv"), discovery_full=str(out / "discovery.csv"))
    start = printed.index(expected[0])
    assert printed[start:start + len(expected)] == expected         # the command prints the notebook's tables
    pd.testing.assert_frame_equal(pd.read_csv(out / "discovery.csv"), library.discovery, check_dtype=False)

    at = expected.index(next(line for line in expected if line.startswith("New words at ε = 4 per person")))
    shown = _rows(expected, at + 1)
    assert set(shown) == set(MODELS)
    fleet = keyboard_fleet(days=DAYS, devices=DEVICES)
    codec = _codec(fleet)
    t = library.discovery.set_index("model")
    for model in MODELS:
        person, delta = _person_epsilon_by_hand(model, fleet, codec)
        assert t.loc[model, "epsilon_person"] == pytest.approx(person, rel=1e-6), model   # the root-finders
        assert float(shown[model]["epsilon_person"]) == pytest.approx(person, rel=5e-4), model   # 4 digits
        assert t.loc[model, "delta"] == pytest.approx(delta, rel=1e-9, abs=0) and delta <= DELTA, model
        assert t.loc[model, "epsilon_item"] <= t.loc[model, "epsilon_person"] <= EPS * (1 + EPSILON_SLACK)
    assert not any(line.startswith("!") for line in expected)        # every row at the stated ε per person
    assert np.all(t["epsilon_person"] >= 0.99 * EPS)                 # and none far below it
