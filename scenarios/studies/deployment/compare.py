"""Several designs on the same fleet at the same end-to-end privacy: ``ldpsim.compare`` — docs/math.md §8.5.

A *design* is a mechanism with its parameters, whether the device memoizes, and an aggregation model
(``"ldp"``: the server sees each report; ``"shuffle"``: the server's shuffle, whose central ε is
stated beside). The budget is one number on one scale, chosen by the user: ε per device over the run
(``epsilon_device``) or ε of one report (``epsilon_report``). The accountant
(:func:`~ldpsim.evaluation.privacy.accountant.solve_epsilon`) finds each design's ε parameter that
spends exactly that budget with its reporting pattern (one report a day, memoized or fresh), so
RAPPOR runs at the ε_∞ whose reports cost the budget, not at an ε_∞ equal to it.

Every design runs the same fleet with the same seed (the same phones type the same emoji or words),
with the design as the fleet's only use case of its kind (event: emoji; word: typed words). One row
per design:

* ``epsilon`` (the parameter the accountant chose), ``epsilon_report``, ``epsilon_permanent``,
  ``epsilon_device`` (δ = 0), ``epsilon_device_at_delta`` at ``delta`` (for a memoized design: per value,
  between histories of one repetition pattern), ``epsilon_item`` (one item of one device over the run,
  docs/math.md §8.7), ``epsilon_person`` (per person over the run between
  arbitrary histories, docs/math.md §8.6; ∞ under pure memoization), and for a shuffle design
  ``epsilon_central``: the run's central ε at ``delta`` over its actual shuffled batches, each day
  read at its least amplified batch (:func:`~ldpsim.evaluation.privacy.shuffle_ledger.central_summary`);
* events: ``share_mse_top10`` (mean over days and the true top 10 of (estimate − true share)²) and
  ``share_mse_top10_theory`` (the same mean of the theory's variance + bias²) with its 95% interval
  (``mse_low``, ``mse_high``: the χ² quantiles of a mean of that many squared errors);
  ``top10_precision`` (pooled estimate's top 10 ∩ true top 10, over 10); ``rank_error`` (mean
  |estimated − true rank| of the true top 10);
* words: ``slang_first_day`` (first day the nightly top-k holds the new word; NaN: not found within
  the run) and ``words_f1`` (F1 of the last night's top-k);
* ``bytes_per_device`` uploaded over the run, ``server_cells`` (the aggregate's size, the server's
  state) and ``reports``;
* ``linked`` / ``stripped``: the deployment observer's accuracy guessing each tapped device's
  favourite emoji from its linked reports, or from same-day reports after stripping and shuffling;
* ``linking_linked`` / ``linking_stripped`` / ``linking_prior_only``: the linking observer's
  accuracy after the run's days when every device holds one emoji for the whole run (the case where
  linking fresh reports reveals the most; :mod:`~ldpsim.evaluation.adversary.linking`).
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ldpsim.evaluation.privacy.person_level import SAME_PATTERN
from ldpsim.evaluation.privacy.trust_models import TRUST_MODELS
from ldpsim.mechanisms.registry import takes, typical
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout
from ldpsim.mechanisms.deltas import DELTA_SPEND

#: ``ldpsim compare``: designs side by side at one budget
LAYOUT = Layout("compare", ("compare.csv", "spend.csv", "compare.png", "config.json", "report.html"))

#: aggregation models a design may name: the trust models on the server's LDP path (not collected)
AGGREGATIONS = tuple(name for name, model in TRUST_MODELS.items() if not model.collected)
#: devices simulated unless the caller chooses (the default comparison runs in under a minute)
DEFAULT_DEVICES = 4000
#: the columns of :attr:`Comparison.table`, in order (module docstring)
COLUMNS = ("design", "mechanism", "memoize", "aggregation", "kind", "epsilon", "epsilon_report", "epsilon_permanent",
           "epsilon_device", "epsilon_device_at_delta", "epsilon_item", "epsilon_person", "epsilon_central", "share_mse_top10", "share_mse_top10_theory",
           "mse_low", "mse_high", "top10_precision", "rank_error", "slang_first_day", "words_f1", "reports",
           "bytes_per_device", "server_cells", "linked", "stripped", "prior_only", "linking_linked",
           "linking_stripped", "linking_prior_only")


@dataclass(frozen=True)
class Design:
    """One design: mechanism, its parameters (without ``epsilon``: the budget sets it), memoization and
    aggregation model.

    Parameters
    ----------
    name : str
        Its label in tables and figures.
    mechanism : str
        Registry name (``ldpsim.MECHANISMS``): a frequency oracle (emoji) or a discovery protocol (words).
    params : tuple of (str, value) pairs, or a mapping
        The mechanism's other parameters; ``domain_size`` is filled from the fleet's items. An
        ``epsilon`` here is used only when no budget is given.
    memoize : bool
        The device re-sends the report of a value it has reported (``simulator/memoization.py``).
    aggregation : str
        One of :data:`AGGREGATIONS`.
    """

    name: str
    mechanism: str
    params: tuple = ()
    memoize: bool = False
    aggregation: str = "ldp"

    def __post_init__(self):
        from ldpsim.mechanisms import MECHANISMS

        if self.mechanism not in MECHANISMS:
            raise InputError(f"The 'mechanism' of design {self.name!r} must be one of {sorted(MECHANISMS)}. "
                             f"Got {self.mechanism!r} instead.")
        if self.aggregation not in AGGREGATIONS:
            raise InputError(f"The 'aggregation' of design {self.name!r} must be one of {AGGREGATIONS}. "
                             f"Got {self.aggregation!r} instead.")
        object.__setattr__(self, "params", tuple(sorted(dict(self.params).items())))


#: Apple's count-mean sketch, Google's RAPPOR and Microsoft's dBitFlip as deployed (memoized), and the
#: textbook's best oracles for a large domain (OLH, Hadamard response)
DEFAULT_DESIGNS = (
    Design("apple_cms", "cms", {**typical("cms", "deployed"), "seed": 7}),
    Design("rappor", "rappor", typical("rappor", "deployed"), memoize=True),
    Design("dbitflip", "dbitflip", typical("dbitflip", "deployed"), memoize=True),
    Design("olh", "olh"),
    Design("hr", "hr"),
)


def designs_from_variants(path) -> tuple[Design, ...]:
    """The designs of a scenario's ``[variants.<name>]`` tables (mechanism, epsilon, memoize, parameters)."""
    from ldpsim.scenarios.studies.scenario.schema import ScenarioError, load_toml

    raw = load_toml(path).get("variants", {})
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise ScenarioError(path, "variants", "must hold one [variants.<name>] table per design")
    out = []
    for name, table in raw.items():
        table = dict(table)
        try:
            out.append(Design(name, table.pop("mechanism", None), table, bool(table.pop("memoize", False)),
                              table.pop("aggregation", "ldp")))
        except InputError as exc:
            raise ScenarioError(path, f"variants.{name}", str(exc)) from None
    return tuple(out)


@dataclass(frozen=True, repr=False)
class Comparison(BriefRepr):
    """What :func:`compare` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per design (the module docstring's columns).
    spend : pandas.DataFrame
        The accountant's table per design (``design`` column): what one device spends.
    budget : dict
        ``per`` ("device" or "report", or None: each design at its own ε), ``epsilon``, ``delta``,
        ``days``, ``devices``, ``seed``, ``scenario``.
    """

    table: pd.DataFrame
    spend: pd.DataFrame
    budget: dict

    def budget_text(self) -> str:
        """The budget in words: "ε = 8 per device over 30 days (δ = 0)" or "ε = 1 a report"."""
        b = self.budget
        if b["per"] == "device":
            return f"ε = {b['epsilon']:g} per device over {b['days']} days (δ = 0, pure ε-LDP)"
        if b["per"] == "report":
            return f"ε = {b['epsilon']:g} a report"
        return "each design at its own ε (see epsilon_device)"

    def figure(self):
        """Error against design at the budget, each design's ε stated under its bar (a matplotlib Figure)."""
        from matplotlib.figure import Figure

        from ldpsim.evaluation.legend import quiet_corner

        t = self.table
        fig = Figure(figsize=(max(6.4, 1.3 * len(t)), 4.4))
        ax = fig.subplots()
        event = t[t["share_mse_top10"].notna()] if "share_mse_top10" in t else t.iloc[:0]
        x = np.arange(len(event))
        ax.bar(x, event["share_mse_top10"], color="C0", label="measured")
        ax.errorbar(x, event["share_mse_top10_theory"],
                    yerr=[event["share_mse_top10_theory"] - event["mse_low"],
                          event["mse_high"] - event["share_mse_top10_theory"]],
                    fmt="o", color="k", capsize=4, label="theory, 95% interval")
        ax.set_xticks(x, [f"{r.design}\nε {r.epsilon_report:.3g} a report"
                          + (f"\nε_∞ {r.epsilon_permanent:.3g}" if np.isfinite(r.epsilon_permanent) else "")
                          + f"\nε {r.epsilon_device:.3g} per device"
                          + (f"\n(same pattern; per person {r.epsilon_person:.3g})" if r.memoize else "")
                          for r in event.itertuples()], fontsize=8)
        ax.set(yscale="log", ylabel="MSE of the daily top-10 shares",
               title=f"Designs at the same budget: {self.budget_text()}")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8, loc=quiet_corner(ax))
        fig.tight_layout()
        return fig

    def lines(self, width: int | None = None) -> list[str]:
        """The comparison as text (what ``ldpsim compare`` prints): the columns that fit ``width`` characters
        (default: the terminal's; :func:`~ldpsim.evaluation.console_table.console_lines`), the full
        table being ``compare.csv``; under memoized designs, what their two ε columns mean."""
        from ldpsim.evaluation.console_table import console_lines
        cols = [c for c in ("design", "epsilon_device", "share_mse_top10", "share_mse_top10_theory", "mse_low",
                            "mse_high", "epsilon_report", "epsilon_item", "epsilon_person", "top10_precision",
                            "mechanism", "memoize", "epsilon", "epsilon_permanent", "epsilon_central", "rank_error", "slang_first_day",
                            "bytes_per_device", "server_cells", "linked", "stripped", "linking_linked")
                if c in self.table and self.table[c].notna().any()]
        scope = []
        if "epsilon_person" in self.table and self.table["memoize"].any():
            scope = [f"memoized designs: epsilon_device is ε {SAME_PATTERN}; epsilon_person is ε per person "
                     "over the run between arbitrary histories (inf: a change of report proves a change of value; "
                     "docs/math.md §8.6)"]
        return console_lines(self.table, cols, width=width, full="compare.csv", title=(
            f"Designs at the same budget: {self.budget_text()}; {self.budget['devices']:,} devices, "
            f"seed {self.budget['seed']}"), notes=scope)

    def to_folder(self, out, force: bool = False) -> Path:
        """Write ``compare.csv``, ``spend.csv``, ``compare.png``, ``config.json`` and ``report.html`` into
        the run folder ``out``; a finished comparison there is replaced only with ``force``."""
        import json

        from ldpsim.evaluation.report.html import Preformatted, write_report_html
        from ldpsim.runtime import durable
        from ldpsim.runtime.runfolder import RunFolder

        out = Path(out)
        fingerprint = json.dumps(self.budget, sort_keys=True, default=str)
        with RunFolder.open(out, LAYOUT, {"fingerprint": fingerprint, "seed": self.budget["seed"]},
                            replace=force, keep_finished=True) as folder:
            for name, frame in (("compare.csv", self.table), ("spend.csv", self.spend)):
                durable.write_file(folder.path(name), lambda p, f=frame: f.to_csv(p, index=False, encoding="utf-8"))
                folder.record(name)
            fig = self.figure()
            durable.write_file(folder.path("compare.png"), lambda p: fig.savefig(p, dpi=110, format="png"))
            folder.record("compare.png")
            folder.write_text("config.json", json.dumps(self.budget, indent=1, default=str) + "\n")
            write_report_html(folder.path("report.html"), "Designs at the same privacy budget",
                              [("Budget", self.budget_text()), ("Designs side by side", [self.table, fig]),
                               ("What one device spends (the accountant)", self.spend),
                               ("As printed", Preformatted("\n".join(self.lines(width=10_000))))],
                              config=self.budget, seed=self.budget["seed"])
            folder.record("report.html")
            folder.finalize()
        return out


def _with_vocabulary(cfg, vocabulary):
    """The fleet with the vocabulary's items and weights (None: the scenario's own)."""
    if vocabulary is None:
        return cfg
    if isinstance(vocabulary, (str, Path)):
        from ldpsim.evaluation.workloads import load_vocabulary
        vocabulary = load_vocabulary(vocabulary)
    weights = getattr(vocabulary, "weights", None)  # a Vocabulary, or a categorical Workload's counts
    items, weights = tuple(vocabulary.items), tuple(vocabulary.counts if weights is None else weights)
    trend = cfg.trend_item if cfg.trend_item is not None and cfg.trend_item < len(items) else None
    return dataclasses.replace(cfg, items=items, item_weights=weights, trend_item=trend)


def _use_case(cfg, design: Design, epsilon: float | None):
    """The design as the fleet's use case of its kind, at ``epsilon`` (None: its own parameter)."""
    from ldpsim.mechanisms import MECHANISMS, DiscoveryProtocol
    from ldpsim.simulator.config import UseCase

    cls = MECHANISMS[design.mechanism]
    params = dict(design.params)
    if epsilon is not None:
        params["epsilon"] = epsilon
    if "epsilon" not in params:
        raise InputError(f"Design {design.name!r} states no 'epsilon' and no budget was given: pass epsilon_device "
                         f"or epsilon_report.")
    kind = "word" if issubclass(cls, DiscoveryProtocol) else "event"
    if kind == "event" and takes(design.mechanism, "domain_size"):
        params.setdefault("domain_size", len(cfg.items))
    old = cfg.use_case(kind)
    extra = {"top_k": old.top_k} if kind == "word" and old is not None else {}
    try:
        return UseCase("emoji" if kind == "event" else "words", kind, design.mechanism, tuple(params.items()),
                       memoize=design.memoize, **extra)
    except (TypeError, ValueError) as exc:
        raise InputError(f"Design {design.name!r}: {exc}") from None


def _solve(cfg, design: Design, per, budget) -> float | None:
    from ldpsim.evaluation.privacy.accountant import memo_classes, solve_epsilon

    if per is None:
        return None
    uc = _use_case(cfg, design, 1.0)
    classes = memo_classes(cfg, uc)
    return solve_epsilon(lambda e: _use_case(cfg, design, e).make_mechanism(), budget, cfg.n_days, classes, per=per)


def _event_columns(m: dict, memoized: bool) -> dict:
    """Accuracy columns of the event use case. The theory's interval for the mean squared error: a mean of
    n squared errors ≈ theory·χ²_n/n when the n (day, item) errors are independent; a memoized design
    re-sends a device's response on later days, so its days are correlated, and its interval counts
    each item once (χ²_10/10: wider, never too narrow)."""
    from scipy.stats import chi2

    daily, pooled = m["daily"], m["pooled"]
    if daily.empty:
        return {}
    top = pooled.nsmallest(10, "true_rank")
    in_top = daily[daily["item"].isin(top["item"])]
    err2 = (in_top["estimate"] - in_top["true_donated"]) ** 2
    theory = in_top["sd"] ** 2 + in_top["bias"] ** 2
    n = in_top["item"].nunique() if memoized else len(in_top)
    mse_theory = float(theory.mean())
    return {"share_mse_top10": float(err2.mean()), "share_mse_top10_theory": mse_theory,
            "mse_low": mse_theory * chi2.ppf(0.025, n) / n, "mse_high": mse_theory * chi2.ppf(0.975, n) / n,
            "top10_precision": float(top["item"].isin(pooled.nsmallest(10, "est_rank")["item"]).mean()),
            "rank_error": float((top["est_rank"] - top["true_rank"]).abs().mean())}


def _linking(cfg, uc) -> dict:
    """The linking observer's accuracy after the run's days
    (:func:`~ldpsim.evaluation.adversary.linking.linking_accuracy`): each of ``cfg.adversary_devices``
    devices reports one value drawn from the fleet's weights every day, fresh or memoized as the design does."""
    from ldpsim.evaluation.adversary.linking import linking_accuracy

    if uc.kind != "event":
        return {}
    mech = uc.make_mechanism()
    items = cfg.items if mech.takes_tokens else np.arange(len(cfg.items))
    try:
        last = linking_accuracy(mech, items, cfg.item_weights, n_devices=max(cfg.adversary_devices, 1),
                                n_days=cfg.n_days, memoize=uc.memoize,
                                rng=np.random.default_rng(np.random.SeedSequence(cfg.seed, spawn_key=(10,))))
        last = last.iloc[-1]
    except NotImplementedError:  # no likelihood of this mechanism's reports
        return {}
    return {"linking_linked": float(last["linked"]), "linking_stripped": float(last["stripped"]),
            "linking_prior_only": float(last["prior_only"])}


def _fleet_and_designs(path: Path, designs, devices, days, seed, vocabulary):
    """The fleet every design runs on (the scenario's, with the overrides and the vocabulary) and the designs."""
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment

    cfg, _ = load_deployment(path, devices, days, seed)
    cfg = _with_vocabulary(cfg, vocabulary)
    return cfg, tuple(designs if designs is not None else designs_from_variants(path) or DEFAULT_DESIGNS)


def _plan(cfg, designs, path):
    """The comparison's plan: one deployment per design, one after another, each estimated as ``ldpsim run``
    estimates a run in one process (:func:`~ldpsim.evaluation.cost.deployment_plan`, which raises
    :class:`~ldpsim.evaluation.cost.CostError` when it cannot fit this machine)."""
    from ldpsim.evaluation.cost import Plan, deployment_plan

    one = deployment_plan(cfg, 1, path)
    return Plan([f"{len(designs)} design(s), each a deployment of the same fleet, run one after another: "
                 f"{', '.join(d.name for d in designs)}",
                 f"each: {cfg.n_devices:,} devices × {cfg.n_days:,} days (+{cfg.drain_days} drain days) over "
                 f"{len(cfg.items):,} items, seed {cfg.seed}, in this process"], one.memory_bytes)


def compare_plan(scenario, designs=None, *, devices: int | None = DEFAULT_DEVICES, days: int | None = None,
                 seed: int | None = None, vocabulary=None):
    """What :func:`compare` would run with these arguments, and its peak-memory estimate, without running
    anything (``ldpsim compare --dry-run``).

    Returns
    -------
    ldpsim.evaluation.cost.Plan

    Raises
    ------
    ldpsim.evaluation.cost.CostError
        A design's deployment cannot fit this machine (the estimate and the sizes that fit are named).
    """
    path = Path(scenario)
    return _plan(*_fleet_and_designs(path, designs, devices, days, seed, vocabulary), path)


def compare(scenario, designs=None, *, epsilon_device: float | None = None,
            epsilon_report: float | None = None, delta: float = DELTA_SPEND, devices: int | None = DEFAULT_DEVICES,
            days: int | None = None, seed: int | None = None, vocabulary=None) -> Comparison:
    """Run several designs on the same fleet at the same end-to-end privacy (docs/math.md §8.5).

    Parameters
    ----------
    scenario : str or Path
        A deployment scenario file (its fleet, days and seed; its ``[variants.*]`` are the designs
        when ``designs`` is None). ``ldpsim.compare`` also takes a shipped name (``"keyboard"``).
    designs : sequence of Design, optional
        Default: the scenario's variants, else :data:`DEFAULT_DESIGNS`.
    epsilon_device, epsilon_report : float, optional
        The budget (at most one): ε per device over the run (δ = 0), or ε of one report. Neither:
        every design at its own ``epsilon``.
    delta : float
        δ of the (ε, δ) columns (PLD composition, central ε after the shuffle), in (0, 10⁻³]
        (:data:`~ldpsim.mechanisms._validation.DELTA_MAX`).
    devices, days, seed : int, optional
        Override the fleet size (default :data:`DEFAULT_DEVICES`; None: the scenario's), the days and
        the seed.
    vocabulary : path, Vocabulary or Workload, optional
        The items and their weights: a file read by ``evaluation.workloads.load_vocabulary``, an object
        with ``items`` and ``weights``, or a categorical workload (``items``, ``counts``); default: the
        scenario's.

    Returns
    -------
    Comparison
    """
    from ldpsim.evaluation.deployment.estimates import measure
    from ldpsim.evaluation.privacy.accountant import device_spend
    from ldpsim.evaluation.privacy.shuffle_ledger import central_summary
    from ldpsim.simulator.deployment import run
    from ldpsim.simulator.fleet import stream

    if epsilon_device is not None and epsilon_report is not None:
        raise InputError("Give one budget: epsilon_device or epsilon_report, not both.")
    per, budget = ("device", epsilon_device) if epsilon_device is not None else \
        ("report", epsilon_report) if epsilon_report is not None else (None, None)
    if budget is not None and not (isinstance(budget, (int, float)) and 0 < budget < math.inf):
        raise InputError(f"The 'epsilon_{per}' budget must be a float in the range (0, inf). Got {budget!r} instead.")
    from ldpsim.mechanisms._validation import check_delta

    check_delta("compare", delta)
    path = Path(scenario)
    cfg, designs = _fleet_and_designs(path, designs, devices, days, seed, vocabulary)
    _plan(cfg, designs, path)  # refused before any design runs when one cannot fit (evaluation/cost.py)
    rows, spends = [], []
    for design in designs:
        uc = _use_case(cfg, design, _solve(cfg, design, per, budget))
        if uc.kind == "word" and not cfg.words:
            raise InputError(f"Design {design.name!r} discovers words, but the fleet of {path.name} types none.")
        variant = dataclasses.replace(cfg, use_cases=(uc,), budget_daily=math.inf, budget_total=math.inf)
        with tempfile.TemporaryDirectory(prefix="ldpsim-compare-") as tmp:
            result = run(variant, tmp)
        m = measure(variant, result, stream(variant.seed, "measure"))
        s = m["summary"]
        spend = device_spend(variant, delta)
        central = math.nan
        if design.aggregation == "shuffle":  # the run's own shuffled batches, the least amplified one per day
            central = central_summary(variant, result, delta)[2].get("central_epsilon_device_worst", math.nan)
        own = spend.table.iloc[0]
        g = uc.guarantee
        agg = next(iter(result.aggregates.values()), None)
        rows.append({"design": design.name, "mechanism": design.mechanism, "memoize": design.memoize,
                     "aggregation": design.aggregation, "kind": g.label, "epsilon": float(dict(uc.params)["epsilon"]),
                     "epsilon_report": g.epsilon_report,
                     "epsilon_permanent": g.epsilon_permanent if uc.memoize else math.nan,
                     "epsilon_device": float(own["epsilon_device"]),
                     "epsilon_device_at_delta": float(own["epsilon_device_at_delta"]),
                     "epsilon_item": float(own["epsilon_item"]),
                     "epsilon_person": float(own["epsilon_person"]),
                     "epsilon_central": float(central),
                     **_event_columns(m, uc.memoize),
                     "slang_first_day": s.get("slang_first_day_found", math.nan) if uc.kind == "word" else math.nan,
                     "words_f1": s.get("words_f1_last_day", math.nan) if uc.kind == "word" else math.nan,
                     "reports": int(sum(a.n for a in result.aggregates.values())),
                     "bytes_per_device": s["bytes_total"] / variant.n_devices,
                     "server_cells": int(np.size(agg.data)) if agg is not None else 0,
                     "linked": s.get("adversary_linked", math.nan), "stripped": s.get("adversary_stripped", math.nan),
                     "prior_only": s.get("adversary_prior_only", math.nan)})
        rows[-1].update(_linking(variant, uc))
        spends.append(spend.table.assign(design=design.name))
    table = pd.DataFrame(rows)
    table = table[[c for c in COLUMNS if c in table]]
    info = {"per": per, "epsilon": budget, "delta": delta, "days": cfg.n_days, "devices": cfg.n_devices,
            "seed": cfg.seed, "scenario": str(path), "designs": [dataclasses.asdict(d) for d in designs]}
    return Comparison(table, pd.concat(spends, ignore_index=True), info)
