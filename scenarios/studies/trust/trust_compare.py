"""Trust models side by side at equal (ε, δ) per device over the run — docs/math.md §9.6.

:func:`compare_trust_models` calibrates every model of :data:`~ldpsim.evaluation.privacy.trust_models.MODELS`
to the same ε per device over ``days`` days at one δ (sample-and-threshold: the (rate, threshold) of least
error at that ε, :func:`tune_sample_threshold`), then measures one day of a fleet's use case at the count
level (exact laws, ``repeats`` draws; default: the keyboard scenario's emoji,
:mod:`~ldpsim.scenarios.studies.trust.trust_fleet`) next to its exact theory: MSE with the theory's interval,
top-k precision, the smallest frequency reliably detected, the days until a new word is found by the
discovery design the model enables (on the fleet's typed words, each device bounded first, at ε per person over
the run: :mod:`~ldpsim.scenarios.studies.trust.bounded_discovery`) and the typed words its bound drops, bytes per
device, who must be trusted, and what is left if they are not.

>>> r = compare_trust_models("zipf", n=20_000, domain_size=50, epsilons=(4.0,), models=("ldp", "two_server"),
...                          repeats=3, discovery=False, rng=1)
>>> sorted(r.table["model"])
['ldp', 'two_server']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.cost import trust_comparison_plan
from ldpsim.evaluation.privacy.trust_accounting import TrustModel, calibrate_threshold
from ldpsim.evaluation.privacy.trust_exact import HardwareSampleThreshold
from ldpsim.evaluation.privacy.trust_levels import trust_levels
from ldpsim.evaluation.privacy.trust_models import DEFAULTS, MODELS
from ldpsim.scenarios.studies.trust.bounded_discovery import MEASURES, bounded_days_to_discovery
from ldpsim.scenarios.studies.trust.trust_fleet import BOUND, TYPED, Fleet, keyboard_fleet, zipf_fleet
from ldpsim.mechanisms._validation import as_generator, check_delta, check_int, check_real
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.evaluation.confidence import Z95

#: share of devices whose upload arrives before the secure-aggregation round closes (channel dropouts)
ARRIVAL = 0.9
#: sampling rates tried by :func:`tune_sample_threshold` (geometric, 0.1 % to 50 %)
RATES = tuple(float(x) for x in np.geomspace(0.001, 0.5, 13))


def counted_reports(model: TrustModel, total: int) -> float:
    """The expected number of reports a day's estimate covers: every report, but under secure aggregation
    only those that arrive before the round closes (ARRIVAL of them) — the denominator of its frequencies."""
    return model.counted_reports(total, ARRIVAL)


def tune_sample_threshold(target_epsilon: float, fleet: Fleet, delta: float, rates=RATES) -> TrustModel | None:
    """The sample-and-threshold model at ``target_epsilon`` per device over the run with the least exact MSE
    on ``fleet``'s counts: for each sampling rate p of ``rates`` the smallest threshold τ meeting the target
    (:func:`~ldpsim.evaluation.privacy.trust_accounting.calibrate_threshold`), then the (p, τ) of least mean MSE
    (docs/math.md §9.6). None if no rate reaches the target."""
    best, best_mse = None, math.inf
    for rate in rates:
        model = calibrate_threshold(HardwareSampleThreshold(rate=float(rate), threshold=1), target_epsilon,
                                    fleet.devices, fleet.days, delta, fleet.reports_per_day)
        if model is not None:
            mse = float(np.mean(model.sampler().moments(fleet.counts)[1]))
            if mse < best_mse:
                best, best_mse = model, mse
    return best


def comparison_model(name: str, epsilon: float, fleet: Fleet, delta: float) -> TrustModel | None:
    """Model ``name`` as the comparison runs it at ε per device over ``fleet.days`` days: calibrated from
    :data:`DEFAULTS` (cohorts no larger than the day's devices; the noisy threshold at its false-alarm
    level), or, for a model whose guarantee follows from its threshold, the (rate, threshold) of least
    error (:func:`tune_sample_threshold`; None if no rate reaches ε)."""
    start = DEFAULTS[name]
    if start.given_instead is not None:
        return tune_sample_threshold(epsilon, fleet, delta)
    return start.for_fleet(fleet.devices).for_target(epsilon, fleet.devices, fleet.days, delta, fleet.counts.size,
                                                     fleet.reports_per_day)


def measure_cell(model: TrustModel, counts: np.ndarray, repeats: int, top_k: int, rng) -> dict:
    """``repeats`` count-level draws of one day's estimate: mean squared error per item and top-k precision
    (one comparison cell; the benchmark times it)."""
    true_top = set(np.argsort(-counts, kind="stable")[:top_k].tolist())
    errs, precision = [], []
    for _ in range(repeats):
        est, target = model.release(counts, rng, ARRIVAL)
        errs.append(np.mean((est - target) ** 2))
        precision.append(len(true_top & set(np.argsort(-est, kind="stable")[:top_k].tolist())) / top_k)
    return {"mse_measured": float(np.mean(errs)), "top_k_precision": float(np.mean(precision))}


@dataclass(repr=False)
class TrustComparison(BriefRepr):
    """What :func:`compare_trust_models` returns: one row per (model, ε over the run) of one day's frequencies
    (``table``), and of each model's new-word design at that ε per person over the run (``discovery``; None
    when not run); the error curves."""

    table: pd.DataFrame
    params: dict
    discovery: pd.DataFrame | None = None

    def figure(self):
        """Relative RMSE of one day's frequency estimates against ε per device over the run, one line per
        model (log–log): the exact theory as the line, the measured RMSE as markers, and where the errors
        are near normal the theory's 95 % interval of the measured value (band). Returns a matplotlib Figure."""
        from matplotlib.figure import Figure     # no pyplot: the caller's backend is left alone

        fig = Figure(figsize=(8.8, 4.4))
        ax = fig.subplots()
        for model, rows in self.table.groupby("model", sort=False):
            rows = rows.sort_values("epsilon_device")
            n = rows["reports_counted"].to_numpy()       # frequencies of the reports each estimate covers
            line, = ax.plot(rows["epsilon_device"], rows["rmse_frequency_theory"], label=f"{model} ({rows['design'].iloc[0]})")
            ax.plot(rows["epsilon_device"], np.sqrt(rows["mse_measured"]) / n, "o", color=line.get_color(), ms=4)
            low, high = rows["mse_low"].to_numpy(), rows["mse_high"].to_numpy()
            if np.isfinite(low).all():
                ax.fill_between(rows["epsilon_device"], np.sqrt(np.maximum(low, 0)) / n, np.sqrt(high) / n,
                                color=line.get_color(), alpha=0.2, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        # one kind of guarantee on the axis: (ε, δ) per device over the run against the released output
        # (an ε-LDP device is also (ε, 0)-DP there); who must be trusted for it differs by line
        ax.set_xlabel(f"ε per device over {self.params['days']} days, (ε, δ ≤ {self.params['delta']:g}) against the "
                      "released output", fontsize=8)
        ax.set_ylabel("RMSE of one day's frequencies")
        ax.set_title(f"Trust models at equal ε per device — {self.params['fleet']}: {self.params['devices']:,} devices a "
                     f"day, D = {self.params['domain_size']:,} items\nline: theory; dots: measured; band: theory's 95 % "
                     "interval", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)  # beside the axes
        fig.tight_layout()
        return fig


def _mse_interval(var: np.ndarray, repeats: int, z: float = Z95) -> tuple[float, float]:
    """The theory's interval of the measured MSE: the mean of ``repeats`` × D squared errors, each error
    zero-mean normal with variance var_i, has mean Σvar_i/D and sd √(2Σvar_i²/repeats)/D (docs/math.md §9.6)."""
    mean = float(np.mean(var))
    sd = math.sqrt(2 * float(np.sum(var ** 2)) / repeats) / var.size
    return mean - z * sd, mean + z * sd


def _fleet_and_plan(workload, epsilons, models, days, delta, discovery, vocabulary, devices, n, domain_size, zipf_s):
    """The comparison's fleet and plan (:func:`~ldpsim.evaluation.cost.trust_comparison_plan`, which refuses one
    that cannot fit), after the arguments are checked."""
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        raise InputError(f"The 'models' parameter of compare_trust_models must hold names from "
                         f"{', '.join(MODELS)}. Got {unknown[0]!r} instead.")
    if not len(epsilons):
        raise InputError("The 'epsilons' parameter of compare_trust_models must hold at least one ε. Got none.")
    for eps in epsilons:
        check_real("compare_trust_models", "epsilons", eps, 0.0, math.inf)
    check_delta("compare_trust_models", delta)
    fleet = zipf_fleet(n, domain_size, zipf_s, days) if workload == "zipf" else \
        keyboard_fleet(workload, vocabulary, days, devices)
    return fleet, trust_comparison_plan(fleet, len(epsilons), len(models), discovery)


def comparison_plan(workload: str = "keyboard", epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), models=MODELS, days: int = 30,
                    delta: float = DELTA_RELEASE, discovery: bool = True, vocabulary=None, devices: int | None = None,
                    n: int = 1_000_000, domain_size: int = 2000, zipf_s: float = 1.1):
    """What :func:`compare_trust_models` would run with these arguments (the same parameters), and its
    CPU-time and memory estimates, without running it (``ldpsim trust --compare --dry-run``).

    Returns
    -------
    ldpsim.evaluation.cost.Plan

    Raises
    ------
    ldpsim.evaluation.cost.CostError
        Beyond an hour of CPU time or this machine's memory budget (the days that fit are named).
    """
    return _fleet_and_plan(workload, epsilons, models, days, delta, discovery, vocabulary, devices, n, domain_size,
                           zipf_s)[1]


def compare_trust_models(workload: str = "keyboard", epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), models=MODELS,
                         days: int = 30, delta: float = DELTA_RELEASE, top_k: int = 10, repeats: int = 20,
                         discovery: bool = True, vocabulary=None, devices: int | None = None,
                         n: int = 1_000_000, domain_size: int = 2000, zipf_s: float = 1.1,
                         rng=None) -> TrustComparison:
    """Every model at the same ε per device over ``days`` days, one row per (model, ε).

    Parameters
    ----------
    workload : str
        ``"zipf"`` (synthetic: ``n`` devices, ``domain_size`` items, Zipf(``zipf_s``)), or a deployment
        scenario (shipped name or file, default ``"keyboard``): its event use case's fleet
        (:func:`~ldpsim.scenarios.studies.trust.trust_fleet.keyboard_fleet`, with ``vocabulary`` and ``devices``).
    epsilons : sequence of float
        Targets for ε per device over the run.
    models : sequence of str
        A subset of :data:`~ldpsim.evaluation.privacy.trust_models.MODELS`.
    days : int
        Length of the run the ε is spent over.
    delta : float
        δ of every central guarantee, in (0, 10⁻³] (:data:`~ldpsim.mechanisms._validation.DELTA_MAX`).
    top_k : int
        k of the top-k precision.
    repeats : int
        Count-level draws of one day per row (the measured MSE and precision).
    discovery : bool
        Also run each model's discovery design (days until a new word is found; fleets with words).
    rng : numpy.random.Generator, int or None

    Raises
    ------
    ldpsim.evaluation.cost.CostError
        A comparison beyond an hour of CPU time or this machine's memory, refused before any work
        (:func:`comparison_plan` gives the estimate).

    Returns
    -------
    TrustComparison
        ``table`` columns: model, design, epsilon_target, epsilon_device, parameter, epsilon_report, epsilon_day,
        epsilon_item, epsilon_person (docs/math.md §8.7),
        mse_theory, mse_low, mse_high, mse_measured, top_k_precision, reports_counted, rmse_frequency_theory,
        min_frequency, bytes_per_device, trusted, if_misbehaving. ``discovery`` (with ``discovery=True``)
        columns: model, discovery, epsilon_target and
        :data:`~ldpsim.scenarios.studies.trust.bounded_discovery.MEASURES`: the design, its ε per person and
        per word over the run at its δ (each at ``epsilon_target`` per person, its accountant over the cells
        the bound allows, docs/math.md §8.8), whether and when it finds the new word (one draw of the typing,
        seed ``params["discovery_seed"]``: ``rng`` if an int, else 0), and what its bound,
        :data:`.trust_fleet.TYPED` words a device a night kept by :data:`.trust_fleet.BOUND`, drops. Units and
        what NaN and inf mean: :data:`~ldpsim.evaluation.privacy.trust_tables.COLUMNS` and
        :data:`~ldpsim.evaluation.privacy.trust_tables.DISCOVERY_COLUMNS`.
    """
    repeats = check_int("compare_trust_models", "repeats", repeats, low=1)
    fleet = _fleet_and_plan(workload, epsilons, models, days, delta, discovery, vocabulary, devices, n, domain_size,
                            zipf_s)[0]
    seed = rng if isinstance(rng, int) else None
    rng = as_generator(rng)
    counts, d, m = fleet.counts, fleet.counts.size, fleet.devices
    total = int(counts.sum())
    rows, found = [], []
    for eps in epsilons:
        if discovery:
            designs = bounded_days_to_discovery(models, eps, fleet, delta, seeds=(seed or 0,))
            found += [{"model": name, "epsilon_target": eps, **designs[name]} for name in models]
        for name in models:
            model = comparison_model(name, eps, fleet, delta)
            if model is None:
                continue                   # no sampling rate reaches this ε: no row
            g = {x.scope: x for x in model.guarantees(m, days, delta, fleet.reports_per_day)}
            mse_th, sd0 = model.theory(counts, ARRIVAL)
            counted = counted_reports(model, total)
            low, high = (math.nan, math.nan) if model.biased \
                else _mse_interval(mse_th, repeats)     # biased, non-normal errors: no interval stated
            rows.append({"model": name, "design": model.design(), "epsilon_target": eps,
                         "epsilon_device": g["run"].epsilon, "parameter": model.parameter(),
                         "epsilon_report": g["report"].epsilon, "epsilon_day": g["day"].epsilon,
                         **trust_levels(model, m, days, delta, fleet.reports_per_day),
                         "mse_theory": float(np.mean(mse_th)), "mse_low": low, "mse_high": high,
                         **measure_cell(model, counts, repeats, top_k, rng),
                         "reports_counted": counted,
                         "rmse_frequency_theory": math.sqrt(float(np.mean(mse_th))) / counted,
                         "min_frequency": model.detection_floor(sd0, d, total) / counted,
                         "bytes_per_device": model.upload_bytes(d), "trusted": model.trusted,
                         "if_misbehaving": g["misbehaving server"].epsilon})
    params = {"fleet": fleet.name, "devices": m, "reports": total, "domain_size": d, "days": days, "delta": delta,
              "top_k": top_k, "repeats": repeats, "epsilons": list(epsilons), "models": list(models), "seed": seed,
              "typed": TYPED, "bound": BOUND, "discovery_seed": seed or 0}
    new_words = pd.DataFrame(found, columns=["model", "discovery", "epsilon_target", *MEASURES]) if discovery else None
    return TrustComparison(pd.DataFrame(rows), params, new_words)

