"""Synthetic categorical workloads: Zipf / harmonic, exponential, even — docs/math.md §5, seed 003 —
and census-like attributes (a documented substitute for the paper's 1990 US census extract).

Every builder has the signature ``(n, rng=None, **params) -> Workload`` and returns exact counts
(largest remainder, docs/math.md §5); items are int ids 0..D−1 in rank order, or category names.
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms._validation import check_int, check_real

from ldpsim.evaluation.workloads.types import Workload


def _ranks(owner: str, domain_size) -> np.ndarray:
    d = check_int(owner, "domain_size", domain_size, low=1)
    return np.arange(1, d + 1, dtype=np.float64)


def zipf(n: int, rng=None, domain_size: int = 100, s: float = 1.0) -> Workload:
    """Count of rank r ∝ r^(−s) (docs/math.md §5); ``s = 1`` is the harmonic workload."""
    s = check_real("zipf", "s", s, 0.0, np.inf, low_open=False)
    r = _ranks("zipf", domain_size)
    return Workload.from_frequencies("zipf", np.arange(r.size), r ** -s, n, {"domain_size": r.size, "s": s})


def harmonic(n: int, rng=None, domain_size: int = 100) -> Workload:
    """Count of rank r ∝ 1/r (seed 003's harmonic workload; Zipf with s = 1)."""
    w = zipf(n, rng, domain_size=domain_size, s=1.0)
    return Workload("harmonic", w.items, w.counts, {"domain_size": w.domain_size})


def exponential(n: int, rng=None, domain_size: int = 100, x: float = 1 / 1.3) -> Workload:
    """Count of rank r ∝ x^r with 0 < x < 1 (seed 003 uses x = 1/1.3)."""
    x = check_real("exponential", "x", x, 0.0, 1.0)
    r = _ranks("exponential", domain_size)
    # x^r / x = x^(r−1): the same proportions without underflow for the first rank
    return Workload.from_frequencies("exponential", np.arange(r.size), x ** (r - 1), n,
                                     {"domain_size": r.size, "x": x})


def even(n: int, rng=None, domain_size: int = 100) -> Workload:
    """Uniform over D items (the first n mod D items get one extra user)."""
    r = _ranks("even", domain_size)
    return Workload.from_frequencies("even", np.arange(r.size), np.ones(r.size), n, {"domain_size": r.size})


# Census substitute. The paper (seed 000 §5.1.1) uses two attributes of the 1990 US census extract
# (2,458,285 persons): education attainment (18 categories) and marital status (7 categories). That
# extract is not shipped here. The shares below are *plausible, rounded, illustrative* values for a
# whole population of all ages (children fall into "not applicable" / "under 15" categories); they
# are NOT measured census figures. Swap in real shares with ``workload_from_csv`` when available.
EDUCATION_SHARES = {  # 18 categories, per cent
    "not applicable (under 3)": 4.5, "no school completed": 5.5, "nursery school": 1.5,
    "kindergarten": 1.5, "grade 1-4": 6.5, "grade 5-8": 11.0, "grade 9": 3.5, "grade 10": 4.0,
    "grade 11": 4.0, "grade 12, no diploma": 2.0, "high-school graduate": 22.7,
    "some college, no degree": 13.5, "associate degree, occupational": 2.5,
    "associate degree, academic": 2.0, "bachelor's degree": 10.0, "master's degree": 3.5,
    "professional degree": 1.2, "doctorate": 0.6,
}
MARITAL_SHARES = {  # 7 categories, per cent
    "married, spouse present": 44.0, "never married": 21.0, "under 15 (not applicable)": 21.0,
    "divorced": 6.0, "widowed": 5.5, "separated": 1.8, "married, spouse absent": 1.2,
}


def _census(name: str, shares: dict, n: int) -> Workload:
    return Workload.from_frequencies(name, list(shares), list(shares.values()), n,
                                     {"substitute": "illustrative shares, not the 1990 census extract"})


def census_education(n: int, rng=None) -> Workload:
    """Education attainment, 18 categories (illustrative substitute shares; see module comment)."""
    return _census("census-education", EDUCATION_SHARES, n)


def census_marital(n: int, rng=None) -> Workload:
    """Marital status, 7 categories (illustrative substitute shares; see module comment)."""
    return _census("census-marital", MARITAL_SHARES, n)
