"""SW as a deployment reading (docs/math.md §2.5): the reported sd is that of the unbiased mean estimate,
the report average divided by SW's mean_scale a = 2w(p − q) < 1 — not the report average's, which is a
times smaller (2.7-fold at ε = 1)."""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.deployment.estimates import reading_estimates
from ldpsim.simulator.config import DeploymentConfig, UseCase
from ldpsim.simulator.deployment import run
from tests.fleets import ITEMS, WEIGHTS
from tests.stats import assert_variance

EPS = 1.0
RANGE = (0.0, 120.0)


def _config() -> DeploymentConfig:
    uc = UseCase("typing_speed", "reading", "sw", (("epsilon", EPS),), 1, RANGE)
    return DeploymentConfig(items=ITEMS, item_weights=WEIGHTS, use_cases=(uc,), n_devices=400, n_days=2,
                            block_size=512, seed=3, opt_in=1.0, p_online=1.0, loss=0.0, ack_loss=0.0,
                            fsync=False, adversary_devices=0, window_length_h=20.0)


def test_reported_sd_is_the_unbiased_estimates(tmp_path):
    """The pooled row's sd is (range/2)·√(max_x Var[x*|x]/n)/a; and R = 400 SW mean estimates from n reports
    at the worst-case reading have exactly that variance (χ² test, α = 10⁻⁴) — with a = 1 (the report
    average's sd) the reported sd would be 2.7 times too small."""
    cfg = _config()
    _, pooled = reading_estimates(cfg, run(cfg, tmp_path), rng=0)
    uc = cfg.use_cases[0]
    mech = uc.make_mechanism()
    grid = np.linspace(-1, 1, 257)
    var = mech.report_variance(grid)
    worst = float(grid[np.argmax(var)])
    n = int(pooled["reports"].iloc[0])
    half_range = (RANGE[1] - RANGE[0]) / 2
    sd = float(pooled["sd"].iloc[0])
    np.testing.assert_allclose(sd, half_range * np.sqrt(var.max() / n) / mech.mean_scale, rtol=1e-12)
    assert 2.5 < 1 / mech.mean_scale < 2.9
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(21).spawn(400)]
    est = [half_range * mech.estimate_mean(mech.aggregate(mech.perturb(np.full(n, worst), r))) for r in rngs]
    assert_variance(np.array(est)[:, None], half_range * worst, sd ** 2, what="SW mean estimate in a deployment")
