"""Scenario files written with a key's old name still read, under today's name, with a note."""

import pytest

from ldpsim.scenarios.studies.scenario.old_keys import OLD_KEYS
from ldpsim.scenarios.studies.scenario.schema import ScenarioError, load_toml


def test_an_old_key_is_read_under_its_new_name_with_a_note(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[trust]\n[trust.use_case.a]\naggregation = "ldp"\nepsilon_run = 3.0\n', encoding="utf-8")
    notes = []
    raw = load_toml(path, notes)
    assert raw["trust"]["use_case"]["a"] == {"aggregation": "ldp", "epsilon_device": 3.0}
    assert notes == ["[trust.use_case.a.epsilon_run] is the old name of 'epsilon_device'; "
                     "read as [trust.use_case.a.epsilon_device]"]


def test_old_and_new_name_in_one_table_is_refused(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("[trust.use_case.a]\nepsilon_run = 3.0\nepsilon_device = 2.0\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"\[trust\.use_case\.a\.epsilon_run\] is the old name of 'epsilon_device'"):
        load_toml(path)


@pytest.mark.parametrize("old", sorted(OLD_KEYS))
def test_every_old_key_maps_to_a_different_name(old):
    assert OLD_KEYS[old] != old and OLD_KEYS[old] not in OLD_KEYS


@pytest.mark.slow
def test_a_trust_scenario_with_old_keys_gives_the_same_table(tmp_path):
    """The shipped trust scenario with every ``epsilon_device`` spelt ``epsilon_run``: identical table,
    one note per renamed key."""
    from importlib import resources

    from ldpsim.scenarios.studies.trust.trust_scenario import run_trust_scenario

    text = (resources.files("ldpsim.scenarios") / "trust_models.toml").read_text(encoding="utf-8")
    text = text.replace("devices = 50_000", "devices = 4_000")
    new, old = tmp_path / "new.toml", tmp_path / "old.toml"
    new.write_text(text, encoding="utf-8")
    old.write_text(text.replace("epsilon_device =", "epsilon_run ="), encoding="utf-8")
    a, b = run_trust_scenario(new), run_trust_scenario(old)
    assert a.notices == () and len(b.notices) == text.count("epsilon_device =") > 0
    assert a.table.equals(b.table)
