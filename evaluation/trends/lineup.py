"""Every design of a daily count compared by ``ldpsim trends``, at one ε per person over the run — docs/math.md §12.5."""

from __future__ import annotations

from ldpsim.evaluation.trends.designs import PLACEMENTS, counter_design, rr_design
from ldpsim.evaluation.trends.integer_design import skellam_design
from ldpsim.evaluation.trends.skellam_counter_design import skellam_counter_design
from ldpsim.evaluation.trends.thresh_design import thresh_design
from ldpsim.mechanisms.continual import COUNTERS
from ldpsim.mechanisms.deltas import DELTA_RELEASE


def standard_designs(epsilon: float, days: int, delta: float = DELTA_RELEASE) -> list:
    """Fresh RR, memoized RR, each counter local and distributed (Gaussian), fresh daily counts with
    Skellam noise in the secure sum, THRESH (§12.7: k = 3 changes, a 2-level dyadic vote schedule), and
    the binary tree and the integer square root with Skellam noise in the secure sum (§12.10), each at
    ε per person over ``days``."""
    designs = [rr_design(False, epsilon, days, delta), rr_design(True, epsilon, days, delta)]
    designs += [counter_design(c, pl, epsilon, days, delta) for pl in PLACEMENTS for c in COUNTERS]
    designs += [skellam_design(epsilon, days, delta), thresh_design(epsilon, days, levels=2)]
    return designs + [skellam_counter_design(c, epsilon, days, delta) for c in ("binary_tree", "square_root")]
