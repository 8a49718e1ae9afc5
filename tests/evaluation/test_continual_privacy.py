"""Per-person guarantee of a continual release over 90 days (docs/math.md §12.4).

The accountant's ε (dp-accounting's Gaussian PLD at the counter's sensitivity) is checked against two
independent computations: Balle–Wang's exact δ(ε) of the Gaussian mechanism solved for ε, and, for
event-level privacy in the tree, the PLD composition of one Gaussian per p-sum containing the day.
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from ldpsim.evaluation.privacy.continual import continual_guarantee, gaussian_epsilon, sigma_for_rho
from ldpsim.mechanisms.continual import COUNTERS, binary_tree, tree_levels
from ldpsim.runtime.errors import InputError

T, DELTA = 90, 1e-9
#: dp-accounting's pessimistic grid (step 1e-4·max(1, Δ/σ) in gaussian_epsilon) may overstate ε by a few
#: steps, never understate it: the tolerance is ten steps
STEPS = 10


def _balle_wang_epsilon(sensitivity, sigma, delta):
    """Solve δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ) = δ (Balle & Wang, ICML 2018, Thm 8)."""
    def gap(eps):
        a, b = sensitivity / (2 * sigma), eps * sigma / sensitivity
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b) - delta
    return optimize.brentq(gap, 0.0, 200.0, xtol=1e-12)


@pytest.mark.parametrize("name", COUNTERS)
@pytest.mark.parametrize("multiplier", [0.5, 2.0])
@pytest.mark.parametrize("per_day, days", [(1.0, 1), (2.0, 1), (1.0, T)])
def test_ninety_day_epsilon_matches_the_exact_gaussian_mechanism(name, multiplier, per_day, days):
    """σ = multiplier × Δ₂ of the bound (ε about 13.5 and about 2.9 at δ = 1e-9)."""
    f = COUNTERS[name](T)
    sigma = multiplier * f.l2_sensitivity(per_day, days).value
    g = continual_guarantee(f, "gaussian", sigma, per_day, days, delta=DELTA)
    assert g.sensitivity.exact and g.days == T and g.delta == DELTA
    u = np.full(T, per_day) if days == T else per_day * np.eye(T)      # the worst contributions
    assert g.sensitivity.value == pytest.approx(np.linalg.norm(f.R @ u, axis=0).max())
    exact = _balle_wang_epsilon(g.sensitivity.value, sigma, DELTA)
    step = 1e-4 * max(1.0, 1 / multiplier)
    assert exact - 1e-9 <= g.epsilon <= exact + STEPS * step
    assert g.rho == pytest.approx(g.sensitivity.value ** 2 / (2 * sigma ** 2))
    # zCDP's conversion ε ≤ ρ + 2√(ρ ln(1/δ)) (Bun–Steinke 2016) is an upper bound on the exact ε
    assert g.epsilon <= g.rho + 2 * math.sqrt(g.rho * math.log(1 / DELTA))


@pytest.mark.parametrize("sigma", [3.0, 10.0])
def test_tree_event_level_equals_composing_one_gaussian_per_level(sigma):
    """A day sits in ⌊log₂ T⌋ + 1 = 7 p-sums; composing 7 unit-sensitivity Gaussians by PLD gives the same ε."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    levels = tree_levels(T)
    one = pld_lib.from_gaussian_mechanism(sigma, sensitivity=1.0, value_discretization_interval=1e-4)
    composed = float(one.self_compose(levels).get_epsilon_for_delta(DELTA))
    g = continual_guarantee(binary_tree(T), "gaussian", sigma, delta=DELTA)
    assert g.sensitivity.value == pytest.approx(math.sqrt(levels))
    assert g.epsilon == pytest.approx(composed, abs=STEPS * levels * 1e-4)


def test_laplace_is_pure_and_uses_the_l1_sensitivity():
    f = binary_tree(T)
    g = continual_guarantee(f, "laplace", 7.0, per_day=1.0, days=1)
    assert (g.epsilon, g.delta, g.rho) == (1.0, 0.0, None)
    g90 = continual_guarantee(f, "laplace", 7.0, per_day=1.0, days=T)
    assert g90.epsilon == pytest.approx(f.R.sum() / 7.0)


def test_sigma_for_rho_inverts_rho():
    for make in COUNTERS.values():
        f = make(T)
        s = sigma_for_rho(f, 0.25, per_day=2.0, days=1)
        assert f.rho(s, 2.0, 1) == pytest.approx(0.25)
    assert continual_guarantee(f, "gaussian", s, 2.0, 1).rho == pytest.approx(0.25)


def test_bad_inputs_name_the_parameter():
    f = binary_tree(T)
    with pytest.raises(InputError, match="'noise'"):
        continual_guarantee(f, "cauchy", 1.0)
    with pytest.raises(ValueError, match="'delta'"):
        gaussian_epsilon(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="'rho'"):
        sigma_for_rho(f, -1.0)
    assert np.isfinite(continual_guarantee(f, "gaussian", 1.0).epsilon)


def test_the_explanation_page_quotes_the_numbers_the_code_produces():
    """docs/explanation/continual-release.md: T = 90, ρ = 0.05, δ = 1e-9, both contribution bounds."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "explanation" / "continual-release.md").read_text("utf-8")
    labels = {"fresh_daily": "fresh daily", "binary_tree": "binary tree", "square_root": "square root"}
    # every counter at σ = Δ₂/√(2ρ) is the same Gaussian mechanism up to scale: one ε for all
    assert f"({gaussian_epsilon(1.0, 1 / math.sqrt(0.1), DELTA):.2f}, 10⁻⁹)-DP" in page
    for days in (1, T):
        for name, make in COUNTERS.items():
            f = make(T)
            s = sigma_for_rho(f, 0.05, 1.0, days)
            sd = np.sqrt(np.concatenate([f.prefix_variance(s ** 2)[[29, 89]], f.daily_variance(s ** 2)[[29]],
                                         [f.window_variance(s ** 2, 83, 89)]]))
            row = (f"| {labels[name]} | {f.l2_sensitivity(1.0, days).value:.3f} | {s:.2f} | "
                   + " | ".join(f"{v:.2f}" for v in sd) + " |")
            assert row in page, row
