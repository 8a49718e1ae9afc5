"""``ldpsim.poison(...)``: a poisoning experiment as a library call — the population sweep of a
``[poisoning]`` scenario, or fake devices in a deployment (``[poisoning_fleet]``, or ``deployment=True``).

Returns a :class:`PoisonResult` (the table, the closed-form check and the lines the command line prints);
``ldpsim poison`` is a thin layer over it. With ``out`` the experiment owns its folder like ``ldpsim
run`` does (:mod:`ldpsim.runtime.runfolder`): a new, empty or own folder; another experiment's results
there are replaced only with ``force``; fake-device sweeps journal each deployment and resume.

Cost before spending (:class:`~ldpsim.evaluation.cost.CostError`, with the size that would fit):
the population sweep draws at most :data:`MAX_REPEATS` cell repeats and, on the per-report detection
path, :data:`~ldpsim.evaluation.cost.MAX_REPORT_USERS` reports per cell; a deployment must fit
:func:`~ldpsim.evaluation.cost.deployment_plan` plus :data:`FAKE_BYTES` per fake device, and a fake-device
sweep sends at most :data:`MAX_FAKE_REPORTS` fake reports.

The closed-form check (:func:`power_check`) is a check only when it has power: at its family-wise level
it must detect, with probability ≥ :data:`POWER`, a mean gain off its closed form by one standard
deviation of a single repeat; otherwise the result says "not checked" and how many repeats it would need
(docs/math.md §11.4).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ldpsim.evaluation.privacy import level_columns
from ldpsim.evaluation.cost import MAX_REPORT_USERS, CostError, deployment_plan, memory_budget
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout

#: ``ldpsim poison``: one table and its figures (fake devices in a deployment: one journaled row per cell,
#: and each cell's store until its row is)
LAYOUT = Layout("poison", ("poisoning.csv", "fakes.csv"), {"plots": ("*.png",), "cells": ("*.json",),
                                                   "stores": ("*/use_case=*/day=*/part-*.parquet",)})

#: most cell repeats of a population sweep (cells × repeats): each draws the genuine and fake aggregates
MAX_REPEATS = 2 * 10**6
#: peak bytes per fake device of a deployment (a day's reports, ids and gate arrays of every fake; measured:
#: 1.8 GB peak at 10⁶ fakes beside 300 devices, 0.45 GB at 10⁵)
FAKE_BYTES = 1400
#: most fake reports of a whole fake-device sweep (Σ over its deployments of fakes × days; measured about
#: 10 µs each, so about 3 minutes)
MAX_FAKE_REPORTS = 2 * 10**7
#: power the closed-form check must have against a disagreement of one standard deviation of a repeat
POWER = 0.8
FAKES, EPSILONS, TARGET_RANK = (0, 10, 20, 40, 80), (2.0, 4.0, 8.0), 80


@dataclass(frozen=True, repr=False)
class PoisonResult(BriefRepr):
    """What :func:`poison` returns.

    Attributes
    ----------
    kind : {"population", "fleet"}
    table : pandas.DataFrame
        ``poisoning.csv`` (population: one row per oracle × attack × ε × β × defense) or ``fakes.csv``
        (fleet: one row per ε × fakes × defense).
    check : dict
        Population: :func:`power_check` of the undefended cells; fleet: empty.
    out : Path or None
        The folder written (``out`` given), else None.
    """

    kind: str
    table: object
    check: dict = field(default_factory=dict)
    out: Path | None = None

    def lines(self, width: int | None = None) -> list[str]:
        """The table and the check, as ``ldpsim poison`` prints them: the first rows and the columns that fit
        ``width`` characters (default: the terminal's), the full table being the folder's CSV."""
        from ldpsim.evaluation.console_table import console_lines
        if self.kind == "population":
            cols = ["mechanism", "attack", "epsilon", *level_columns.COLUMNS, "beta", "defense", "gain", "gain_se",
                    "closed_form"]
        else:
            first = ["epsilon", *level_columns.COLUMNS, "fakes", "defense", "days_in_top"]   # the rest after
            cols = first + [c for c in self.table.columns if c not in (
                *first, "use_case", "devices", "days", "shards", "fake_sent", "fake_refused_attestation",
                "fake_refused_rate_limit")]
        full = "poisoning.csv" if self.kind == "population" else "fakes.csv"
        notes = [FLEET_EPSILON] if self.kind != "population" else [level_columns.note(who="a genuine device")] + (
            [RAPPOR_EPSILON] if (self.table.get("mechanism") == "rappor").any() else [])
        notes = notes if "epsilon" in self.table else []
        out = console_lines(self.table, cols, width=width, full=str(self.out / full) if self.out else full,
                            notes=notes)
        return out + ([self.check["message"]] if self.check else [])

    def to_folder(self, out, force: bool = False) -> Path:
        """Write the table and its plots into the poisoning folder ``out`` (another experiment's results
        there are replaced only with ``force``)."""
        with _open_folder(Path(out), _fingerprint(self.table.to_csv(index=False)), None, False, force) as folder:
            _write(self, folder)
        return Path(out)


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _open_folder(out: Path, fingerprint: str, seed, resume: bool, force: bool):
    from ldpsim.runtime.runfolder import RunFolder
    identity = {"fingerprint": fingerprint} if seed is None else {"fingerprint": fingerprint, "seed": seed}
    return RunFolder.open(out, LAYOUT, identity, resume=resume, replace=force)


#: a deployment's rows: the attacked use case's ε and what a genuine device gets over the run
FLEET_EPSILON = ("epsilon: ε of one report of the attacked use case; epsilon_item, epsilon_person: what a genuine "
                 "device's reports give one item of one person and one person over the run (the accountant, δ = 0)")
#: RAPPOR's cells: their ``epsilon`` is the permanent ε_∞, the user-level columns those of its one report
RAPPOR_EPSILON = ("rappor: epsilon is its permanent ε_∞; epsilon_item and epsilon_person are those of the one "
                  "report (epsilon_report in the CSV)")


def _write(result: PoisonResult, folder) -> None:
    """The table and plots into the open ``folder``, then the manifest says complete."""
    from ldpsim.scenarios.studies.poisoning.deployment_attack import plot_fake_sweep
    from ldpsim.scenarios.studies.poisoning.sweep import plot_gains
    from ldpsim.runtime.durable import make_dirs, write_file
    out, table = folder.root, result.table
    make_dirs(out / "plots")
    if result.kind == "population":
        write_file(out / "poisoning.csv", lambda tmp: table.to_csv(tmp, index=False))
        for eps in sorted(table["epsilon"].unique()):
            plot_gains(table[table["epsilon"] == eps], out / "plots" / f"poisoning_gain_eps{eps:g}.png")
    else:
        write_file(out / "fakes.csv", lambda tmp: table.to_csv(tmp, index=False))
        words = (table["use_case"] == "word").all()
        plot_fake_sweep(table, out / "plots" / ("fakes_words.png" if words else "fakes_top10.png"))
    folder.finalize(adopt=True)


def power_check(table, alpha: float = 0.01, power: float = POWER) -> dict:
    """Do the undefended cells agree with their closed forms, and could this check have seen it if not?

    Each cell's z = (gain − closed form)/se is compared with the two-sided Student-t bound at family-wise
    ``alpha`` (Bonferroni over the cells, r − 1 degrees of freedom for r repeats). Its power against a
    mean gain off by one standard deviation σ of a single repeat (effect size 1): the non-central t with
    δ = √r (docs/math.md §11.4). The check counts only when that power reaches ``power``; otherwise it
    says "not checked". Returns :func:`.sweep.closed_form_check`'s figures, ``checked``, ``power``, the
    smallest disagreement seen with probability ``power`` (in σ, and the largest in gain units over the
    cells), the repeats that would be needed, and the message to print.
    """
    from scipy import stats

    from ldpsim.scenarios.studies.poisoning.sweep import closed_form_check

    base = closed_form_check(table, alpha)
    none = table[table["defense"] == "none"]
    if none.empty:
        return {**base, "checked": False, "power": float("nan"), "repeats_needed": None,
                "message": "not checked: no undefended cell to compare with a closed form"}
    repeats, cells = int(none["repeats"].min()), base["cells"]

    def bound(r: int) -> float:
        return float(stats.t.isf(alpha / (2 * cells), r - 1))

    def power_at(r: int) -> float:
        upper = stats.nct.sf(bound(r), r - 1, math.sqrt(r))
        lower = stats.nct.cdf(-bound(r), r - 1, math.sqrt(r))  # far in the tail: scipy may give nan (≈ 0)
        return float(upper + (lower if np.isfinite(lower) else 0.0))

    achieved = power_at(repeats)
    needed = repeats
    while power_at(needed) < power:
        needed *= 2
    lo = max(repeats, needed // 2)
    while needed - lo > 1:
        mid = (lo + needed) // 2
        lo, needed = (lo, mid) if power_at(mid) >= power else (mid, needed)
    sigmas = (bound(repeats) + stats.norm.isf(1 - power)) / math.sqrt(repeats)  # ≈ detectable, in σ
    gain_units = float((none["gain_se"] * math.sqrt(repeats)).max() * sigmas)
    checked = achieved >= power
    if checked:
        message = (f"undefended cells vs closed forms: largest |z| = {base['max_abs_z']:.2f} over {cells} cells "
                   f"(bound {base['bound']:.2f} at family-wise α = {alpha:g}: "
                   f"{'all agree' if base['agree'] else 'DISAGREE'}; a disagreement of one standard deviation "
                   f"of a repeat is seen with probability {achieved:.2f})")
    else:
        message = (f"not checked: too few repeats ({repeats}) to detect a disagreement with the closed forms — "
                   f"the bound is {base['bound']:.4g} standard errors (family-wise α = {alpha:g} over {cells} "
                   f"cells); the smallest disagreement seen with probability {power:g} is about {sigmas:.3g} "
                   f"standard deviations of a repeat (up to {gain_units:.3g} in gain); {needed:,} repeats "
                   f"are needed")
    return {**base, "checked": checked, "power": achieved, "detectable_sd": sigmas, "detectable_gain": gain_units,
            "repeats_needed": needed, "message": message}


def _guard_population(cfg: dict, path) -> None:
    from ldpsim.evaluation.poisoning.defenses import DETECTABLE
    from ldpsim.scenarios.studies.poisoning.sweep import _mechanism
    per = len(cfg["attacks"]) * len(cfg["epsilon"]) * len(cfg["beta"])
    cells = len(cfg["mechanisms"]) * per * len(cfg["defenses"])
    if cells * cfg["repeats"] > MAX_REPEATS:
        fit = max(MAX_REPEATS // max(cells, 1), 0)
        raise CostError(f"{path}: [poisoning] repeats = {cfg['repeats']:,} × up to {cells:,} cells = "
                        f"{cells * cfg['repeats']:,} cell repeats, more than the {MAX_REPEATS:,} a poisoning sweep "
                        f"accepts; at most repeats = {fit:,} fit (or shorten the lists)")
    if "detection" in cfg["defenses"] and any(isinstance(_mechanism(m, cfg["epsilon"][0], cfg), DETECTABLE)
                                              for m in cfg["mechanisms"]):
        beta = max(cfg["beta"])
        users = (cfg["n"] + round(beta * cfg["n"] / (1 - beta))) * cfg["detection_repeats"]
        if users > MAX_REPORT_USERS:
            fit = MAX_REPORT_USERS // (cfg["n"] + round(beta * cfg["n"] / (1 - beta)))
            raise CostError(f"{path}: the detection defense perturbs every user: ([poisoning] n = {cfg['n']:,} + "
                            f"fakes) × detection_repeats = {cfg['detection_repeats']:,} = {users:,} reports per "
                            f"cell, more than {MAX_REPORT_USERS:,}; at most detection_repeats = {fit:,} fit "
                            "(or lower n)")


def _guard_fleet(cfg, fakes, epsilons, defenses, workers, where) -> None:
    plan = deployment_plan(cfg, workers or 1, where)
    most = max(fakes) if fakes else 0
    sent = sum(f * cfg.n_days for f in fakes) * len(epsilons) * len(defenses)
    if sent > MAX_FAKE_REPORTS:
        fit = MAX_FAKE_REPORTS // (cfg.n_days * len(epsilons) * len(defenses))
        raise CostError(f"{where}: fakes {list(fakes)} × {cfg.n_days} days × {len(epsilons)} ε × {len(defenses)} "
                        f"defenses = {sent:,} fake reports, more than the {MAX_FAKE_REPORTS:,} a fake-device sweep "
                        f"accepts; at most {fit:,} fakes in total over --fakes fit (or fewer days, ε, defenses)")
    need = plan.memory_bytes + FAKE_BYTES * most
    if need > memory_budget():
        fit = max(0, (memory_budget() - plan.memory_bytes) // FAKE_BYTES)
        raise CostError(f"{where}: {most:,} fake devices need about {FAKE_BYTES * most / 2**30:.2f} GiB beside the "
                        f"deployment's {plan.memory_bytes / 2**30:.2f} GiB, more than this machine's budget "
                        f"{memory_budget() / 2**30:.2f} GiB; at most about {fit:,} fakes fit (--fakes / [poisoning_fleet] fakes)")


def poison(scenario="poisoning", *, seed: int | None = None, repeats: int | None = None, deployment: bool = False,
           devices: int | None = None, days: int | None = None, fakes=None, epsilons=None,
           target_rank: int | None = None, word: str | None = None, workers: int | None = None,
           scheduler: str | None = None, out=None, force: bool = False, progress=None, log=None,
           resolve=Path) -> PoisonResult:
    """Run a poisoning experiment, as ``ldpsim poison`` does (``ldpsim.poison`` resolves shipped names).

    Parameters
    ----------
    scenario : str or Path
        A poisoning scenario (``[poisoning]`` or ``[poisoning_fleet]``) or, with ``deployment``, a
        deployment scenario (default then ``keyboard``); a file or a shipped name.
    seed, repeats
        Override the scenario's seed and (population) repeats (≥ 2).
    deployment : bool
        Fake devices in the deployment scenario ``scenario``, with the settings below.
    devices, days, fakes, epsilons, target_rank, word
        Fleet settings (override the ``[poisoning_fleet]`` table's).
    workers, scheduler
        Shards of each deployment (a local Dask cluster, or an existing scheduler).
    out : str or Path, optional
        The folder to own and write; None: nothing is written (fleet stores live in a temporary folder).
    force : bool
        Replace another experiment's results in ``out``.
    progress : callable, optional
        ``progress(done, total)``.
    log : callable, optional
        Receives notes (resuming, stale locks).
    resolve : callable
        Scenario name or path → file (``ldpsim.poison`` passes :func:`ldpsim.scenarios.catalog.resolve`,
        which also finds the shipped scenarios by name; here a plain path).

    Returns
    -------
    PoisonResult

    Raises
    ------
    InputError
        Invalid scenario or option (``ScenarioError``), an ``out`` that is not ours (``RunFolderError``),
        or a refused cost (``CostError``).
    """
    from ldpsim.scenarios.studies.poisoning.sweep import load_poisoning

    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 2):
        raise InputError(f"The 'repeats' parameter of poison must be an integer >= 2. Got {repeats!r} instead.")
    if deployment:
        fleet = None
        name = "keyboard" if str(scenario) == "poisoning" else scenario
    else:
        path = resolve(scenario)
        cfg = load_poisoning(path)
        if cfg["kind"] == "population":
            if word is not None:
                raise InputError(f"The 'word' parameter of poison (--word) applies only to fake devices in a "
                                 f"deployment (--deployment or a [poisoning_fleet] scenario); got {word!r} with "
                                 f"the population scenario {path}")
            if seed is not None:
                cfg["seed"] = seed
            if repeats is not None:
                cfg["repeats"] = repeats
            return _population(cfg, path, out, force, progress, log)
        fleet, name = cfg, cfg["scenario"]
    return _fleet(fleet, resolve(name), seed, devices, days, fakes, epsilons, target_rank, word, workers,
                  scheduler, out, force, progress, log)


def _population(cfg: dict, path, out, force: bool, progress, log) -> PoisonResult:
    from ldpsim.scenarios.studies.poisoning.sweep import run_poisoning
    _guard_population(cfg, path)
    if out is None:
        table = level_columns.beside(run_poisoning(cfg, progress), "epsilon_report")  # one report a device
        return PoisonResult("population", table, power_check(table))
    out = Path(out)
    settings = json.dumps(cfg, sort_keys=True, default=str)
    with _open_folder(out, _fingerprint(settings), cfg["seed"], False, force) as folder:
        for note in folder.notes:
            (log or print)(note)
        table = level_columns.beside(run_poisoning(cfg, progress), "epsilon_report")  # one report a device
        result = PoisonResult("population", table, power_check(table), out)
        _write(result, folder)
    return result


def _fleet(fleet, scenario: Path, seed, devices, days, fakes, epsilons, target_rank, word, workers, scheduler, out,
           force, progress, log) -> PoisonResult:
    from ldpsim.scenarios.studies.poisoning.deployment_attack import DEFENSES, fake_sweep
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment

    f = fleet or {}
    devices = devices or f.get("devices")
    days = days or f.get("days")
    seed = seed if seed is not None else f.get("seed")
    fakes = tuple(fakes if fakes is not None else f.get("fakes", FAKES))
    epsilons = tuple(epsilons if epsilons is not None else f.get("epsilon", EPSILONS))
    target_rank = target_rank or f.get("target_rank", TARGET_RANK)
    if word is None and f.get("use_case") == "word":
        word = f["word"]
    defenses = tuple(f.get("defenses", DEFENSES))
    for e in epsilons:
        if not (isinstance(e, (int, float)) and math.isfinite(e) and e > 0):
            raise InputError(f"The 'epsilons' parameter of poison must hold positive finite ε. Got {e!r}.")
    cfg, _ = load_deployment(scenario, devices, days, seed)
    target = _target(cfg, scenario, target_rank, word)
    _guard_fleet(cfg, fakes, epsilons, defenses, workers, Path(scenario).name)
    use_case = "event" if word is None else "word"
    shards = min(workers or 1, cfg.n_blocks)
    scheduler = scheduler or ("local" if shards > 1 else None)
    settings = json.dumps([dataclasses.asdict(cfg), list(fakes), list(epsilons), defenses, use_case, target],
                          default=str, ensure_ascii=False)
    if out is None:
        table = fake_sweep(cfg, target, fakes, epsilons, defenses, use_case, progress, None, shards, scheduler,
                           workers)
        return PoisonResult("fleet", table)
    out = Path(out)
    with _open_folder(out, _fingerprint(settings), cfg.seed, True, force) as folder:
        for note in folder.notes:
            (log or print)(note)
        if folder.finished("cells/") and log:
            log(f"resuming: {len(folder.finished('cells/'))} deployment(s) already done in {out}")
        table = fake_sweep(cfg, target, fakes, epsilons, defenses, use_case, progress, folder, shards, scheduler,
                           workers)
        result = PoisonResult("fleet", table, out=out)
        _write(result, folder)
    return result


def _target(cfg, scenario, target_rank: int, word):
    """The index of the pushed item, or the made-up word (checked: in the alphabet, typed by no one)."""
    from ldpsim.scenarios.studies.scenario.schema import ScenarioError
    if word is None:
        if not 1 <= target_rank <= len(cfg.items):
            raise ScenarioError(scenario, "--target-rank", f"must be in [1, {len(cfg.items)}] (the items)")
        return target_rank - 1
    uc = cfg.use_case("word")
    if uc is None:
        raise ScenarioError(scenario, "--word", "the deployment has no words use case ([use_case.words])")
    if uc.interactive:
        raise ScenarioError(scenario, "--word", f"the words use case runs the interactive protocol {uc.mechanism!r}, "
                            "whose devices answer rounds: fake reports need a one-shot protocol (sfp, pem, treehist)")
    try:
        uc.make_mechanism().codec.check_word(word)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(scenario, "--word", str(exc)) from None
    if word in cfg.words:
        raise ScenarioError(scenario, "--word", f"{word!r} is typed by the fleet; choose a made-up word")
    return word
