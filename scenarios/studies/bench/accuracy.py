"""MSE measured against each mechanism's own theory: the accuracy table of the README's section on
the deployed designs (RAPPOR, dBitFlip/1BitMean and the peers' oracles).

:func:`measure` runs the per-user path (``perturb_aggregate`` + ``estimate``) ``repeats`` times on the
harmonic workload and returns the frequency-scale MSE averaged over the items, its standard error over
the repeats, and the theory's value (mean over items of ``mse(true_counts)`` / n²). For 1BitMean the
workload is n counters uniform in [0, m] (fixed) and the MSE is that of the mean estimate against
``mean_variance``. Run ``ldpsim accuracy [--devices N] [--repeats R]`` (:func:`accuracy_table`).

>>> row = measure("sue", {"epsilon": 1.0}, domain_size=20, n=2000, repeats=3)
>>> sorted(row)
['epsilon_report', 'mse', 'se', 'seconds', 'theory']
"""

from __future__ import annotations

import math
import time

import numpy as np

from ldpsim.evaluation.privacy.level_columns import COLUMNS, note, one_report
from ldpsim.evaluation.workloads.synthetic import harmonic
from ldpsim.mechanisms import registry

#: (label, registry name, parameters, number of items) — the README table's rows
ROWS = [
    ("RAPPOR ε∞ = 4 ln 3, k = 128, h = 2, C = 8", "rappor",
     {"epsilon": 4 * math.log(3), **registry.typical("rappor", "deployed")}, 200),
    ("HR ε = 1", "hr", {"epsilon": 1.0}, 2000),
    ("HR ε = 4", "hr", {"epsilon": 4.0}, 2000),
    ("SUE ε = 1", "sue", {"epsilon": 1.0}, 2000),
    ("SHE ε = 1", "she", {"epsilon": 1.0}, 2000),
    ("THE ε = 1", "the", {"epsilon": 1.0}, 2000),
    ("BLH ε = 1", "blh", {"epsilon": 1.0}, 2000),
    ("FLH ε = 1, k′ = 1024", "flh", {"epsilon": 1.0, **registry.typical("flh", "deployed")}, 2000),
    ("dBitFlip ε = 1, d = 1", "dbitflip", {"epsilon": 1.0, "d": 1}, 2000),
    ("dBitFlip ε = 1, d = 8", "dbitflip", {"epsilon": 1.0, "d": 8}, 2000),
    ("1BitMean ε = 1, m = 100", "onebitmean", {"epsilon": 1.0, "m": 100.0}, 0),
]


def measure(name: str, params: dict, domain_size: int, n: int, repeats: int, seed: int = 0) -> dict:
    """Measured MSE (± standard error over ``repeats``) and the theory's, on the frequency scale.

    Parameters
    ----------
    name : str
        Registry name.
    params : dict
        Mechanism parameters (``domain_size`` is added for oracles on ids).
    domain_size : int
        Number of items of the harmonic workload (ignored for 1BitMean).
    n : int
        Users per repeat.
    repeats : int
        Independent repeats (≥ 2), streams spawned from ``seed``.
    seed : int
        Root seed.

    Returns
    -------
    dict
        ``mse``, ``se`` (standard error of ``mse``), ``theory``, ``seconds`` (mean per repeat) and
        ``epsilon_report`` (ε of the one report each user sends).
    """
    mech = registry.make(name, domain_size=domain_size, **params)  # the domain goes to those that take one
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(repeats + 1)]
    if name == "onebitmean":
        values = rngs[0].uniform(0.0, mech.m, n)
        t0 = time.perf_counter()
        err = [(mech.estimate_mean(mech.aggregate(mech.perturb(values, r))) - values.mean()) ** 2 for r in rngs[1:]]
        seconds = (time.perf_counter() - t0) / repeats
        per_repeat, theory = np.array(err), mech.mean_variance(values)
    else:
        workload = harmonic(n, domain_size=domain_size)
        counts, items = workload.counts, np.arange(domain_size)
        t0 = time.perf_counter()
        err = []
        for r in rngs[1:]:
            est = mech.estimate(mech.perturb_aggregate(workload.values(r), r), items)
            err.append(np.mean(((est - counts) / n) ** 2))
        seconds = (time.perf_counter() - t0) / repeats
        per_repeat, theory = np.array(err), float(np.mean(mech.mse(counts, items))) / n ** 2
    return {"mse": float(per_repeat.mean()), "se": float(per_repeat.std(ddof=1) / math.sqrt(repeats)),
            "theory": float(theory), "seconds": seconds, "epsilon_report": mech.guarantee.epsilon_report}


def accuracy_table(devices: int = 100_000, repeats: int = 10, seed: int = 0, report=None):
    """Every row of :data:`ROWS` measured with :func:`measure`: one row per mechanism (``ldpsim accuracy``).

    ``report``, when given, is called with each finished row's markdown line.
    Returns a pandas DataFrame with ``mechanism``, ``mse``, ``se``, ``theory``, ``ratio``, ``seconds``,
    ``epsilon_report`` and what one item of one person and one person get from the one report each user
    sends (``epsilon_item``, ``epsilon_person``: :mod:`ldpsim.evaluation.privacy.level_columns`).
    Every user is perturbed one by one: ``devices × repeats`` beyond
    :data:`~ldpsim.evaluation.cost.MAX_REPORT_USERS` is refused before any row runs (a ``CostError``).
    """
    import pandas as pd

    from ldpsim.evaluation.cost import check_report_users
    from ldpsim.mechanisms._validation import check_int
    check_int("accuracy_table", "devices", devices, low=1)
    check_int("accuracy_table", "repeats", repeats, low=2)
    check_int("accuracy_table", "seed", seed, low=0)
    check_report_users(devices, repeats, "accuracy_table", "devices (--devices)", "repeats (--repeats)")
    rows = []
    for label, name, params, d in ROWS:
        row = {"mechanism": label, **measure(name, params, d, devices, repeats, seed)}
        row.update(ratio=row["mse"] / row["theory"], **one_report(row["epsilon_report"]))
        rows.append(row)
        if report is not None:
            report(markdown_row(row))
    return pd.DataFrame(rows, columns=["mechanism", "mse", "se", "theory", "ratio", "seconds", *SCOPES])


def markdown_header(devices: int, repeats: int) -> list[str]:
    """The header of the markdown table ``ldpsim accuracy`` prints (its rows: :func:`markdown_row`)."""
    return [f"| mechanism | MSE measured (n = {devices:,}, {repeats} runs) | MSE theory | ratio | "
            f"{' | '.join(SCOPES)} |", "|---" * (4 + len(SCOPES)) + "|"]


#: the ε columns of the markdown table: one report's, and what one item and one person get from it
SCOPES = ("epsilon_report", *COLUMNS)
#: under the table: what its ε columns mean
MARKDOWN_NOTE = f"({note('epsilon_report', 'each user')}; RAPPOR's label gives its permanent ε_∞)"


def markdown_row(row) -> str:
    """One row of the markdown table ``ldpsim accuracy`` prints."""
    return (f"| {row['mechanism']} | {row['mse']:.3e} ± {row['se']:.1e} | {row['theory']:.3e} | {row['ratio']:.3f} | "
            + " | ".join(f"{row[c]:.4g}" for c in SCOPES) + " |")
