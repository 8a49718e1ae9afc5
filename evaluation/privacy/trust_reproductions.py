"""Published trust-model numbers recomputed with ldpsim's accounting — docs/math.md §9.7.

* :func:`dp_draft_client_table` — draft-wang-ppm-differential-privacy, "Prio3MultiHotHistogram with
  Client Randomization": n = 100 000 clients apply symmetric RAPPOR (each bit of the one-hot vector
  flipped w.p. 1/(e^ε₀ + 1)) and the aggregators sum the noisy vectors. The draft states the debiased
  count's sd √(n e^ε₀)/(e^ε₀ − 1) and a central (ε, δ = 1e-9) per ε₀ (its amplification argument is left
  as a TODO there). Here the central ε is computed *exactly* for the pair of neighbouring datasets in
  which the other clients hold 0 in the two coordinates that change: per coordinate, the count is
  Bern(q or 1−q) + Bin(n−1, q); the two coordinates are independent, so their PLDs compose.
* :func:`dp_draft_aggregator_table` — the same draft, "Prio3Histogram with Aggregator Randomization":
  each aggregator adds discrete Gaussian noise; the draft calibrates σ with the analytic Gaussian
  (continuous, L2 sensitivity √2). Here σ is calibrated on the discrete Gaussian's exact PLD
  (two unit changes).
* :func:`ldp_sd_at` — the sd of pure LDP (symmetric RAPPOR at the same ε on the report) for comparison.
"""

from __future__ import annotations

import math

import pandas as pd

from ldpsim.evaluation.privacy.trust_accounting import client_rappor_epsilon, noise_epsilon
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise

#: the draft's tables (ε, δ, sd, ε₀) and (ε, δ, sd with two noisy aggregators, sd with one)
DRAFT_CLIENT = [(0.317, 1e-9, 26.1337, 5.0), (0.906, 1e-9, 12.2800, 6.5), (1.528, 1e-9, 9.5580, 7.0)]
DRAFT_AGGREGATOR = [(0.317, 1e-9, 33.0788, 23.3903), (0.906, 1e-9, 12.0777, 8.5402), (1.528, 1e-9, 7.3403, 5.1904)]


def rappor_sd(eps0: float, n: int) -> float:
    """sd of a debiased symmetric-RAPPOR count over n clients: √(n e^ε₀)/(e^ε₀ − 1)."""
    e = math.exp(eps0)
    return math.sqrt(n * e) / (e - 1)


def symmetric_rappor_central_epsilon(eps0: float, n: int, delta: float) -> float:
    """Central ε at δ of the summed symmetric-RAPPOR vectors of n clients (each bit at ε₀), one client's
    one-hot value replaced (two coordinates change), the others holding 0 there (exact PLD)."""
    return client_rappor_epsilon(2 * eps0, n, delta, compositions=2)


def ldp_sd_at(epsilon: float, n: int) -> float:
    """sd of a symmetric-RAPPOR count whose report is ε-LDP (each bit at ε/2): pure local DP at ε."""
    return rappor_sd(epsilon / 2, n)


def dp_draft_client_table(n: int = 100_000) -> pd.DataFrame:
    """The draft's client-randomization table beside ldpsim's exact numbers (docs/math.md §9.7)."""
    rows = []
    for eps, delta, sd, eps0 in DRAFT_CLIENT:
        ours = symmetric_rappor_central_epsilon(eps0, n, delta)
        rows.append({"eps0": eps0, "sd_draft": sd, "sd_ours": rappor_sd(eps0, n), "epsilon_draft": eps,
                     "epsilon_ours": ours, "delta": delta, "sd_pure_ldp_at_epsilon_draft": ldp_sd_at(eps, n)})
    return pd.DataFrame(rows)


def discrete_gaussian_sigma(epsilon: float, delta: float, changes: int = 2, rel_tol: float = 1e-4) -> float:
    """Smallest σ (to ``rel_tol``) of N_Z(0, σ²) whose ``changes`` unit changes are (ε, δ)-DP (exact PLD)."""
    low, high = 0.5, 4.0
    while noise_epsilon(IntegerNoise("discrete_gaussian", high), delta, changes) > epsilon:
        low, high = high, 2 * high
    while high / low > 1 + rel_tol:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if noise_epsilon(IntegerNoise("discrete_gaussian", mid), delta, changes) <= epsilon \
            else (mid, high)
    return high


def dp_draft_aggregator_table() -> pd.DataFrame:
    """The draft's aggregator-randomization table beside the σ of ldpsim's exact discrete-Gaussian PLD."""
    rows = []
    for eps, delta, sd_two, sd_one in DRAFT_AGGREGATOR:
        sigma = discrete_gaussian_sigma(eps, delta)
        sd = IntegerNoise("discrete_gaussian", sigma).sd()
        rows.append({"epsilon": eps, "delta": delta, "sd_one_draft": sd_one, "sd_one_ours": sd,
                     "sd_two_draft": sd_two, "sd_two_ours": math.sqrt(2) * sd})
    return pd.DataFrame(rows)
