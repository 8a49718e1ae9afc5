"""One entry point for the Bayesian adversary of docs/math.md §3, whatever the mechanism.

Dispatches to :mod:`ldpsim.evaluation.adversary.bayes` (finite output spaces: RR, GRR, URR, SDGRR — via the
transition matrix; personalized SDGRR group by group), :mod:`ldpsim.evaluation.adversary.sketch` (CMS, HCMS, OUE, OLH — via report support)
and :mod:`ldpsim.evaluation.adversary.continuous` (PM, SDPM — grid MAP, accuracy within ``tol``).
``values`` are the users' true item ids (positions in ``items``) or numeric readings.
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms import CMS, HCMS, OLH, OUE, NumericMechanism, PersonalizedSDGRR

from ldpsim.evaluation.adversary.bayes import empirical_accuracy, empirical_personalized_accuracy
from ldpsim.evaluation.adversary.continuous import DEFAULT_CELLS, DEFAULT_TOL, empirical_numeric_accuracy
from ldpsim.evaluation.adversary.sketch import empirical_sketch_accuracy


def attack(mechanism, values, reports, items=None, prior=None, rng=None, tol: float = DEFAULT_TOL,
           n_cells: int = DEFAULT_CELLS) -> dict:
    """The Bayesian adversary of docs/math.md §3 against every report, whatever the mechanism.

    Parameters
    ----------
    mechanism
        The mechanism that produced the reports (any frequency oracle or numeric mechanism).
    values : array_like
        The users' true values: positions in ``items`` (item ids for oracles on ids), or readings in
        [−1, 1] for numeric mechanisms.
    reports
        The reports, as returned by ``mechanism.perturb``.
    items : sequence, optional
        Candidate items; required for sketches (tokens), default all ids for OUE/OLH.
    prior : array_like, optional
        The adversary's prior: None (uniform, the paper's adversary) or the workload's frequencies
        over ``items`` / its cell masses over [−1, 1] for numeric mechanisms.
    rng : numpy.random.Generator, int or None
        Breaks ties between equally likely guesses.
    tol : float, default 0.1
        Numeric mechanisms: a guess within ``tol`` of the truth counts as correct.
    n_cells : int
        Numeric mechanisms: cells of the adversary's grid over [−1, 1].

    Returns
    -------
    dict
        At least ``overall`` (share of users guessed right) and ``overall_se`` (its binomial standard
        error); more keys (``high``, ``class``, ``expected_*``) depending on the mechanism (see each
        module).

    Examples
    --------
    >>> from ldpsim.mechanisms import GRR
    >>> m = GRR(1.0, 4)
    >>> x = np.repeat(np.arange(4), 250)
    >>> out = attack(m, x, m.perturb(x, rng=0), rng=0)
    >>> round(out["expected_overall"], 4) == round(m.p, 4)
    True
    """
    if isinstance(mechanism, NumericMechanism):
        return empirical_numeric_accuracy(mechanism, values, reports, tol, n_cells, prior, rng)
    if isinstance(mechanism, (CMS, HCMS, OLH, OUE)):
        if items is None:
            if mechanism.takes_tokens:
                raise ValueError(f"attack: {mechanism.name} needs the candidate 'items' (tokens).")
            items = np.arange(mechanism.domain_size)
        return empirical_sketch_accuracy(mechanism, values, reports, items, prior, rng)
    if isinstance(mechanism, PersonalizedSDGRR):
        return empirical_personalized_accuracy(mechanism, values, reports, prior, rng)
    if callable(getattr(mechanism, "transition_matrix", None)):
        return empirical_accuracy(mechanism, values, reports, prior, rng)
    raise TypeError(f"No Bayesian adversary for {type(mechanism).__name__} yet (supported: discrete "
                    "oracles with a transition matrix, personalized SDGRR, CMS, HCMS, OUE, OLH, PM, SDPM).")
