"""The whole-run audit of the memoized designs (docs/math.md §11.9): each event's exact law (a mixture over the
memoized responses) against the design's own device client, the claim from the one accountant, the same-pattern
pair tight against it, honest PASS and every planted bug FAIL at the default runs (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpsim.evaluation.audit.run_audit import audit_run, event_epsilon, run_hits
from ldpsim.evaluation.audit.run_memo_laws import event_laws, one_report, repeated_rappor_law
from ldpsim.evaluation.cost import CostError
from ldpsim.evaluation.privacy.accountant import device_spend
from ldpsim.mechanisms import make
from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.audit.gate import audit_whole_run, plan_run, run_claim, run_trials
from ldpsim.scenarios.studies.audit.run_catalog import PLANS
from ldpsim.scenarios.studies.audit.run_designs import design_bugs, design_plan
from ldpsim.scenarios.studies.audit.run_cost import needed_runs
from ldpsim.scenarios.studies.audit.run_memo import MEMO as MECHANISM, costliest_split, memo_params
from ldpsim.simulator.config import DeploymentConfig, UseCase

MEMO = ("grr_memo", "rappor", "dbitflip_memo", "onebitmean_memo")
#: the defaults and an odd n (uneven halves)
LENGTHS = {"grr_memo": (dict(), dict(days=5, rounds_per_day=1)), "rappor": (dict(), dict(days=3, rounds_per_day=1)),
           "dbitflip_memo": (dict(), dict(days=5, rounds_per_day=1)),
           "onebitmean_memo": (dict(), dict(days=5, rounds_per_day=1))}


def _within(hits: int, trials: int, p: float) -> bool:
    """hits inside the two-sided 1 − 10⁻⁴ binomial interval of Binomial(trials, p)."""
    lo, hi = stats.binom.interval(1 - 1e-4, trials, p)
    return lo <= hits <= hi


@pytest.mark.parametrize("design", MEMO)
def test_sampled_runs_follow_the_exact_law(design):
    """The device client (one key per run, kept over its rounds; the planted one forgets it), run T times per
    world, lands in S as often as the plan's exact mixture law says: within a two-sided 10⁻⁴ binomial interval
    (false alarm ≤ 2·10⁻⁴ per count), honest and planted, at the defaults and an uneven split."""
    trials = 4_000 if design == "rappor" else 10_000
    for sizes in LENGTHS[design]:
        for bug in (None,) + design_bugs(design):
            plan = design_plan(design, bug, **sizes)
            for value, p in ((plan.x, plan.p_a), (plan.x_prime, plan.p_b)):
                hits = run_hits(plan, value, trials, np.random.default_rng(7))
                assert _within(hits, trials, p), (sizes, bug, value, hits / trials, p)


def test_rappor_mixture_law_with_colliding_cohorts():
    """RAPPOR with 4 Bloom bits: only a quarter of the cohorts separate x and x′ (share 0.25), and a device
    keeps its cohort over all its reports, so the memoized halves' joint law is J(r₁, k₁)·J(r₂, k₂)/share (not
    the product of the two one-half laws); a history repeating x (one permanent response) follows
    :func:`repeated_rappor_law`: every (k₁, k₂) of the three worlds checked against 20 000 devices each of the
    device client, within two-sided 10⁻⁴ binomial intervals."""
    from ldpsim.evaluation.audit.repeated import device_client
    from ldpsim.mechanisms import RAPPOR
    from ldpsim.mechanisms.memo import device_keys

    mech = RAPPOR(epsilon=2.0, num_bits=4, num_hashes=2, cohorts=8, p=0.1, q=0.9)
    one, n, r1, trials = one_report(mech), 4, 2, 20_000
    assert one.share == 0.25
    laws = event_laws(mech, one, n, r1, redrawn=False) + (repeated_rappor_law(mech, one, n, r1),)
    client, rng = device_client(mech), np.random.default_rng(3)
    for world, (first, second) in enumerate(((one.x, one.x_prime), (one.x_prime, one.x), (one.x, one.x))):
        keys = device_keys(trials, rng)
        a = sum(one.s_x(client(np.full(trials, first), keys, rng)) for _ in range(r1)).astype(int)
        b = sum(one.s_x_prime(client(np.full(trials, second), keys, rng)) for _ in range(n - r1)).astype(int)
        for k1 in range(1, r1 + 1):
            for k2 in range(1, n - r1 + 1):
                p = laws[world][k1 - 1, k2 - 1]
                assert _within(int(np.count_nonzero((a >= k1) & (b >= k2))), trials, p), (world, k1, k2)


def test_whole_report_memo_laws_are_closed_form():
    """Keyed memoization of GRR over two values: every half is its one memo, P[S|A] = p², P[S|B] = q²;
    claimed-per-pattern: P[R(x) ≠ R(x′)] = p² + q² under A, 0 under B. dBitFlip (two buckets, ε/2 a bit,
    a = e^{ε/2}/(e^{ε/2} + 1), b = 1 − a): S(u, v) = bits (1, 0) has a·(1 − b) = a² under u and b² under v;
    its halves a⁴ against b⁴, and two memos differ w.p. 1 − (2ab)²."""
    p = math.e / (1 + math.e)
    honest = design_plan("grr_memo")
    assert (honest.p_a, honest.p_b) == (pytest.approx(p * p, rel=1e-12), pytest.approx((1 - p) ** 2, rel=1e-12))
    pattern = design_plan("grr_memo", "claimed-per-pattern")
    assert pattern.p_a == pytest.approx(p * p + (1 - p) ** 2, rel=1e-12) and pattern.p_b == 0.0
    a = math.exp(0.5) / (1 + math.exp(0.5))
    honest = design_plan("dbitflip_memo")
    assert (honest.p_a, honest.p_b) == (pytest.approx(a ** 4, rel=1e-12), pytest.approx((1 - a) ** 4, rel=1e-12))
    pattern = design_plan("dbitflip_memo", "claimed-per-pattern")
    assert pattern.p_a == pytest.approx(1 - (2 * a * (1 - a)) ** 2, rel=1e-12) and pattern.p_b == 0.0
    pi_top, pi_bottom = math.e / (1 + math.e), 1 / (1 + math.e)    # 1BitMean's π(m), π(0) at ε = 1
    honest = design_plan("onebitmean_memo")
    assert (honest.p_a, honest.p_b) == (pytest.approx(pi_top ** 2, rel=1e-12), pytest.approx(pi_bottom ** 2, rel=1e-12))
    pattern = design_plan("onebitmean_memo", "claimed-per-pattern")
    assert pattern.p_a == pytest.approx(1 - 2 * pi_top * pi_bottom, rel=1e-12) and pattern.p_b == 0.0


def test_one_bit_mean_at_its_typical_granularity_is_refused_not_started():
    """1BitMean at granularity 32 has 33 memo classes (its α-rounded levels): the accountant charges the worst
    device 6ε over 6 reports, which a device redrawing every bit reaches exactly (6 fresh reports of ε), so no
    event can FAIL the redrawn memo: the default runs are refused before any run, and the honest pair (two
    levels, 2ε) stays far below the claim."""
    plan = design_plan("onebitmean_memo", granularity=32)
    assert plan.claim == pytest.approx(6.0)
    assert event_epsilon(plan) <= 2.0 + 1e-9
    assert event_epsilon(design_plan("onebitmean_memo", "redrawn-memo", granularity=32)) <= 6.0 + 1e-9
    plans = {bug: design_plan("onebitmean_memo", bug, granularity=32) for bug in design_bugs("onebitmean_memo")}
    with pytest.raises(CostError, match="redrawn-memo"):
        needed_runs(plans, "onebitmean_memo", 0.95)


@pytest.mark.parametrize("design", MEMO)
def test_the_pair_is_tight_against_the_accountant(design):
    """The exact law of the extreme event (every report of each half in its S) has ratio e^{ε(r₁) + ε(r₂)},
    ε(r) = memoized_loss(r), r₁ the accountant's costliest split — its claim, to 10⁻⁹, for GRR and RAPPOR: the
    mixture over the memos reaches the accountant's number and no event of the pair can exceed it. dBitFlip's
    accountant counts d + 1 = 3 memo classes, two values reach two: its claim 3ε is above the pair's 2ε."""
    for sizes in LENGTHS[design]:
        plan = design_plan(design, **sizes)
        s = {**PLANS[design][1], **sizes}
        shape = {k: s[k] for k in ("p", "q", "granularity") if k in s}
        mech = make(MECHANISM[design], **memo_params(design, s["epsilon"], **shape))
        n = s["days"] * s["rounds_per_day"]
        r1 = costliest_split(mech, n)
        p_a, p_b = event_laws(mech, one_report(mech), n, r1, redrawn=False)
        pair = mech.memoized_loss(r1) + mech.memoized_loss(n - r1)
        assert math.log(p_a[-1, -1] / p_b[-1, -1]) == pytest.approx(pair, abs=1e-9), sizes
        assert pair == pytest.approx(plan.claim if design != "dbitflip_memo" else 2 / 3 * plan.claim, abs=1e-12)
        with np.errstate(divide="ignore"):
            assert np.all(np.log(p_a / p_b) <= pair + 1e-9)


@pytest.mark.parametrize("design", MEMO)
def test_claims_are_the_accountants(design):
    """The honest claim is device_spend's ε per device over the run of the memoized use case (epsilon_device,
    same repetition pattern; its epsilon_person is the person's: ∞ for keyed GRR, far above for RAPPOR); the
    planted accountants: one class charged (ε), or ε₁ per class (2·ε₁)."""
    s = dict(PLANS[design][1])
    days, per_day, eps = s.pop("days"), s.pop("rounds_per_day"), s.pop("epsilon")
    params = memo_params(design, eps, **s)
    uc = (UseCase("typing_speed", "reading", "onebitmean", tuple(params.items()), daily_limit=per_day, value_range=(0, 1),
                  memoize=True) if design == "onebitmean_memo" else
          UseCase("u", "event", MECHANISM[design], tuple(params.items()), daily_limit=per_day, memoize=True))
    cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=days)
    spend = device_spend(cfg)
    honest = plan_run(design)
    assert honest.claim == pytest.approx(spend.total(uc.guarantee.label, "epsilon_device"), rel=1e-12)
    assert run_claim(design) == honest.claim
    assert spend.total(uc.guarantee.label, "epsilon_person") > honest.claim + 10
    mech = make(uc.mechanism, **params)
    if design != "rappor":          # GRR, 1BitMean at granularity 1 (levels 0 and 1): two classes; dBitFlip: d + 1 = 3
        assert honest.claim == pytest.approx((3 if design == "dbitflip_memo" else 2) * eps)
        assert plan_run(design, "one-class-charged").claim == pytest.approx(eps)
    else:
        assert plan_run(design, "report-loss-per-class").claim == pytest.approx(2 * mech.epsilon_report)
    for bug in ("redrawn-memo", "claimed-per-pattern"):
        if bug in design_bugs(design):
            assert plan_run(design, bug).claim == honest.claim


@pytest.mark.parametrize("design", MEMO)
def test_honest_event_never_exceeds_the_claim(design):
    honest = plan_run(design)
    assert event_epsilon(honest) <= honest.claim + 1e-12
    for bug in design_bugs(design):
        planted = plan_run(design, bug)
        assert event_epsilon(planted) > planted.claim, bug


@pytest.mark.parametrize("design", ["grr_memo", "dbitflip_memo", "onebitmean_memo",
                                    pytest.param("rappor", marks=pytest.mark.slow)])
def test_designs_pass_and_planted_bugs_fail(design):
    trials = run_trials(design)
    assert trials < (10**4 if design in ("grr_memo", "onebitmean_memo") else 10**6)
    assert audit_run(plan_run(design), trials, 0).verdict == "PASS"
    for bug in design_bugs(design):
        assert audit_run(plan_run(design, bug), trials, 0).verdict == "FAIL", bug


def test_scope_is_the_same_pattern_unless_planted():
    """The honest memoized claim is the same-pattern number (no person-level column); the planted scope bug
    judges it as the person's."""
    honest = audit_whole_run(["grr_memo"], trials=100).table.iloc[0]
    assert "same repetition pattern" in honest.scope and math.isnan(honest.epsilon_person)
    planted = audit_whole_run(["grr_memo"], bug="claimed-per-pattern", trials=100).table.iloc[0]
    assert planted.scope == "one person over the run" and planted.epsilon_person == 2.0


def test_infeasible_and_bad_lengths_are_refused(monkeypatch):
    """Before any run (the runs replaced by a failure): a RAPPOR run whose redrawn memo no feasible count
    detects (2 days × 1 report: one report a half, the redrawn law is the memoized one), runs given beyond
    the hour (2·10⁸ × 12 rounds × 8.8·10⁻⁷ s × 2 worlds ≈ 4 200 CPU-s); one report has no second memo class;
    more than the planned rounds."""
    from ldpsim.scenarios.studies.audit import gate

    def started(plan, trials, rng, confidence):
        raise AssertionError(f"{plan.design}: {trials:,} runs started")
    monkeypatch.setattr(gate, "audit_run", started)
    with pytest.raises(CostError, match="redrawn-memo"):
        audit_whole_run(["rappor"], days=2, rounds_per_day=1)
    with pytest.raises(CostError, match=r"trials = 200,000,000 runs per world of rappor"):
        audit_whole_run(["rappor"], trials=200_000_000)
    with pytest.raises(InputError, match="at least two reports"):
        plan_run("grr_memo", days=1, rounds_per_day=1)
    with pytest.raises(CostError, match="rounds_per_day"):
        plan_run("grr_memo", days=300, rounds_per_day=4)
    with pytest.raises(InputError, match="'bug'"):
        design_plan("rappor", "one-class-charged")
    with pytest.raises(InputError, match="'q'"):
        design_plan("rappor", q=1.5)
    with pytest.raises(InputError, match="size 'q'"):
        design_plan("grr_memo", q=0.5)


def test_cli_audits_a_memoized_design(capsys):
    from ldpsim.scenarios.cli import main
    assert main(["audit", "--run", "--design", "grr_memo", "--planted", "one-class-charged"]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert main(["audit", "--run", "--design", "rappor", "--planted", "one-class-charged"]) == 2
