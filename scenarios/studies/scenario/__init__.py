"""Scenario files (TOML): one schema layer (:mod:`.schema`) for both kinds, a sweep's grid of cells
(:mod:`.grid`), a deployment's configuration (:mod:`.deployment_file`) and the vocabulary-file keys both
share (:mod:`.vocabulary_keys`); :func:`scenario_kind` tells them apart."""

from ldpsim.scenarios.studies.scenario.schema import ScenarioError, load_toml, scenario_kind

__all__ = ["ScenarioError", "load_toml", "scenario_kind"]
