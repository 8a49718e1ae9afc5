"""What contribution bounding costs: the error of word shares when each device reports at most L0 of its
typed words a day, at one ε per person and day — docs/math.md §8.7.

A device-day's words are bounded by a :class:`~ldpsim.mechanisms.bounding.ContributionBound` (L0 words
per device, L∞ = 1: one report per kept word); each kept word is one fresh report at ε/L0 (so a person's day costs ε whatever L0:
basic composition); the server estimates each word's count with the oracle and divides by the reports.
The estimate of word w's share of the typed words has, given the bound's draw,

* bias: its share among the kept contributions minus its share among everything typed (what the
  sampler leaves out);
* variance: the oracle's exact variance of the count (``mech.variance``) over the reports².

:func:`bounding_cost` returns, per L0, the share of typed words kept and the root mean squared error
bias² + variance over the most typed words (exact given the bound's draw, no report drawn).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.mechanisms._validation import as_generator, check_epsilon, check_int
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.mechanisms.registry import make
from ldpsim.runtime.errors import InputError


def bounding_cost(device, item, epsilon_day: float, l0s=(1, 2, 4, 8), sampler: str = "events",
                  mechanism: str = "olh", top: int = 20, rng=None) -> pd.DataFrame:
    """The cost of bounding to each L0 in ``l0s`` (module docstring).

    Parameters
    ----------
    device, item : int arrays
        One typed word a row: its device-day and its word (0 … d − 1).
    epsilon_day : float
        ε per person and day: each report is at ε/L0.
    l0s : ints ≥ 1
    sampler : one of :data:`ldpsim.mechanisms.bounding.SAMPLERS`
    mechanism : a frequency oracle of the registry taking ``epsilon`` and ``domain_size``
    top : int ≥ 1
        The most typed words the error is averaged over.

    Returns
    -------
    pandas.DataFrame
        Per L0: ``l0``, ``epsilon_report``, ``reports``, ``kept_share`` (kept contributions ÷ typed
        words), ``bias_rms``, ``sd_rms`` and ``rmse`` of the top words' shares.
    """
    rng = as_generator(rng)
    eps = check_epsilon("bounding_cost", epsilon_day, "epsilon_day")
    top = check_int("bounding_cost", "top", top)
    device, item = np.asarray(device, np.int64), np.asarray(item, np.int64)
    if device.shape != item.shape or device.ndim != 1 or not device.size:
        raise InputError(f"bounding_cost: 'device' and 'item' must be non-empty 1-D arrays of one length; got "
                         f"shapes {device.shape} and {item.shape}.")
    d = int(item.max()) + 1
    pairs, counts = np.unique(np.stack([device, item]), axis=1, return_counts=True)
    typed = np.bincount(item, minlength=d)
    words = np.argsort(-typed, kind="stable")[:top]
    truth = typed[words] / typed.sum()
    rows = []
    for l0 in l0s:
        l0 = check_int("bounding_cost", "l0", l0)
        kept = ContributionBound(l0=l0, linf=1, sampler=sampler).select(pairs[0], counts, rng=rng)
        per_word = np.bincount(pairs[1], weights=kept, minlength=d)
        n = per_word.sum()
        mech = make(mechanism, epsilon=eps / l0, domain_size=d)
        bias = per_word[words] / n - truth
        sd = np.sqrt(mech.variance(per_word.astype(np.int64), words)) / n
        rows.append({"l0": l0, "epsilon_report": eps / l0, "reports": int(n), "kept_share": n / typed.sum(),
                     "bias_rms": float(np.sqrt(np.mean(bias ** 2))), "sd_rms": float(np.sqrt(np.mean(sd ** 2))),
                     "rmse": float(np.sqrt(np.mean(bias ** 2 + sd ** 2)))})
    return pd.DataFrame(rows)
