"""``ldpsim trust --compare``'s discovery rows run on the typed words, each device bounded, like
``discover --trust`` — docs/math.md §8.8.

Every online device types TYPED = 8 occurrences a night and keeps at most L0·L∞ = 2 of them (BOUND), so a
design that counts the kept words never counts more than 2/8 of what was typed: occurrences_lost ≥ 0.75
exactly (a voting trie keeps one: ≥ 0.875), deterministically, whatever the draw. A design fed one word a
device a night loses nothing and fails that bound.
"""

import pytest

from ldpsim.evaluation.privacy.levels import bounded_cells
from ldpsim.evaluation.privacy.trust_accounting import run_epsilon
from ldpsim.evaluation.privacy.trust_models import MODELS, TRUST_MODELS
from ldpsim.scenarios.studies.trust.bounded_discovery import VOTING, bounded_days_to_discovery, bounded_design
from ldpsim.scenarios.studies.trust.trust_fleet import BOUND, TYPED, keyboard_fleet

EPS, DELTA, DAYS = 4.0, 1e-9, 10


@pytest.fixture(scope="module")
def fleet():
    return keyboard_fleet(days=DAYS, devices=3000)


@pytest.fixture(scope="module")
def codec():
    from ldpsim.scenarios.studies.discovery.days import growing_slang
    return growing_slang("en", n_days=3).codec


@pytest.mark.parametrize("model", MODELS)
def test_each_rows_person_epsilon_is_the_bounded_cells_accounting(model, fleet, codec):
    """ε per person of each model's discovery design, recomputed from its calibrated parameters over the
    C = D·L0 cells of bounded_cells (a local design: C reports at ε/C; amplified: L0 reports a round through
    the model's accountant; a voting trie: one vote a night; the enclave: calibrated over C cells)."""
    name = TRUST_MODELS[model].discovery
    item, person = bounded_cells(DAYS, BOUND)
    assert (item, person) == (DAYS, DAYS * BOUND.l0)
    proto, row, read = bounded_design(name, model, EPS, fleet, DELTA, codec)
    local = TRUST_MODELS[model].starting().discovery_local(fleet.word_cohort)
    if name in VOTING:
        assert read == "votes" and row["epsilon_person"] == row["epsilon_item"] == pytest.approx(EPS)
    elif name == "tee_histogram":
        assert read == "contributions" and (proto.max_keys, proto.max_per_key) == (BOUND.l0, BOUND.linf)
        assert 0.99 * EPS <= row["epsilon_person"] <= EPS * (1 + 1e-6) and row["epsilon_item"] < row["epsilon_person"]
    elif local is not None:
        assert read == "kept" and row["model"].epsilon_report == pytest.approx(proto.epsilon)
        charged = run_epsilon(row["model"], fleet.word_cohort, DAYS, DELTA, BOUND.l0)
        assert row["epsilon_person"] == pytest.approx(charged) and charged <= EPS * (1 + 1e-9)
        assert charged > run_epsilon(row["model"], fleet.word_cohort, DAYS, DELTA)   # L0 reports a round charged
    else:
        assert read == "kept" and proto.epsilon * person == pytest.approx(EPS)     # ε/C a report, C cells
        assert (row["epsilon_person"], row["epsilon_item"]) == pytest.approx((EPS, item * proto.epsilon))


@pytest.mark.slow
def test_every_discovery_row_reads_the_bounded_typed_words(fleet, codec):
    """Every model's row loses at least 1 − L0·L∞/TYPED of the typed occurrences (a voting trie 1 − 1/TYPED),
    and its ε per person is its design's under the bound."""
    got = bounded_days_to_discovery(MODELS, EPS, fleet, DELTA, seeds=(0,))
    assert set(got) == set(MODELS)
    for model, row in got.items():
        voting = row["discovery"] in VOTING
        floor = 1 - (1 if voting else BOUND.l0 * BOUND.linf) / TYPED
        assert floor - 1e-12 <= row["occurrences_lost"] < 1, (model, row)
        assert 0 < row["entries_lost"] < 1, (model, row)
        assert row["discovery"] == TRUST_MODELS[model].discovery
        design_row = bounded_design(row["discovery"], model, EPS, fleet, DELTA, codec)[1]
        assert row["epsilon_person"] == pytest.approx(float(design_row["epsilon_person"]))
    assert got["tee"]["days_to_discovery"] == 0 and got["tee"]["found_share"] == 1
    assert 0 <= got["tee"]["slang_error"] < 0.05       # the enclave lists the new word every night from its first


@pytest.mark.slow
def test_the_comparison_table_states_the_bound_and_the_words_lost():
    from ldpsim.evaluation.privacy.trust_tables import comparison_lines
    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models

    r = compare_trust_models(epsilons=(EPS,), models=("ldp", "sample_threshold", "tee"), days=DAYS, devices=3000,
                             repeats=2, rng=0)
    t = r.discovery.set_index("model")
    assert (t["occurrences_lost"] >= 0.75 - 1e-12).all() and t.loc["sample_threshold", "occurrences_lost"] >= 0.875
    text = "\n".join(comparison_lines(r, width=400))
    assert f"types {TYPED} words a night and keeps ≤ {BOUND.l0} distinct" in text
    assert "entries_lost" in text and "occurrences_lost" in text and "slang_error" in text


def test_slang_error_is_the_mean_error_over_the_listed_nights():
    """Nights whose list holds the new word with an estimate count; the others do not (NaN: none listed)."""
    import math

    import pandas as pd

    from ldpsim.scenarios.studies.trust.bounded_discovery import slang_error

    nights = pd.DataFrame({"found": [False, True, True, True], "slang_estimate": [0.5, 0.03, float("nan"), 0.01],
                           "slang_true": [0.0, 0.02, 0.02, 0.02]})
    assert slang_error(nights) == pytest.approx((0.01 + 0.01) / 2)
    assert math.isnan(slang_error(nights.assign(found=False)))


def test_a_design_with_no_pass_within_the_run_found_nothing():
    """No nightly row (a trie whose pass outlasts a short run): found by no seed, no error, no crash."""
    import math

    import pandas as pd

    from ldpsim.scenarios.studies.trust.bounded_discovery import found_days, slang_error

    share, median = found_days(pd.DataFrame([]), 3, 1)
    assert share == 0 and math.isnan(median) and math.isnan(slang_error(pd.DataFrame([])))
