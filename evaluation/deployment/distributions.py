"""A deployment's reading distributions: the EM estimate from all reports beside the donated readings'
histogram, for every reading use case with ``em_bins`` (SW + EMS, PM or SDPM + EM; docs/math.md §2.3, §2.5)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldpsim.mechanisms.numeric.em import EM


def reading_distributions(cfg, result) -> pd.DataFrame:
    """One row per (use case, bin): the bin's edges in raw units (``low``, ``high``), the donated readings in
    it over the run (``true_count``, clipped to the use case's range as privatized) and EM's estimated share
    from the summed aggregate of every day (``estimate``); use cases without ``em_bins`` have no rows.

    Parameters
    ----------
    cfg : DeploymentConfig
    result : the deployment's result (``aggregates`` per (use case, day), ``truth``)

    Returns
    -------
    pandas.DataFrame
        Columns ``use_case, bin, low, high, true_count, estimate, reports``.
    """
    frames = []
    for uc in cfg.readings():
        key = f"{uc.name}:donated_hist"
        aggs = [a for d in range(cfg.n_days) if (a := result.aggregates.get((uc.name, d))) is not None and a.n > 0]
        if uc.em_bins is None or key not in result.truth or not aggs:
            continue
        aggregator = uc.make_aggregator()
        if not isinstance(aggregator, EM):
            continue
        total = sum(aggs[1:], aggs[0])
        edges = np.linspace(*uc.value_range, uc.em_bins + 1)
        frames.append(pd.DataFrame({"use_case": uc.name, "bin": np.arange(uc.em_bins), "low": edges[:-1],
                                    "high": edges[1:], "true_count": np.asarray(result.truth[key]).sum(axis=0),
                                    "estimate": aggregator.estimate(total), "reports": total.n}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
