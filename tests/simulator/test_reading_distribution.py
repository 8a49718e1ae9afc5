"""A reading's distribution in a deployment (docs/math.md §2.3, §2.5): the donated readings' histogram on EM's
bins is booked beside their sum, EM's estimate from every report is tabled beside it, and the report draws
the two together, its title saying the mechanism and the ε of one report."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.deployment.estimates import measure
from ldpsim.evaluation.distribution_metrics import wasserstein1
from ldpsim.evaluation.report.deployment_plots import draw_figures
from ldpsim.simulator.config import DeploymentConfig, UseCase
from ldpsim.simulator.deployment import run
from tests.fleets import ITEMS, WEIGHTS

RANGE = (0.0, 120.0)


@pytest.mark.slow
def test_sw_distribution_in_a_deployment(tmp_path):
    """SW + EMS on 32 bins, 3000 devices over 3 days: the histogram holds every donated reading, its bins'
    midpoints average to the donated mean within half a bin (1.875 wpm), EM's shares sum to one and lie within
    6 wpm of the truth in Wasserstein-1 (a sanity bar: EM's error has no closed form), and the figure is drawn
    with its title."""
    uc = UseCase("typing_speed", "reading", "sw", (("epsilon", 1.0),), 1, RANGE, em_bins=32)
    cfg = DeploymentConfig(items=ITEMS, item_weights=WEIGHTS, use_cases=(uc,), n_devices=3000, n_days=3,
                           block_size=512, seed=11, opt_in=1.0, p_online=1.0, loss=0.0, ack_loss=0.0,
                           fsync=False, adversary_devices=0, window_length_h=20.0)
    result = run(cfg, tmp_path)
    tables = measure(cfg, result, rng=0)
    d = tables["distributions"]
    n = int(result.truth["typing_speed:donated_n"].sum())
    assert len(d) == 32 and int(d["true_count"].sum()) == n and n > 1000
    mid = (d["low"] + d["high"]) / 2
    donated_mean = result.truth["typing_speed:donated_sum"].sum() / n
    assert abs(float((mid * d["true_count"]).sum()) / n - donated_mean) <= 120.0 / 32 / 2
    assert np.isclose(d["estimate"].sum(), 1.0)
    assert wasserstein1(d["true_count"], d["estimate"], *RANGE) < 6.0
    figures = {name: (fig, caption) for name, fig, caption in draw_figures(tables, cfg)}
    fig, caption = figures["typing_speed_distribution.png"]
    assert "SW, ε = 1 a report" in fig.axes[0].get_title() and "wpm" in fig.axes[0].get_xlabel()
