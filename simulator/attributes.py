"""Several attributes per device: how one device-day's budget is spent over the A use cases.

The configured ε of the use cases are a *split* of the daily budget ε = Σ_u ε_u. The policy
(``DeploymentConfig.policy``, scenario key ``[privacy] policy``):

* ``spl`` (split): every use case reports with its own ε_u (sequential composition: Σ_u ε_u a day).
  This is the behaviour without a policy.
* ``smp`` (sample): a participating device-day samples one use case u uniformly and reports only u,
  with the whole ε (Arcolezi et al. 2021 call it Smp; Wang et al. 2019).
* ``rsfd`` (random sampling plus fake data; Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021): the device
  samples u uniformly, reports u's real value with the amplified ε' = ln(A·(e^ε − 1) + 1), and for
  each other use case a *fake* report: the same mechanism applied to a uniformly random input (a
  uniform item of the domain; a uniform reading of the use case's range). The server cannot tell
  which report is real; the paper proves ε-LDP by amplification by sampling. Checked exactly on
  RS+FD[GRR] with A = 2 (``tests/simulator/test_attributes.py``): records differing in one
  attribute have likelihood ratio at most e^ε, attained, when both domains have the same size; with
  unequal sizes changing the attribute of the larger domain costs more than ε (2.84 vs e at ε = 1,
  sizes 3 and 4); records differing in every attribute have ratio e^{ε'}. The ledger charges the
  paper's ε. A use case's reports are real w.p. 1/A, so its input distribution is (1/A)·f + (1 − 1/A)·uniform
  and the server debiases: f̂ = A·f̂_obs − (A − 1)/D for shares, μ̂ = A·μ̂_obs − (A − 1)·μ_U
  for means (μ_U = 0 on the mechanisms' scale [−1, 1]); the variance is A² times the variance of
  the observed estimate, whose input counts are the real plus the fake ones
  (docs/math.md §7.5, "RS+FD in the deployment").

Under ``smp`` and ``rsfd`` a device-day participates when the device is opted in and has data for
every use case that day (an emoji and a session), so that the sampled use case is independent of the
data; each use case sends at most one report a day. The ledger charges ε once per participating
device-day (``simulator/device.py``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

POLICIES = ("spl", "smp", "rsfd")


def rsfd_epsilon(epsilon: float, n_attributes: int) -> float:
    """ε' = ln(A·(e^ε − 1) + 1): the ε of the real report under RS+FD (Arcolezi et al. 2021)."""
    return math.log(n_attributes * math.expm1(epsilon) + 1.0)


def apply_policy(use_cases: tuple, policy: str) -> tuple:
    """The use cases with the ε their mechanisms run at (``mech_epsilon``) and the ledger cost of one
    donation (``cost``) under ``policy``; idempotent (computed from the configured split)."""
    if policy not in POLICIES:
        raise ValueError(f"The 'policy' parameter of DeploymentConfig must be one of {POLICIES}. "
                         f"Got {policy!r} instead.")
    if policy == "spl":
        return tuple(dataclasses.replace(u, mech_epsilon=None, cost=None) for u in use_cases)
    total = sum(float(dict(u.params)["epsilon"]) for u in use_cases)
    run_at = total if policy == "smp" else rsfd_epsilon(total, len(use_cases))
    return tuple(dataclasses.replace(u, mech_epsilon=run_at, cost=total) for u in use_cases)


def participants(n: int, has_data: list, opt_in: np.ndarray) -> np.ndarray:
    """Device-days that take part under ``smp``/``rsfd``: opted in and with data for every use case."""
    ok = np.asarray(opt_in, bool).copy()
    for h in has_data:
        ok &= h
    return ok


def fake_values(uc, n_items: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` fake inputs of use case ``uc``: uniform items (ids), or uniform readings of its range."""
    if uc.kind == "event":
        return rng.integers(0, n_items, size=n)
    lo, hi = uc.value_range
    return rng.uniform(lo, hi, size=n)


def debias_shares(shares: np.ndarray, policy: str, n_attributes: int, domain_size: int) -> np.ndarray:
    """Shares of the real values from the shares estimated over real and fake reports (RS+FD)."""
    if policy != "rsfd":
        return shares
    return n_attributes * np.asarray(shares) - (n_attributes - 1) / domain_size


def debias_mean(mean: float, value_range, policy: str, n_attributes: int) -> float:
    """Mean of the real readings (raw units) from the mean over real and fake reports (RS+FD)."""
    if policy != "rsfd":
        return mean
    lo, hi = value_range
    mid = (lo + hi) / 2  # the mean of a uniform fake reading
    return n_attributes * mean - (n_attributes - 1) * mid
