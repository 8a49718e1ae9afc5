"""A deployment run's trend metrics for its own design — docs/math.md §12.6 and §12.8.

When a run's scenario plants a trending item (``[trend]``: its share of the events rises from
``start_day``), :func:`run_trend` watches that item's daily count with the trailing-window
:class:`~ldpsim.evaluation.trends.detection.Detector` of ``ldpsim trends`` and measures, on the run's own
releases and over the run's own days only:

* the **detection delay**: the first alarm on or after the start day, minus the start day (NaN: no
  alarm by the run's last day);
* **false alarms per month**: alarms on the days before the start (the item is not rising yet), per 30
  of those days, beside their theory (the alarm probability of those days at the item's own baseline);
  and what a detection list of the run is worth: its expected false alarms for an item nobody uses over
  all the run's days;
* the **tracking error** of the daily count, and the **smallest growth** the run's design detects by its
  last day (at the run's ε per person), each beside its theory;

all from :mod:`ldpsim.evaluation.trends.detection`. The design is the run's event use case
(:class:`RunDesign`): each day's released count of the item is ĉ_t = n_t·p̂_t from the n_t reports of
the day, with the frequency oracle's bias and variance (:func:`~ldpsim.evaluation.deployment.estimates.share_theory`,
docs/math.md §4.1), linear in the item's count (§12.8). Days are independent (fresh reports each day),
so window variances add.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.deployment.estimates import event_mechanism, mechanism_label, share_theory
from ldpsim.evaluation.trends.designs import DesignGuarantee, gaussian_thresholds, trailing_sum
from ldpsim.evaluation.trends.detection import (DAYS_PER_MONTH, Detector, first_alarm, smallest_growth, theory_delay,
                                                theory_tracking_error, tracking_error)
from ldpsim.runtime.brief_repr import BriefRepr

#: the run's detector: 7-day window, one item watched, 0.05 expected false alarms a month (as ``ldpsim trends``)
RUN_DETECTOR = Detector()


def window_sums(values, lengths) -> np.ndarray:
    """Σ of the last ``lengths[t]`` values ending on each day t."""
    c = np.concatenate([[0.0], np.cumsum(values, dtype=float)])
    end = np.arange(1, len(lengths) + 1)
    return c[end] - c[end - np.asarray(lengths)]


@dataclass(frozen=True, eq=False)
class RunDesign:
    """The run's event use case as a design of one item's daily count (docs/math.md §12.8).

    The count is the item's number among the day's n_t reports; a design's share π_t is that count over
    n, the most reports of any day of the run (so ``n·π_t`` is the count and π_t ≤ 1). The release's bias and variance are linear in the count
    c: b(c) = b₀ + (c/n_t)(b₁ − b₀), V(c) = V₀ + (c/n_t)(V₁ − V₀), with (b₀, V₀) of an item nobody uses
    (its reports spread over the other items in the day's proportions) and (b₁, V₁) of n_t reports all
    of the item.

    Parameters
    ----------
    name : str
        The mechanism and its ε a report.
    guarantee : DesignGuarantee
        ε per person over the run of the use case (the accountant's).
    reports : ndarray, shape (T,)
        n_t, the reports of each day (0: none).
    null_bias, null_var, full_bias, full_var : ndarray, shape (T,)
        b₀, V₀, b₁, V₁ of each day, in counts.
    """

    name: str
    guarantee: DesignGuarantee
    reports: np.ndarray
    null_bias: np.ndarray
    null_var: np.ndarray
    full_bias: np.ndarray
    full_var: np.ndarray

    @property
    def placement(self) -> str:
        """Always ``"local"``: the reports are privatized on the devices."""
        return "local"

    def release_moments(self, counts) -> tuple[np.ndarray, np.ndarray]:
        """(bias, variance) of each day's released count when the item's count among the reports is ``counts``."""
        frac = np.divide(counts, self.reports, out=np.zeros(self.reports.size), where=self.reports > 0)
        return (self.null_bias + frac * (self.full_bias - self.null_bias),
                self.null_var + frac * (self.full_var - self.null_var))

    def window_moments(self, shares, n: int, window: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean Σ(n·π_s + b_s) and variance ΣV_s + n·Σπ_s(1 − π_s) of each day's trailing-window estimate (§12.8)."""
        pi = np.asarray(shares, dtype=float)
        bias, var = self.release_moments(n * pi)
        return (trailing_sum(n * pi + bias, window),
                trailing_sum(var, window) + n * trailing_sum(pi * (1 - pi), window))

    def null_thresholds(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """τ_t = Σb₀ + √(ΣV₀)·Φ⁻¹(1 − rate/tested) over each day's window: an unused item's window sum is
        N(Σb₀, ΣV₀) (normal law of a sum over the day's reports; §12.8)."""
        return gaussian_thresholds(window_sums(self.null_bias, lengths), window_sums(self.null_var, lengths),
                                   rate / tested)

    def null_alarm_probability(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """rate/tested on every day."""
        return np.full(len(lengths), rate / tested)


@dataclass(frozen=True, repr=False)
class RunTrend(BriefRepr):
    """What :func:`run_trend` returns: one row of metrics and the trajectory of the figure."""

    table: pd.DataFrame
    trajectory: pd.DataFrame

    def summary(self) -> dict:
        """The ``trend_*`` keys of ``summary.json``: the row of :attr:`table`, prefixed (but the guarantee's
        words, and the item and start day, which the summary states already as ``trend_token``, ``trend_start_day``)."""
        row = {k: v.item() if isinstance(v, np.generic) else v for k, v in self.table.iloc[0].items()}
        return {f"trend_{k}": (None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in row.items() if k not in ("guarantee", "item", "start_day")}


def run_design(cfg, result, daily: pd.DataFrame, person_epsilon: float) -> RunDesign:
    """The :class:`RunDesign` of the run's event use case for its trend item (docs/math.md §12.8)."""
    uc, mech, items = event_mechanism(cfg)
    i, days = cfg.trend_item, cfg.n_days
    rows = daily[daily["item"] == i].set_index("day")["reports"]
    reports = np.zeros(days)
    reports[rows.index.to_numpy()] = rows.to_numpy()
    moments = np.zeros((4, days))
    for day in np.flatnonzero(reports):
        n_t = int(reports[day])
        donated = np.asarray(result.truth["donated"][day], dtype=float)
        unused = donated.copy()
        unused[i] = 0.0
        alone = np.zeros_like(donated)
        alone[i] = 1.0
        (sd0, b0), (sd1, b1) = share_theory(mech, unused, n_t, items), share_theory(mech, alone, n_t, items)
        moments[:, day] = n_t * b0[i], (n_t * sd0[i]) ** 2, n_t * b1[i], (n_t * sd1[i]) ** 2
    meaning = (f"local: ε = {person_epsilon:.3g} per person over the {days}-day run "
               f"({mechanism_label(uc)}, one report a device-day)")
    return RunDesign(mechanism_label(uc), DesignGuarantee(person_epsilon, 0.0, meaning, person_epsilon),
                     reports, *moments)


def run_trend(cfg, result, daily: pd.DataFrame, person_epsilon: float,
              detector: Detector = RUN_DETECTOR) -> RunTrend | None:
    """The trend metrics of a run (module docstring), or None when it has none to measure.

    None when the scenario plants no trend, its trend starts after the run's last day (outside the run),
    or the event use case is not a local frequency oracle with fresh daily reports (collected under a
    trust model, memoized, or RS+FD's fake reports): :func:`trend_limit` says which.

    Parameters
    ----------
    cfg : DeploymentConfig
    result : DeploymentResult
    daily : DataFrame
        :func:`~ldpsim.evaluation.deployment.estimates.daily_estimates` of the run.
    person_epsilon : float
        ε per person over the run of the event use case (``summary.json``'s ``person``).
    detector : Detector

    Returns
    -------
    RunTrend or None
    """
    if trend_limit(cfg, daily) is not None:
        return None
    design = run_design(cfg, result, daily, person_epsilon)
    n, days, start = max(int(design.reports.max()), 1), cfg.n_days, cfg.trend_start_day
    item = daily[daily["item"] == cfg.trend_item].set_index("day")
    estimate, count = np.zeros(days), np.zeros(days)
    estimate[item.index.to_numpy()] = (item["reports"] * item["estimate"]).to_numpy()
    count[item.index.to_numpy()] = (item["reports"] * item["true_donated"]).to_numpy()
    pi = count / n
    thresholds = detector.thresholds(design, n, days)
    alarms = detector.alarms(estimate, thresholds)
    probability = detector.alarm_probability(design, pi, n)
    months_before = start / DAYS_PER_MONTH
    row = {
        "design": design.name, "guarantee": design.guarantee.meaning, "epsilon_person": design.guarantee.epsilon,
        "item": cfg.items[cfg.trend_item], "start_day": start, "window": detector.window, "rate": detector.rate,
        "delay_days": float(first_alarm(alarms[start:])),
        "delay_theory_days": theory_delay(probability[start:], 0.0),
        "false_alarms_month": float(alarms[:start].sum() / months_before) if start else math.nan,
        "false_alarms_month_theory": float(probability[:start].sum() / months_before) if start else math.nan,
        "expected_false_alarms_run": float(detector.null_alarm_probability(design, n, days).sum()),
        "tracking_error": tracking_error(estimate, count),
        "tracking_error_theory": theory_tracking_error(design, pi, n),
        "smallest_growth": (smallest_growth(detector, design, n, days, start, days - 1 - start)
                            if days - 1 - start >= 1 else math.nan),
    }
    bias, var = design.release_moments(count)
    trajectory = pd.DataFrame({"design": design.name, "day": np.arange(days), "expected": count,
                               "estimate": estimate, "sd": np.sqrt(var), "bias": bias,
                               "threshold": thresholds / detector.lengths(days), "alarm": alarms,
                               "meaning": design.guarantee.meaning})
    return RunTrend(pd.DataFrame([row]), trajectory)


def trend_limit(cfg, daily: pd.DataFrame) -> str | None:
    """Why a run's trend metrics are not measured (None: they are)."""
    if cfg.trend_item is None:
        return "the scenario plants no trending item"
    if cfg.trend_start_day >= cfg.n_days:
        return (f"the trend starts on day {cfg.trend_start_day}, after the run's last day (day {cfg.n_days - 1}): "
                "outside the run")
    uc = cfg.use_case("event")
    if uc is None or uc.collected or uc.interactive or daily.empty:
        return "the run has no local frequency oracle for its items"
    if uc.memoize:
        return "the item's reports are memoized, so its days are not independent (§12.8 needs fresh reports)"
    if cfg.policy == "rsfd":
        return "RS+FD's fake reports change the estimate's law (§12.8 covers one oracle's reports)"
    return None


def trend_tables(cfg, result, tables: dict) -> dict:
    """``trend`` (one row, ``trend_metrics.csv``) and ``trend_trajectory`` (the figure's data) of a run, its
    ``trend_*`` keys added to ``tables["summary"]`` (``trend_limit`` when not measured, with a planted trend)."""
    summary, uc = tables["summary"], cfg.use_case("event")
    person = summary.get("person", {}).get(uc.name if uc is not None else "", {})
    trend = run_trend(cfg, result, tables["daily"], person.get("epsilon_person", math.nan))
    if trend is None:
        if cfg.trend_item is not None:
            summary["trend_limit"] = trend_limit(cfg, tables["daily"])
        return {"trend": pd.DataFrame(), "trend_trajectory": pd.DataFrame()}
    summary.update(trend.summary())
    return {"trend": trend.table, "trend_trajectory": trend.trajectory}
