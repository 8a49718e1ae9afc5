"""Sweep scenarios: a TOML file validated up front, then expanded into frozen cells.

Schema (every table checked; unknown keys get a did-you-mean)::

    [scenario]                      # name, seed (root entropy), repeats, path, top, store_top
    name = "seed003-study"
    seed = 2026
    repeats = 100
    path = "direct"                 # "auto" | "direct" | "reports" (ldpsim.simulator.population)
    top = 20                        # metrics over the top-N items by true count
    store_top = 20                  # estimates kept per repeat for the top-N items (0 = all); default = top

    [workload]                      # make_workload(name, n, **params); other keys are its params
    name = "harmonic"
    n = 1_000_000
    domain_size = 2000
    labels = "words"                # optional: item labels from another workload (see build_workload)
    sort_labels = true
    # or your own items: vocabulary = "data/emoji_500.csv" (and n; see vocabulary_keys)

    [[mechanism]]                   # one table per mechanism: fixed params, and an optional own grid
    name = "cms"
    epsilon = 4.0
    grid = { k = [256, 1024], m = [32, 64] }

    [grid]                          # shared grid: "workload.<param>" or a param every mechanism takes
    "workload.name" = ["harmonic", "exponential"]
    epsilon = [1.0, 2.0, 4.0]

    [metrics]
    names = ["expectation_bias", "rank_deviation", "variance"]

Discovery protocols (``sfp``, ``pem``, ``treehist``) make *discovery* cells
(:mod:`ldpsim.scenarios.studies.sweep.discovery_cell`): ``top`` is the k of the discovered top-k and the
metrics are :data:`ldpsim.evaluation.discovery.scores.DISCOVERY_METRICS` (the default when every
mechanism is a discovery protocol); a scenario does not mix the two kinds' metrics. The interactive
protocols (``triehh``, ``triehh_pp``, ``ldp_trie``: :data:`ldpsim.mechanisms.registry.INTERACTIVE`)
make discovery cells too: one pass of their rounds over the users, ``epsilon`` being ε per user over
the pass (:func:`~ldpsim.mechanisms.discovery.run_budget.run_rounds` over one day; a threshold
protocol takes ``delta`` or ``theta`` and ``gamma``); their guarantee's kind (pure ε-LDP, or central
(ε, δ) after the threshold) keeps them on their own plot panel.

Numeric designs make *numeric* cells (:mod:`ldpsim.scenarios.studies.sweep.numeric_cell`) on a numeric
workload (``[workload] name`` = ``key-taps`` with ``keys = ["space", "e"]``, or ``typing-speed``,
``key-latency``): the heat-map designs (``ldp-quadtree``, ``ldp-hdg``, ``secagg-quadtree``, ``secagg-flat``,
``central-quadtree``, ``central-flat``) on key taps, the reading designs (``ldp-sw-ems``, ``ldp-tree``,
``secagg-flat``, ``central-flat``, or ``pm``, ``sdpm``, ``sw`` read by EM) on readings, each with ``epsilon``
(of one report or release), ``delta`` (designs trusting secure aggregation) and a mechanism's own
parameters (:func:`ldpsim.evaluation.numeric_use.numeric_design`), any of them a grid axis; the metrics are
:data:`~ldpsim.evaluation.numeric_designs.MAP_METRICS` or :data:`~ldpsim.evaluation.numeric_designs.READING_METRICS`
(the default).

    [plots]
    mark = { k = 65535, m = 32 }    # the cell highlighted on k × m heatmaps

A mechanism parameter ``high_fraction`` (SDGRR's ``high``, URR's ``sensitive``) is a fraction f of
the workload's domain: the round(f·D) most frequent items (ids 0 .. round(f·D)−1) are the
high-sensitivity set (see :data:`FRACTION_PARAMS`). ``domain_size`` is filled from the workload
when the mechanism takes it; a ``seed`` (hash family) is derived from the root seed per cell unless given.

Cells are the cartesian product workload grid × shared grid × Σ_mechanisms own grid, in that order;
each cell is a frozen record with a stable id (hash of everything that determines its numbers).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import itertools
import json
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms.registry import INTERACTIVE, MECHANISMS, make
from ldpsim.mechanisms.discovery.run_budget import run_keys, run_rounds
from ldpsim.mechanisms.discovery.words import DiscoveryProtocol

from ldpsim.evaluation.discovery.scores import DISCOVERY_METRICS
from ldpsim.scenarios.studies.sweep.cell_metrics import CELL_METRICS, NEEDS_TRANSITION_MATRIX
from ldpsim.evaluation.cost import check_workload_size
from ldpsim.evaluation.privacy.level_columns import one_report
from ldpsim.runtime.plain import plain_name
from ldpsim.scenarios.studies.scenario.schema import (Field, ScenarioError, load_toml, parse_table, require_kind,
                                                      seed_check)
from ldpsim.scenarios.studies.scenario.vocabulary_keys import VOCABULARY_KEYS, vocabulary_workload_table
from ldpsim.evaluation.workloads.make import WORKLOADS, Workload, make_workload
from ldpsim.evaluation.numeric_designs import MAP_METRICS, READING_METRICS
from ldpsim.evaluation.numeric_use import (DEFAULT_KEYS, NUMERIC_WORKLOADS, design_keys, design_names, draw_numeric,
                                           key_ids, numeric_design)
from ldpsim.runtime.errors import InputError

PATHS = ("auto", "direct", "reports")
#: scenario-level name of a domain fraction → the mechanism parameters taking that many item ids
FRACTION_PARAMS = {"high_fraction": ("high", "sensitive")}


def _positive(v):
    return None if v >= 1 else "must be >= 1"


def _one_of(choices):
    return lambda v: None if v in choices else f"must be one of {', '.join(map(repr, choices))}"


SCENARIO_SPEC = {
    "name": Field(str, check=plain_name, help="a short name for the run (it names the default output folder)"),
    "seed": Field(int, check=seed_check, help="root entropy of the run's SeedSequence"),
    "repeats": Field(int, 10, _positive),
    "path": Field(str, "auto", _one_of(PATHS)),
    "top": Field(int, 20, _positive),
    "store_top": Field(int, -1, lambda v: None if v >= -1 else "must be >= 0 (0 = all items)"),
}
METRICS_SPEC = {"names": Field(list, ["expectation_bias", "rank_deviation", "variance", "mse"])}
PLOTS_SPEC = {"mark": Field(dict, {})}
TOP_SPEC = {"scenario": Field(dict), "workload": Field(dict),
            "mechanism": Field(list, help="one [[mechanism]] table per mechanism"),
            "grid": Field(dict, {}), "metrics": Field(dict, {}), "plots": Field(dict, {})}


@dataclass(frozen=True)
class Cell:
    """One point of the grid: everything :func:`ldpsim.scenarios.studies.sweep.runner.run_cell` needs, frozen and picklable."""

    index: int  # position in the expanded grid (seeds the cell's own streams)
    workload_index: int  # position of its workload setting (common random numbers across mechanisms)
    workload_items: tuple  # (key, value) pairs: name, n, workload params
    mechanism: str
    param_items: tuple  # (key, value) pairs of the resolved mechanism params
    repeats: int
    path: str
    top: int
    store_top: int  # 0 = all items
    metrics: tuple
    id: str = ""
    aliases: tuple = ()  # (alias, resolved param, scenario value), e.g. ("high_fraction", "high", 0.1)

    @property
    def workload(self) -> dict:
        return dict(self.workload_items)

    @property
    def params(self) -> dict:
        return dict(self.param_items)

    def make_mechanism(self):
        """The mechanism, an interactive protocol's one pass or a numeric design (:func:`build`)."""
        return build(self.mechanism, self.params, NUMERIC_WORKLOADS.get(self.workload["name"]))

    @property
    def kind(self) -> str:
        """``"numeric"`` on a numeric workload, ``"discovery"`` for protocols that find strings without a
        dictionary, else ``"frequency"``."""
        return "numeric" if self.workload["name"] in NUMERIC_WORKLOADS else cell_kind(self.mechanism)


    @functools.cached_property
    def guarantee(self):
        """The mechanism's :class:`~ldpsim.mechanisms.base.Guarantee` (docs/math.md §8.1); an interactive
        protocol's is that of its pass (ε per user over its rounds, and its kind)."""
        return self.make_mechanism().guarantee

    def labels(self) -> dict:
        """Flat parameter columns carried by every output row (tuple values, e.g. id sets, as text),
        with ``epsilon_report`` (ε of one report: a sweep collects one report per user), what one item
        of one person and one person get from it (``epsilon_item``, ``epsilon_person``:
        :func:`~ldpsim.evaluation.privacy.level_columns.one_report`) and ``guarantee`` (its kind, e.g.
        "ε-LDP"), the quantity and meaning plots put on their ε axis."""
        w = self.workload
        out = {"cell_id": self.id, "cell_index": self.index, "workload_index": self.workload_index,
               "mechanism": self.mechanism, "repeats": self.repeats, "path": self.path,
               "workload": w.pop("name"), "n": w.pop("n")}
        out.update({f"workload.{k}": v for k, v in w.items()})
        out.update(self.param_items)
        for alias, param, value in self.aliases:  # the scenario's value, not the resolved id set
            out.pop(param)
            out[alias] = value
        out.update(epsilon_report=self.guarantee.epsilon_report, **one_report(self.guarantee.epsilon_report),
                   guarantee=self.guarantee.label)
        return {k: str(v) if isinstance(v, tuple) else v for k, v in out.items()}


def cell_kind(mechanism: str) -> str:
    """The kind of cell a registered mechanism makes: ``"discovery"`` or ``"frequency"``."""
    return "discovery" if mechanism in INTERACTIVE or issubclass(MECHANISMS[mechanism], DiscoveryProtocol) \
        else "frequency"


def build(name: str, params: dict, family: str | None = None):
    """``make(name, **params)``, for an interactive protocol its one pass of rounds at ε per user
    (:func:`~ldpsim.mechanisms.discovery.run_budget.run_rounds` over one day), or with a numeric ``family``
    the numeric design (:func:`~ldpsim.evaluation.numeric_use.numeric_design`)."""
    if family is not None:
        return numeric_design(name, family, **params)
    return run_rounds(name, n_days=1, **params) if name in INTERACTIVE else make(name, **params)


@dataclass(frozen=True)
class Scenario:
    """A validated scenario file; :meth:`cells` expands its grid."""

    file: str
    name: str
    seed: int
    repeats: int
    path: str
    top: int
    store_top: int
    workload: dict
    mechanisms: tuple  # of dicts: name, fixed params, own grid
    grid: dict
    metrics: tuple
    plots: dict
    notices: tuple = ()  # what reading the scenario's files did that the user should know (merged items)

    def as_dict(self) -> dict:
        """The resolved configuration (JSON-serializable), stored beside the results."""
        return {"name": self.name, "seed": self.seed, "repeats": self.repeats, "path": self.path,
                "top": self.top, "store_top": self.store_top, "workload": self.workload,
                "mechanisms": [dict(m) for m in self.mechanisms], "grid": self.grid,
                "metrics": list(self.metrics), "plots": self.plots}

    def fingerprint(self) -> str:
        """Hash of the resolved configuration: a changed scenario has a different fingerprint."""
        return _digest(self.as_dict())

    def cells(self) -> list[Cell]:
        """The grid expanded into cells (validated by constructing every mechanism once; expanded once)."""
        return list(self._cells)

    @functools.cached_property
    def _cells(self) -> tuple:
        return tuple(_expand(self))


def child_seed(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The SeedSequence ``root.spawn(...)[key[0]].spawn(...)[key[1]]...``, addressed by index."""
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(key),
                                  pool_size=root.pool_size)


def build_workload(workload: dict, root: np.random.SeedSequence, w_index: int):
    """Workload setting ``w_index`` (``name``, ``n`` and params) drawn from stream ``(0, w_index)``.

    ``labels = "words"`` (any workload taking ``top``) relabels the items, in rank order, with the
    first D labels of that workload — sorted alphabetically when ``sort_labels = true``: seed 003's
    construction (its 2000 most common words, in dictionary order, given synthetic frequencies).
    """
    w = dict(workload)
    labels, sort_labels = w.pop("labels", None), w.pop("sort_labels", False)
    out = make_workload(w.pop("name"), w.pop("n"), rng=child_seed(root, 0, w_index), **w)
    if labels is None:
        return out
    if not isinstance(sort_labels, bool):
        raise TypeError(f"'sort_labels' must be true or false; got {sort_labels!r}")
    names = make_workload(labels, 1, top=out.domain_size).items
    names = np.sort(names) if sort_labels else names
    return Workload(out.name, names, out.counts, {**out.params, "labels": labels, "sort_labels": sort_labels})


def _digest(obj) -> str:
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _freeze(value):
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def _takes(mechanism: str, family: str | None = None) -> set[str]:
    if family is not None:
        return set(design_keys(mechanism, family))
    if mechanism in INTERACTIVE:  # one pass of rounds: no rounds per day
        return run_keys(mechanism) - {"rounds_per_day"}
    return set(inspect.signature(MECHANISMS[mechanism]).parameters)


def _check_list(file, key, values):
    if not isinstance(values, list) or not values:
        raise ScenarioError(file, key, f"a grid dimension must be a non-empty list of values; got {values!r}")
    return values


def _parse_mechanism(table, i, file, family: str | None = None) -> dict:
    """One ``[[mechanism]]`` table; ``family`` (a numeric workload's) makes it a numeric design."""
    where = f"mechanism[{i}]"
    if not isinstance(table, dict):
        raise ScenarioError(file, where, "must be a table ([[mechanism]])")
    name = table.get("name")
    if family is not None and name not in design_names(family):
        raise ScenarioError(file, f"{where}.name", f"unknown {family} design {name!r} for a numeric workload; "
                            f"allowed: {', '.join(design_names(family))}")
    if family is None and name not in MECHANISMS and name not in INTERACTIVE:
        raise ScenarioError(file, f"{where}.name",
                            f"unknown mechanism {name!r}; allowed: {', '.join(sorted({*MECHANISMS, *INTERACTIVE}))}")
    allowed = _takes(name, family) | (set(FRACTION_PARAMS) if family is None else set())
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise ScenarioError(file, f"{where}.grid", "must be a table of lists")
    fixed = {k: v for k, v in table.items() if k not in ("name", "grid")}
    for key in [*fixed, *grid]:
        if key not in allowed:
            near = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ScenarioError(file, f"{where}.{'grid.' if key in grid else ''}{key}",
                                f"{name} takes no parameter {key!r}{hint}; allowed: {', '.join(sorted(allowed))}")
    for key, values in grid.items():
        _check_list(file, f"{where}.grid.{key}", values)
    return {"name": name, "fixed": fixed, "grid": grid}


def load_scenario(path, vocabulary=None) -> Scenario:
    """Read and validate a scenario file; raise :class:`ScenarioError` naming file and key.
    ``vocabulary`` (a file) replaces the scenario's workload, keeping its ``n``."""
    raw = load_toml(path)
    require_kind(raw, "sweep", path)
    return scenario_from_dict(raw, path, vocabulary)


def scenario_from_dict(raw: dict, path="<scenario>", vocabulary=None) -> Scenario:
    """Validate a scenario given as a dict shaped like the TOML file (``path`` names it in errors; a
    relative ``[workload] vocabulary`` file is relative to its folder; ``vocabulary`` replaces the workload)."""
    top = parse_table(raw, TOP_SPEC, "", path)
    head = parse_table(top["scenario"], SCENARIO_SPEC, "scenario", path)
    workload, vocab = vocabulary_workload_table(dict(top["workload"]), path, vocabulary, VOCABULARY_KEYS + ("n",))
    if workload.get("name") not in WORKLOADS and workload.get("name") not in NUMERIC_WORKLOADS:
        raise ScenarioError(path, "workload.name", f"unknown workload {workload.get('name')!r}; "
                            f"allowed: {', '.join(sorted({*WORKLOADS, *NUMERIC_WORKLOADS}))}")
    family = NUMERIC_WORKLOADS.get(workload["name"])
    if not isinstance(workload.get("n"), int) or isinstance(workload.get("n"), bool) or workload["n"] < 1:
        raise ScenarioError(path, "workload.n", f"must be an int >= 1 (number of users); got {workload.get('n')!r}")
    if not top["mechanism"]:
        raise ScenarioError(path, "mechanism", "at least one [[mechanism]] table is required")
    mechanisms = tuple(_parse_mechanism(t, i, path, family) for i, t in enumerate(top["mechanism"]))
    grid = dict(top["grid"])
    for key, values in grid.items():
        _check_list(path, f"grid.{key}", values)
        if key in ("workload.name", "workload.vocabulary") and workload["name"] == "vocabulary":
            raise ScenarioError(path, f"grid.{key}", "cannot vary with a vocabulary file as the workload: run one "
                                "sweep per file (`--vocabulary FILE`)")
        if key.startswith("workload."):
            if key == "workload.name" and family is not None:
                raise ScenarioError(path, f"grid.{key}", "cannot vary with a numeric workload (its designs are "
                                    "those of its family): run one sweep per workload")
            if key == "workload.name":
                for v in values:
                    if v not in WORKLOADS:
                        raise ScenarioError(path, f"grid.{key}", f"unknown workload {v!r}; "
                                            f"allowed: {', '.join(sorted(WORKLOADS))}")
            continue
        for m in mechanisms:
            if key not in _takes(m["name"], family) | (set(FRACTION_PARAMS) if family is None else set()):
                raise ScenarioError(path, f"grid.{key}", f"mechanism {m['name']!r} takes no parameter {key!r}; "
                                    f"allowed: {', '.join(sorted(_takes(m['name'], family)))} or 'workload.<param>' "
                                    "(put mechanism-specific values in that mechanism's own grid)")
    metrics = parse_table(top["metrics"], METRICS_SPEC, "metrics", path)["names"]
    if not metrics:
        raise ScenarioError(path, "metrics.names", f"must name at least one metric; allowed: {', '.join(CELL_METRICS)}")
    kinds = {"numeric"} if family is not None else {cell_kind(m["name"]) for m in mechanisms}
    numeric_metrics = MAP_METRICS if family == "heatmap" else READING_METRICS
    if kinds == {"discovery"} and "names" not in top["metrics"]:
        metrics = list(DISCOVERY_METRICS)
    if kinds == {"numeric"} and "names" not in top["metrics"]:
        metrics = list(numeric_metrics)
    allowed = {"frequency": tuple(CELL_METRICS), "discovery": DISCOVERY_METRICS, "numeric": numeric_metrics}
    for kind in kinds:
        for name in metrics:
            if name not in allowed[kind]:
                raise ScenarioError(path, "metrics.names", f"unknown metric {name!r} for {kind} mechanisms; "
                                    f"allowed: {', '.join(allowed[kind])}")
    plots = parse_table(top["plots"], PLOTS_SPEC, "plots", path)
    scenario = Scenario(file=str(path), name=head["name"], seed=head["seed"], repeats=head["repeats"],
                        path=head["path"], top=head["top"],
                        store_top=head["top"] if head["store_top"] == -1 else head["store_top"],
                        workload=workload, mechanisms=mechanisms, grid=grid, metrics=tuple(metrics),
                        plots={"mark": plots["mark"]}, notices=vocab.notices if vocab is not None else ())
    from ldpsim.evaluation.cost import check_grid_size
    check_grid_size(scenario)  # counted before anything is built: an absurd grid fails at once
    scenario.cells()  # constructs every workload and mechanism once (kept): invalid values fail here
    return scenario


def _product(table: dict) -> list[dict]:
    keys = list(table)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(table[k] for k in keys))]


def _resolve_params(scenario, mech, params, domain_size, root, index) -> tuple[dict, tuple]:
    """The mechanism's constructor arguments, and the aliases resolved on the way."""
    takes = _takes(mech["name"])
    out, aliases = dict(params), []
    for alias, targets in FRACTION_PARAMS.items():
        if alias in out:
            target = next((t for t in targets if t in takes), None)
            frac = out.pop(alias)
            if target is None or not isinstance(frac, (int, float)) or not 0 <= frac <= 1:
                raise ScenarioError(scenario.file, f"mechanism.{alias}",
                                    f"must be a fraction in [0, 1] for a mechanism taking one of {targets}; "
                                    f"got {frac!r} for {mech['name']!r}")
            out[target] = tuple(range(int(round(frac * domain_size))))
            aliases.append((alias, target, frac))
    if "domain_size" in takes:
        out.setdefault("domain_size", domain_size)
    if "seed" in takes and "seed" not in out:
        out["seed"] = int(child_seed(root, 2, index).generate_state(1, np.uint32)[0])
    return out, tuple(aliases)


def _expand(scenario: Scenario) -> list[Cell]:
    root = np.random.SeedSequence(scenario.seed)
    wgrid = {k.removeprefix("workload."): v for k, v in scenario.grid.items() if k.startswith("workload.")}
    shared = {k: v for k, v in scenario.grid.items() if not k.startswith("workload.")}
    cells: list[Cell] = []
    for w_index, w_point in enumerate(_product(wgrid)):
        workload = {**scenario.workload, **w_point}
        if workload["name"] in NUMERIC_WORKLOADS:
            cells += _numeric_cells(scenario, workload, w_index, shared, len(cells))
            continue
        check_workload_size(workload, scenario.file)
        try:
            wl = build_workload(workload, root, w_index)
        except (TypeError, ValueError) as exc:
            raise ScenarioError(scenario.file, "workload", f"cannot build workload {workload}: {exc}") from None
        if not hasattr(wl, "counts"):
            raise ScenarioError(scenario.file, "workload.name", f"{workload['name']!r} is a numeric workload; "
                                "sweeps estimate frequencies of categorical workloads")
        w_items = tuple(sorted((k, _freeze(v)) for k, v in workload.items()))
        for s_point in _product(shared):
            for mech in scenario.mechanisms:
                for m_point in _product(mech["grid"]):
                    index = len(cells)
                    params, aliases = _resolve_params(scenario, mech, {**mech["fixed"], **s_point, **m_point},
                                             wl.domain_size, root, index)
                    try:
                        built = build(mech["name"], params)
                    except (TypeError, ValueError) as exc:
                        raise ScenarioError(scenario.file, "mechanism",
                                            f"{mech['name']} with {params}: {exc}") from None
                    needs = [m for m in scenario.metrics if m in NEEDS_TRANSITION_MATRIX]
                    if needs and not hasattr(built, "transition_matrix"):
                        raise ScenarioError(scenario.file, "metrics.names",
                                            f"{', '.join(needs)} need a discrete oracle with a transition matrix; "
                                            f"{mech['name']!r} has none")
                    cell = Cell(index, w_index, w_items, mech["name"], tuple(sorted(params.items())),
                                scenario.repeats, scenario.path, scenario.top, scenario.store_top,
                                scenario.metrics, aliases=aliases)
                    ident = _digest({**cell.__dict__, "root": scenario.seed})
                    cells.append(Cell(**{**cell.__dict__, "id": ident}))
    return cells


def _numeric_cells(scenario: Scenario, workload: dict, w_index: int, shared: dict, start: int) -> list[Cell]:
    """The numeric cells of one numeric workload setting (validated: the workload drawn once for one
    device, every design built)."""
    family = NUMERIC_WORKLOADS[workload["name"]]
    params = {k: v for k, v in workload.items() if k not in ("name", "n")}
    try:
        draw_numeric(workload["name"], 1, 0, **params)
        if family == "heatmap":
            key_ids(list(params.get("keys", DEFAULT_KEYS)))
    except (TypeError, ValueError, InputError) as exc:
        raise ScenarioError(scenario.file, "workload", f"cannot build workload {workload}: {exc}") from None
    w_items = tuple(sorted((k, _freeze(v)) for k, v in workload.items()))
    cells = []
    for s_point in _product(shared):
        for mech in scenario.mechanisms:
            for m_point in _product(mech["grid"]):
                p = {k: _freeze(v) for k, v in {**mech["fixed"], **s_point, **m_point}.items()}
                try:
                    numeric_design(mech["name"], family, **p)
                except InputError as exc:
                    raise ScenarioError(scenario.file, "mechanism", f"{mech['name']} with {p}: {exc}") from None
                cell = Cell(start + len(cells), w_index, w_items, mech["name"], tuple(sorted(p.items())),
                            scenario.repeats, scenario.path, scenario.top, scenario.store_top, scenario.metrics)
                cells.append(Cell(**{**cell.__dict__, "id": _digest({**cell.__dict__, "root": scenario.seed})}))
    return cells
