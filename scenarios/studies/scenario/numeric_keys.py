"""The ``[numeric.<name>]`` tables of a deployment scenario: key-tap heat maps and reading distributions.

Each table names one numeric design and what it estimates (docs/math.md §9.14)::

    [numeric.space_taps]
    design = "ldp-hdg"            # a heat-map design: ldp-quadtree, ldp-hdg, secagg-quadtree, secagg-flat,
                                  # central-quadtree, central-flat
    keys = ["space", "e"]         # the keys whose 16 × 16 tap maps are estimated
    epsilon = 1.0                 # ε of one report (local) or of one nightly release (central, distributed)

    [numeric.latency]
    design = "ldp-sw-ems"         # a reading design: ldp-sw-ems, ldp-tree, secagg-flat, central-flat, or a
                                  # numeric mechanism of the registry read by EM: pm, sdpm, sw
    reading = "key_latency"       # key_latency (ms) or typing_speed (words/min)
    epsilon = 1.0
    delta = 1e-9                  # designs trusting secure aggregation only; other keys: the mechanism's own

The keys a table may hold are ``design``, ``keys`` (heat maps) or ``reading`` (distributions) and the design's
parameters (:func:`~ldpsim.evaluation.numeric_use.design_keys`); any other key is refused with the list of
allowed ones, and values are checked by :func:`~ldpsim.evaluation.numeric_use.numeric_design`.
"""

from __future__ import annotations

from ldpsim.evaluation.numeric_use import (READINGS, NumericUseCase, design_keys, design_names, key_ids,
                                           numeric_design)
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.scenario.schema import Field, ScenarioError, parse_table

#: any TOML value a registered mechanism's parameter may take (the mechanism checks it)
ANY = (int, float, str, list, bool)


def numeric_use_cases(tables, file) -> tuple[NumericUseCase, ...]:
    """The validated ``[numeric.<name>]`` tables of a deployment scenario, in file order."""
    if not isinstance(tables, dict):
        raise ScenarioError(file, "numeric", "must hold one [numeric.<name>] table per use case")
    return tuple(_use_case(name, table, file) for name, table in tables.items())


def _use_case(name: str, table, file) -> NumericUseCase:
    where = f"numeric.{name}"
    if not isinstance(table, dict):
        raise ScenarioError(file, where, f"must be a table (design, epsilon, keys or reading); got {table!r}")
    if not name.isidentifier():
        raise ScenarioError(file, where, "the use case's name must be an identifier (letters, digits, _)")
    family = "heatmap" if "keys" in table else "reading"
    design = table.get("design")
    names = design_names(family)
    if design not in names:
        what = "a heat map (keys = [...])" if family == "heatmap" else "a reading (reading = ...)"
        raise ScenarioError(file, f"{where}.design", f"must name a design of {what}: {', '.join(names)}; "
                            f"got {design!r}")
    spec = {"design": Field(str), **{k: Field(float) if k == "epsilon" else Field(float if k == "delta" else ANY, None)
                                     for k in design_keys(design, family)}}
    spec.update({"keys": Field(list)} if family == "heatmap" else
                {"reading": Field(str, check=lambda v: None if v in READINGS else f"must be one of {', '.join(READINGS)}")})
    fields = parse_table(table, spec, where, file)
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()
              if k not in ("design", "keys", "reading") and k in table}
    try:
        built = numeric_design(design, family, **params)
        keys = key_ids(fields["keys"]) if family == "heatmap" else ()
    except InputError as exc:
        raise ScenarioError(file, where, str(exc)) from None
    return NumericUseCase(name, built, keys, fields.get("reading", ""))
