"""ε per item and per person over the run under a trust model — docs/math.md §8.7, §9.

A trust model states its device's (ε, δ) per report, per day and over the run
(:meth:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel.guarantees`). :func:`trust_levels` adds the
two user-level scopes of :mod:`~ldpsim.evaluation.privacy.levels`, counted by its one rule
(:func:`~ldpsim.evaluation.privacy.levels.report_counts`, under the model's own
:meth:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel.contribution_bound`) and composed by the
model's own accountant (:meth:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel.epsilon`, the one
that gives its ε over the run):

* ``epsilon_item``: one item of one person over the run — the reports that can carry it, min(r, L∞) a day;
* ``epsilon_person``: one person over the run, the whole history replaced — r reports a day.

Every model's reports are fresh (none memoizes), so both hold between arbitrary histories; ``inf`` means
no finite guarantee at the stated δ (the model's accountant found none).

>>> from ldpsim.evaluation.privacy.trust_models import trust_model
>>> m = trust_model("ldp").calibrate(2.0, 10_000, 10)
>>> {k: round(v, 3) for k, v in trust_levels(m, 10_000, 10, reports_per_day=1).items()}
{'epsilon_item': 2.0, 'epsilon_person': 2.0}
"""

from __future__ import annotations

from ldpsim.evaluation.privacy.levels import report_counts
from ldpsim.evaluation.privacy.trust_accounting import TrustModel, bins_moved
from ldpsim.mechanisms.deltas import DELTA_RELEASE

#: the two columns' meanings, as the trust tables print them
COLUMNS = {"epsilon_item": "ε of one item of one person over the run (the reports that can carry it; "
                           "between arbitrary histories: no model memoizes)",
           "epsilon_person": "ε of one person over the run, the whole history replaced (every report of the run)"}


def trust_levels(model: TrustModel, n: int, days: int, delta: float = DELTA_RELEASE, reports_per_day: int = 1,
                 neighbour: str = "replace") -> dict:
    """``epsilon_item`` and ``epsilon_person`` of ``model`` (module docstring), at ``delta``.

    Parameters
    ----------
    model : TrustModel
    n : int
        Devices reporting a day.
    days : int ≥ 1
    delta : float
        δ of both guarantees (the model's own: 0 for a pure local one).
    reports_per_day : int ≥ 1
        Reports one device contributes a day (its daily limit; the TEE: distinct keys a night).
    neighbour : {"replace", "add-remove"}
    """
    item, person = report_counts(reports_per_day, days, model.contribution_bound(reports_per_day))
    bins = bins_moved(neighbour)
    return {"epsilon_item": float(model.epsilon(n, item, delta, bins)),
            "epsilon_person": float(model.epsilon(n, person, delta, bins))}
