"""Which poisoning attacks survive each trust model, with their expected gains — docs/math.md §9.8.

The attacks are today's (RPA, RIA, MGA of Cao, Jia, Gong 2021; :mod:`.gains`). What a trust model changes
(its ``local_oracle``, ``validates`` and ``sums_unchecked`` say which case applies):

* ``ldp``, ``shuffle``: the server accepts any report in the oracle's report space; the gains are the
  LDP ones (:func:`.gains.expected_gain`), where a crafted report (MGA) counts (1 − q)/(p − q) ≫ 1 times.
* ``secagg_local``, ``secagg``: secure aggregation sums whatever vector a device masks — without an
  input-validity proof the MGA is *unbounded* (one device can add any amount, up to the modulus);
  RPA and RIA stay what they are under LDP (secagg_local) or count once per fake (secagg).
* ``two_server``: the validity check (one-hot) rejects every out-of-range vector, so the best
  surviving report is a valid one-hot vector of a target: MGA = RIA, one count per fake; RPA is a
  uniform valid one-hot vector (r/D per fake). With client randomization the check can only ask for
  "at most m ones", which a crafted symmetric-RAPPOR report (target bits set, as many ones as a genuine
  report) passes: the LDP gains of SUE apply.
* ``threshold``, ``sample_threshold``: the trusted hardware sees exact reports and can check them the
  same way: as two_server.

Gain with m fakes among n genuine devices, β = m/(n + m), r targets of true frequencies f_t:
G = β·(c − Σ_t f_t), c the expected count one fake adds to the targets. A rate limit of L reports per
identity and day caps m at identities·L, whatever the model.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldpsim.evaluation.poisoning.gains import ATTACKS, check_attack, expected_gain
from ldpsim.evaluation.privacy.trust_accounting import TrustModel, calibrate
from ldpsim.evaluation.privacy.trust_models import DEFAULTS, MODELS
from ldpsim.mechanisms._validation import check_counts, check_int
from ldpsim.mechanisms.deltas import DELTA_RELEASE

def fakes_admitted(m: int, identities: int | None = None, limit: int | None = None) -> int:
    """Fake reports that get in: m, capped at identities × limit when a per-identity rate limit applies."""
    m = check_int("fakes_admitted", "m", m, low=0)
    if identities is None or limit is None:
        return m
    return min(m, check_int("fakes_admitted", "identities", identities, low=0) *
               check_int("fakes_admitted", "limit", limit, low=1))


def trust_model_gain(model: TrustModel, attack: str, targets, counts, m: int, identities: int | None = None,
                     limit: int | None = None) -> dict:
    """Expected frequency gain of ``attack`` with m fake devices under ``model`` (module docstring).

    Parameters
    ----------
    model : TrustModel
    attack : {"rpa", "ria", "mga"}
    targets : sequence of int item ids
    counts : array_like of non-negative ints
        Genuine counts per item (item ids 0 … D−1).
    m : int
        Fake devices the attacker runs.
    identities, limit : int, optional
        A rate limit: at most ``limit`` reports per identity and day, the attacker holding ``identities``.

    Returns
    -------
    dict
        model, attack, admitted (fakes that get in), as_crafted (False when the model's validity check
        rejects the attack's reports and the best valid report is counted instead), per_fake (expected
        count one admitted fake adds to the targets), gain.
    """
    check_attack(attack)
    c = check_counts("trust_model_gain", counts)
    d = c.size
    t = np.asarray(targets, dtype=np.int64)
    admitted = fakes_admitted(m, identities, limit)
    n = float(c.sum())
    beta = admitted / (n + admitted)
    genuine = float(c[t].sum()) / n
    # whether the attack's own reports are accepted as they are (a validated model rejects an out-of-range
    # MGA vector; the attacker's best fallback is then a valid one-hot target report)
    oracle = model.local_oracle(d)
    row = {"model": model.kind, "attack": attack, "admitted": admitted,
           "as_crafted": not (attack == "mga" and model.validates and oracle is None)}
    if attack == "mga" and model.sums_unchecked:
        return {**row, "per_fake": math.inf, "gain": math.inf if admitted else 0.0}
    if oracle is not None:
        gain = expected_gain(oracle, attack, [int(x) for x in t], c, list(range(d)), admitted)
        per_fake = gain / beta + genuine if beta else math.nan
        return {**row, "per_fake": per_fake, "gain": gain}
    per_fake = t.size / d if attack == "rpa" else 1.0       # a valid one-hot report: RIA = best valid MGA
    return {**row, "per_fake": per_fake, "gain": beta * (per_fake - genuine)}


def poisoning_table(counts, targets, m: int, epsilon_device: float = 2.0, days: int = 30, delta: float = DELTA_RELEASE,
                    identities: int | None = None, limit: int | None = None, models=MODELS) -> pd.DataFrame:
    """One row per (model, attack): :func:`trust_model_gain` with every model's local ε₀ calibrated to the same
    ε per device over the run (the central models' unbiased noise does not enter the expected gain).

    Parameters
    ----------
    counts, targets, m, identities, limit : as in :func:`trust_model_gain`
    epsilon_device, days, delta : the common guarantee the local reports are calibrated to

    Returns
    -------
    pandas.DataFrame
    """
    n = int(np.sum(counts))
    rows = []
    for name in models:
        model = DEFAULTS[name]
        if model.randomizes:
            model = calibrate(model, epsilon_device, n, days, delta)
        for attack in ATTACKS:
            rows.append({**trust_model_gain(model, attack, targets, counts, m, identities, limit),
                         "epsilon_report": model.epsilon_report if model.randomizes else math.nan})
    return pd.DataFrame(rows)
