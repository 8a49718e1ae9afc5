"""Measurement of a deployment run: the pooled estimate and its interval against truth, budgets by day,
the top-k threshold, the summary's wording."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from ldpsim.evaluation.deployment.budget import budget_by_day, day_ranges, milestones, top_k_threshold
from ldpsim.evaluation.confidence import Z95
from ldpsim.evaluation.deployment.estimates import daily_estimates, measure, pooled_estimates, share_theory
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.simulator.config import UseCase
from ldpsim.simulator.deployment import run
from tests.fleets import ITEMS, tiny_config

#: a per-device budget that pays two full days of the tiny fleet (GRR ε 2 × 2 + PM ε 1 = 5 a day) and part
#: of the third: days differ in their report counts, as when a budget runs out
BUDGET = 12.0
CASES = {"grr": (("epsilon", 2.0), ("domain_size", len(ITEMS))),
         "cms": (("epsilon", 2.0), ("k", 16), ("m", 32), ("seed", 5))}


def _config(mechanism: str, seed: int, **overrides):
    base = tiny_config()
    emoji = UseCase("emoji", "event", mechanism, CASES[mechanism], 2)
    return tiny_config(seed=seed, budget_total=BUDGET, use_cases=(emoji, base.use_cases[1]), **overrides)


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    cfg = _config("grr", 3)
    return cfg, run(cfg, tmp_path_factory.mktemp("run"))


def test_pooled_estimate_is_the_estimate_of_the_summed_aggregate(one_run):
    cfg, res = one_run
    aggs = [res.aggregates[("emoji", d)] for d in range(cfg.n_days)]
    assert len({a.n for a in aggs}) > 1  # the budget runs out: days hold different report counts
    pooled = pooled_estimates(cfg, res)
    total = sum(aggs[1:], aggs[0])
    mech = cfg.use_case("event").make_mechanism()
    np.testing.assert_allclose(pooled["estimate"], mech.estimate(total) / total.n)
    assert (pooled["reports"] == sum(a.n for a in aggs)).all()
    donated = res.truth["donated"].sum(axis=0)
    np.testing.assert_allclose(pooled["true_donated"], donated / donated.sum())
    sd, bias = share_theory(mech, donated, total.n)
    np.testing.assert_allclose(pooled["ci_high"] - pooled["ci_low"], 2 * Z95 * sd)
    np.testing.assert_allclose(sd ** 2, mech.variance(donated) / donated.sum() / total.n)  # linear in counts
    daily = daily_estimates(cfg, res)
    assert sorted(daily["day"].unique()) == list(range(cfg.n_days))


@pytest.mark.slow  # ~40 s: 2 × 80 tiny deployments
@pytest.mark.parametrize("mechanism", sorted(CASES))
def test_pooled_interval_covers_the_truth_95_percent_of_runs(tmp_path, mechanism):
    """R = 80 deployments (seeds 200..279) whose budget runs out on the third day; the pooled 95% interval
    of each of the 8 items should hold the true pooled share with probability 0.95.

    Every report reaches the server (no loss, long windows), so the target is exactly the donated share.
    Hits over R·D = 640 (run, item) pairs: Binomial(640, 0.95) when the items' errors are independent;
    within a run they are weakly correlated (|corr| ≲ 1/D for GRR, ≲ 1/m for CMS), which changes the
    indicators' covariance by O(corr²), negligible. Two-sided test at α = 1e-3: |hits − 0.95·N| ≤
    3.29·sqrt(N·0.95·0.05) (coverage within [0.917, 0.983]). CMS with k = 16, m = 32 has a visible
    collision bias; the interval is centred on estimate − bias, which this test checks too.

    The same runs check the daily errors against theory: (p̂_d − p_d)² / (sd_d² + bias_d²) has mean 1
    (docs/math.md §4.1); its mean over the 80·3·8 (run, day, item) terms, each of variance ≈ 2, lies
    within 3.29·sqrt(2 / 1920) of 1 (α = 1e-3, items' correlation neglected as above).
    """
    hits, n, ratios = 0, 0, []
    for r in range(80):
        cfg = _config(mechanism, 200 + r, window_length_h=20.0)
        res = run(cfg, tmp_path / str(r))
        pooled = pooled_estimates(cfg, res)
        hits += int(pooled["covered"].sum())
        n += len(pooled)
        d = daily_estimates(cfg, res)
        ratios.append((d["estimate"] - d["true_donated"]) ** 2 / (d["sd"] ** 2 + d["bias"] ** 2))
    tolerance = norm.ppf(1 - 1e-3 / 2) * math.sqrt(n * 0.95 * 0.05)
    assert abs(hits - 0.95 * n) <= tolerance, f"{mechanism}: coverage {hits / n:.3f} over {n} (run, item) pairs"
    ratio = np.concatenate(ratios)
    assert abs(ratio.mean() - 1) <= norm.ppf(1 - 1e-3 / 2) * math.sqrt(2 / ratio.size), ratio.mean()


def test_budget_by_day_from_the_ledger():
    """Three devices, ε 4 + 2 + 1 a day (7), total budget 16, daily budget 8."""
    ucs = (UseCase("emoji", "event", "grr", (("epsilon", 4.0), ("domain_size", 8)), 1),
           UseCase("typing_speed", "reading", "pm", (("epsilon", 2.0),), 1, (0.0, 120.0)),
           UseCase("session_length", "reading", "pm", (("epsilon", 1.0),), 1, (0.0, 300.0)))
    cfg = tiny_config(use_cases=ucs, n_days=3, budget_total=16.0, budget_daily=8.0)
    ledger = np.array([[7.0, 7.0, 2.0],    # left after day 1: 2 (no emoji); after day 2: 0
                       [7.0, 0.0, 7.0],    # offline on day 1; left after day 2: 2
                       [0.0, 0.0, 0.0]])   # never donated: not counted
    result = SimpleNamespace(ledger_daily=ledger, aggregates={("emoji", 0): SimpleNamespace(n=2)})
    b = budget_by_day(cfg, result)
    assert b.attrs["donating_devices"] == 2
    assert b["exhausted_emoji"].tolist() == [0.0, 0.5, 1.0]
    assert b["exhausted_typing_speed"].tolist() == [0.0, 0.0, 0.5]
    assert b["exhausted_session_length"].tolist() == [0.0, 0.0, 0.5]
    assert b["daily_full"].tolist() == [0.0, 0.0, 0.0]  # 8 − 7 = 1 still pays a session length
    assert b["reports_emoji"].tolist() == [2, 0, 0]
    assert milestones(b["exhausted_emoji"]) == {0.1: 1, 0.5: 1, 0.9: 2}
    assert milestones([0.0, 0.2]) == {0.1: 1, 0.5: None, 0.9: None}
    assert day_ranges([0, 1, 2, 5, 7, 8]) == "0–2, 5, 7–8"


def test_top_k_threshold_matches_the_difference_of_two_estimates():
    """At n* the difference of the k-th and (k+1)-th share estimates has sd equal to their gap.

    GRR, D = 12, k = 3, inputs fixed at the shares × n*: R = 4000 aggregates from the exact direct sampler.
    The empirical variance of p̂_3 − p̂_4 is compared (chi-square bound, α = 1e-3, df = R − 1) with the
    exact one, which adds the covariance n* neglects: one report's indicators of outputs a and b have
    covariance −P(a|x)·P(b|x), so Cov(ĉ_a, ĉ_b) = −Σ_u P(a|x_u)·P(b|x_u) / (p − q)². That covariance
    changes the sd by 5.1% here (by about q/(1 − q) for GRR; ≈ 1/m for CMS); asserted below 6%.
    """
    from scipy.stats import chi2

    mech = GRR(epsilon=2.0, domain_size=12)
    shares = np.array([400, 300, 250, 200, 150, 120, 100, 80, 60, 40, 20, 10]) / 1730
    th = top_k_threshold(mech, np.round(shares * 1e6).astype(int), k=3)
    n = int(round(th["top3_n_star"]))
    counts = np.round(shares * n).astype(int)
    n = int(counts.sum())
    rng = np.random.default_rng(6)
    diff = np.array([np.diff(mech.estimate(mech.sample_aggregate(counts, rng))[[3, 2]])[0] for _ in range(4000)]) / n
    p, q = mech.p, mech.q
    cov = -(counts[2] * p * q + counts[3] * q * p + (n - counts[2] - counts[3]) * q * q) / (p - q) ** 2
    exact = (mech.variance(counts)[[2, 3]].sum() - 2 * cov) / n ** 2
    ratio = np.var(diff, ddof=1) / exact
    df = diff.size - 1
    assert chi2.ppf(5e-4, df) / df <= ratio <= chi2.ppf(1 - 5e-4, df) / df
    gap = th["top3_kth_share"] - th["top3_next_share"]
    assert abs(math.sqrt(exact) / gap - 1) < 0.06
    assert top_k_threshold(mech, np.array([5, 3, 3, 1] + [0] * 8), k=2)["top2_n_star"] == math.inf  # a tie


def test_summary_reads_plainly(one_run):
    from ldpsim.evaluation.report.run_summary import SECTIONS, format_summary
    cfg, res = one_run
    tables = measure(cfg, res)
    text = format_summary(tables, cfg)
    assert "None" not in text and "nan" not in text.lower() and " 1 days" not in text
    assert "pooled over the 3 days" in text and "± 95%" in text and "daily MSE÷theory" in text
    assert "total budget exhausted for" in text and "Reports per day" in text
    assert all(callable(s) for s in SECTIONS)
    top = tables["top"]
    assert set(top["token"]) <= set(ITEMS) and top["covered"].dtype == bool
    s = tables["summary"]
    assert s["mse_ratio_low"] < 1 < s["mse_ratio_high"]
    assert isinstance(tables["budget"], pd.DataFrame) and len(tables["budget"]) == cfg.n_days


def test_terminal_width_of_emoji_items():
    from ldpsim.evaluation.report.run_summary import pad, text_width
    assert [text_width(t) for t in ("😂", "❤️", "🤷‍♂️", "👍🏻", "e0", "©")] == [2, 2, 2, 2, 2, 1]
    assert text_width(pad("❤️", 6)) == text_width(pad("e0", 6)) == 6 == text_width(pad("❤️", 6, left=False))


def test_em_bootstrap_sd_matches_repeated_collections():
    """SDPM + EM over 16 bins, 2 000 fixed inputs: the sd of EM's mean over R = 200 independent
    collections vs the parametric bootstrap from ONE collection. The empirical sd of 200 draws is within
    ±17% of the true sd at α = 1e-3 (chi-square, df = 199); the bootstrap adds its own 200-draw error and
    the plug-in error of f̂, so the ratio is asserted within [0.7, 1.4]."""
    from ldpsim.evaluation.deployment.estimates import _em_unit_sd
    from ldpsim.mechanisms.numeric.em import EM
    from ldpsim.mechanisms.numeric.sdpm import SDPM

    em = EM(SDPM(epsilon=2.0, low=(-2 / 3, 0.0)), bins=16)
    rng = np.random.default_rng(8)
    values = np.clip(rng.normal(-0.4, 0.2, size=2000), -1, 1)
    means = [em.mean(em.aggregate(em.mechanism.perturb(values, rng))) for _ in range(200)]
    boot = _em_unit_sd(em, em.aggregate(em.mechanism.perturb(values, rng)), rng)
    assert 0.7 <= boot / np.std(means, ddof=1) <= 1.4
