"""One entry point for the Bayesian adversary of SPEC §3, whatever the mechanism.

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
    """Attack every report; a dict with at least ``overall`` and ``overall_se`` (see each module).

    ``prior`` is the adversary's prior: None (uniform, the paper's adversary) or the workload's
    frequencies over ``items`` / its cell masses over [−1, 1] for numeric mechanisms.
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
