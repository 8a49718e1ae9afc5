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
* :func:`gboard_2024_table` — Gboard's out-of-vocabulary discovery (arXiv 2404.11607) states central
  (ε, δ) = (0.315, 10⁻¹⁰) for en-US. The parameters behind it (ε₀ per trie layer, reports per secure
  aggregation round, layers and passes) are not in the parts of the paper we could read; the table
  gives, for assumed cohorts and rounds, the ε₀ that yields 0.315 under the shuffle amplification
  theorem (FMT21 Thm 3.1 per round at δ/R, basic composition over R rounds —
  :func:`gboard_central_epsilon`), docs/math.md §10.6.
"""

from __future__ import annotations

import math

import pandas as pd

from ldpsim.evaluation.privacy.amplification import closed_form_epsilon
from ldpsim.evaluation.privacy.gboard_assumptions import GBOARD_2024
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
        rows.append({"epsilon_report": eps0, "sd_draft": sd, "sd_ours": rappor_sd(eps0, n), "epsilon_draft": eps,
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




def gboard_central_epsilon(eps0: float, cohort: int, rounds: int, delta: float = GBOARD_2024[1]) -> float:
    """Central ε per device over ``rounds`` secure-aggregation rounds of ``cohort`` ε₀-LDP reports: FMT21
    Theorem 3.1 per round at δ/R (:func:`~ldpsim.evaluation.privacy.amplification.closed_form_epsilon`),
    summed over the R rounds (basic composition), docs/math.md §10.6."""
    return rounds * closed_form_epsilon(eps0, cohort, delta / rounds)


def gboard_epsilon_report(cohort: int, rounds: int, target: tuple = GBOARD_2024, tol: float = 1e-9) -> float:
    """The ε₀ per round for which :func:`gboard_central_epsilon` equals the target ε at its δ (bisection;
    the central ε grows with ε₀). NaN when even ε₀ at the theorem's range end falls short."""
    eps, delta = target
    high = math.log(cohort / (16 * math.log(2 * rounds / delta)))      # Thm 3.1's range: ε₀ ≤ ln(n / (16 ln(2/δ)))
    if high <= 0 or gboard_central_epsilon(high, cohort, rounds, delta) < eps:
        return float("nan")
    low = 0.0
    while high - low > tol:
        mid = (low + high) / 2
        low, high = (mid, high) if gboard_central_epsilon(mid, cohort, rounds, delta) < eps else (low, mid)
    return (low + high) / 2


def gboard_2024_table(cohorts=(10**5, 10**6, 10**7), rounds=(1, 10, 30)) -> pd.DataFrame:
    """ε₀ per round that gives Gboard's stated (0.315, 10⁻¹⁰) for each assumed cohort size and number of
    rounds (layers × passes), with the per-round central ε (docs/math.md §10.6)."""
    rows = []
    for n in cohorts:
        for r in rounds:
            e0 = gboard_epsilon_report(n, r)
            rows.append({"cohort": n, "rounds": r, "epsilon_report": e0, "epsilon_round": GBOARD_2024[0] / r,
                         "delta_round": GBOARD_2024[1] / r,
                         "epsilon_central": gboard_central_epsilon(e0, n, r) if e0 == e0 else float("nan"),
                         "delta": GBOARD_2024[1]})
    return pd.DataFrame(rows)
