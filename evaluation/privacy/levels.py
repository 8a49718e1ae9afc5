"""One report, one item, one person: the three scopes of a guarantee under contribution bounding —
docs/math.md §8.7.

A device sends at most ``reports_per_day`` fresh ε-reports a day (each one contribution of one item,
chosen by a :class:`~ldpsim.mechanisms.bounding.ContributionBound`) over ``days`` days:

* ``epsilon_report``: one report;
* ``epsilon_item``: everything one item of one person moves — the reports that can carry it, at most
  min(r, L∞) a day (r the reports a day, L∞ the bound's contributions per item), over the days;
* ``epsilon_person``: everything one person sends over the run — r a day over the days (the person's
  whole history replaced; L0 items a day, at most r of them reported).

Each is composed by the project's accountant (:func:`ldpsim.evaluation.privacy.composition.compose`,
PLD at δ) beside basic composition (δ = 0). Memoized designs are scoped by
:mod:`ldpsim.evaluation.privacy.accountant` and :mod:`ldpsim.evaluation.privacy.person_level`.

>>> from ldpsim.mechanisms.bounding import ContributionBound
>>> g = levels(0.5, reports_per_day=3, days=10, bound=ContributionBound(l0=3, linf=1, sampler="events"))
>>> (g.reports_item, g.reports_person, g.epsilon_item, g.epsilon_person)
(10, 30, 5.0, 15.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from ldpsim.evaluation.privacy.composition import compose
from ldpsim.mechanisms._validation import check_epsilon, check_int, check_real
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.mechanisms.deltas import DELTA_SPEND

#: the scopes' column names, the same in every table that prints them (docs/glossary.md)
SCOPES = {"epsilon_report": "one report", "epsilon_item": "one item of one person over the run",
          "epsilon_person": "one person over the run (the whole history replaced)"}


@dataclass(frozen=True)
class Levels:
    """ε per report, per item and per person over the run (:func:`levels`): pure (δ = 0) by basic
    composition, and at ``delta`` by the accountant (``*_at_delta``, never above the pure one)."""

    epsilon_report: float
    epsilon_item: float
    epsilon_person: float
    epsilon_item_at_delta: float
    epsilon_person_at_delta: float
    delta: float
    reports_item: int
    reports_person: int

    def row(self) -> dict:
        """The flat row a table or ``summary.json`` holds."""
        return dict(self.__dict__)


def report_counts(reports_per_day: int, days: int, bound: ContributionBound | None = None) -> tuple[int, int]:
    """(reports that can carry one item of one person, reports of one person) over the run: D·min(r, L∞)
    and D·r, r the reports a day (at most the bound's L0 under ``"events"``) — docs/math.md §8.7.

    The one count of the three scopes: :func:`levels` composes ε-reports over them, and the trust
    models' own accountants (:mod:`ldpsim.evaluation.privacy.trust_levels`) their reports."""
    r = check_int("levels", "reports_per_day", reports_per_day)
    days = check_int("levels", "days", days)
    bound = bound or ContributionBound(l0=r, sampler="events")
    if bound.sampler == "events":
        r = min(r, bound.l0)
    return min(r, bound.linf or r) * days, r * days


def bounded_cells(days: int, per_day: ContributionBound, per_run: ContributionBound | None = None) -> tuple[int, int]:
    """(cells one item of one person can touch, cells one person can touch) over ``days`` nights, a cell
    being one (night, item) count — docs/math.md §8.8.

    A person touches at most L0 cells a night and, under a per-run bound, keeps at most L0_run items
    over the run, each on at most L∞_run nights (a night's contribution is ≥ 1): the item
    min(D, L∞_run), the person min(D·L0, L0_run·min(D, L∞_run))."""
    days = check_int("bounded_cells", "days", days)
    nights = days if per_run is None or per_run.linf is None else min(days, per_run.linf)
    person = days * per_day.l0 if per_run is None else min(days * per_day.l0, per_run.l0 * nights)
    return nights, person


def levels(epsilon_report: float, reports_per_day: int, days: int, bound: ContributionBound | None = None,
           delta: float = DELTA_SPEND) -> Levels:
    """The three scopes of fresh ε-reports under contribution bounding (module docstring).

    Parameters
    ----------
    epsilon_report : float
        ε of one report.
    reports_per_day : int ≥ 1
        Reports a device sends a day at most (the daily limit).
    days : int ≥ 1
    bound : ContributionBound, optional
        The per-day bound the reports are chosen under (default: the deployment's daily limit, the
        ``"events"`` sampler with L0 = reports_per_day, no L∞ beyond it). An ``"events"`` bound caps the
        reports a day at its L0 too.
    delta : float in (0, 1)
    """
    eps = check_epsilon("levels", epsilon_report, "epsilon_report")
    delta = check_real("levels", "delta", delta, 0.0, 1.0)
    item, person = report_counts(reports_per_day, days, bound)

    def at_delta(k: int) -> float:
        return min(compose([(eps, 0.0)] * k, delta).epsilon, k * eps)

    return Levels(eps, item * eps, person * eps, at_delta(item), at_delta(person), delta, item, person)
