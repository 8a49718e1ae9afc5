"""Person-level ε of memoized reports against exact enumeration of every history and output
(docs/math.md §8.6)."""

import itertools
import math

import numpy as np
import pytest

from ldpsim.evaluation.privacy.accountant import losses
from ldpsim.evaluation.privacy.person_level import bit_log_ratio, person_level
from ldpsim.mechanisms.frequency.dbitflip import DBitFlip
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.mechanisms.frequency.rappor import RAPPOR
from ldpsim.mechanisms.numeric.onebitmean import OneBitMean


def pattern(h):
    """The repetition pattern of a history: each day's first day with the same value."""
    return tuple(h.index(v) for v in h)


def memo_log_likelihood(T, h, y):
    """ln P(y | h) of pure memoization: one report y_v ~ T[v] per distinct value, re-sent unchanged."""
    out = 0.0
    for v in set(h):
        sent = {y[t] for t in range(len(h)) if h[t] == v}
        if len(sent) > 1:
            return -math.inf
        out += math.log(T[v, sent.pop()])
    return out


def bitwise_log_likelihood(pi, q0, q1, h, y):
    """ln P(y | h) of a memoized permanent response with a fresh randomization of every sent bit:
    value v's permanent bit i is 1 w.p. pi[v, i] (independent over values and bits); the sent bit is
    1 w.p. q1 (permanent 1) or q0 (permanent 0). y: (D, k) bits."""
    out = 0.0
    for v in set(h):
        days = [t for t in range(len(h)) if h[t] == v]
        for i in range(pi.shape[1]):
            ones = sum(y[t][i] for t in days)
            zeros = len(days) - ones
            p1 = q1 ** ones * (1 - q1) ** zeros
            p0 = q0 ** ones * (1 - q0) ** zeros
            out += math.log(pi[v, i] * p1 + (1 - pi[v, i]) * p0)
    return out


def exact_sup(loglik, values, outputs, D, same_pattern=False):
    """sup over histories h, h' ∈ values^D (same repetition pattern if asked) and outputs y of
    ln P(y|h) − ln P(y|h')."""
    hs = list(itertools.product(values, repeat=D))
    L = np.array([[loglik(h, y) for y in outputs] for h in hs])
    best = -math.inf
    for a in range(len(hs)):
        for b in range(len(hs)):
            if same_pattern and pattern(hs[a]) != pattern(hs[b]):
                continue
            with np.errstate(invalid="ignore"):
                diff = L[a] - L[b]
            diff = diff[np.isfinite(L[a])]
            best = max(best, float(diff.max()) if diff.size else -math.inf)
    return best


@pytest.fixture(scope="module")
def grr_case():
    mech, D = GRR(epsilon=1.0, domain_size=3), 3
    T = mech.transition_matrix()
    loglik = lambda h, y: memo_log_likelihood(T, h, y)  # noqa: E731
    outputs = list(itertools.product(range(3), repeat=D))
    return mech, D, loglik, outputs


def test_pure_memoization_is_infinite_between_arbitrary_histories(grr_case):
    mech, D, loglik, outputs = grr_case
    assert exact_sup(loglik, range(3), outputs, D) == math.inf
    assert person_level(mech, D).epsilon == math.inf
    assert person_level(mech, 1).epsilon == pytest.approx(mech.guarantee.epsilon_report)


def test_printed_number_is_the_exact_same_pattern_sup(grr_case):
    mech, D, loglik, outputs = grr_case
    exact = exact_sup(loglik, range(3), outputs, D, same_pattern=True)
    printed = sum(e * n for e, n in losses(mech, D, 3).items())  # the accountant's ε per device
    assert exact == pytest.approx(printed, rel=1e-12)
    assert exact == pytest.approx(3 * 1.0, rel=1e-12)


def test_repeat_against_fresh_history_closed_form():
    # memoized GRR, ε = 1, d = 10, D = 4: (a,a,a,a) against (b,c,d,e) on output (a,a,a,a)
    mech, D = GRR(epsilon=1.0, domain_size=10), 4
    T = mech.transition_matrix()
    y = (0, 0, 0, 0)
    ratio = memo_log_likelihood(T, (0, 0, 0, 0), y) - memo_log_likelihood(T, (1, 2, 3, 4), y)
    assert ratio == pytest.approx(1.0 + (D - 1) * math.log(math.e + 9), rel=1e-12)
    assert ratio == pytest.approx(8.38, abs=0.005)
    assert math.exp(memo_log_likelihood(T, (0, 0, 0, 0), y)) == pytest.approx(0.232, abs=5e-4)
    assert math.exp(memo_log_likelihood(T, (1, 2, 3, 4), y)) == pytest.approx(5.3e-5, abs=5e-7)


def _bitwise_case(pi, q0, q1, D, same_pattern=False):
    k = pi.shape[1]
    outputs = [tuple(tuple(bits[t * k:(t + 1) * k]) for t in range(D))
               for bits in itertools.product((0, 1), repeat=D * k)]
    loglik = lambda h, y: bitwise_log_likelihood(pi, q0, q1, h, y)  # noqa: E731
    return exact_sup(loglik, range(pi.shape[0]), outputs, D, same_pattern)


def rappor_case():
    mech = RAPPOR(epsilon=2.0, num_bits=2, num_hashes=1, cohorts=1, p=0.3, q=0.8)
    f = mech.f
    # the two Bloom filters of one hash over two bits: value 0 sets bit 0, value 1 sets bit 1
    pi = f / 2 + (1 - f) * np.eye(2)
    return mech, pi, mech.p, mech.q


def dbitflip_case():
    mech = DBitFlip(epsilon=2.0, domain_size=4, d=2, gamma=0.15)
    # memo classes: the value's bucket is sampled bucket 0, bucket 1, or neither
    pi = np.array([[mech.a, mech.b], [mech.b, mech.a], [mech.b, mech.b]])
    return mech, pi, mech.gamma, 1 - mech.gamma


def onebitmean_case():
    mech = OneBitMean(epsilon=1.5, m=1.0, granularity=2, gamma=0.1)
    pi = mech.bit_probability(np.array([0.0, 0.5, 1.0]))[:, None]  # the three levels' memoized bit
    return mech, pi, mech.gamma, 1 - mech.gamma


@pytest.mark.parametrize("case, D", [(rappor_case, 2), (rappor_case, 3), (dbitflip_case, 2), (onebitmean_case, 3)])
def test_memo_with_instantaneous_randomization_is_bounded(case, D):
    mech, pi, q0, q1 = case()
    exact = _bitwise_case(pi, q0, q1, D)
    bound = person_level(mech, D)
    assert bound.design == "memoized + instantaneous"
    assert math.isfinite(exact) and exact <= bound.epsilon + 1e-12
    # the accountant's number is a bound between histories of one repetition pattern
    printed = sum(e * n for e, n in losses(mech, D, pi.shape[0]).items())
    assert _bitwise_case(pi, q0, q1, D, same_pattern=True) <= printed + 1e-12


def test_printed_number_is_not_person_level_with_instantaneous_randomization():
    # RAPPOR, D = 3: histories that differ in whether values repeat are told apart beyond the
    # accountant's same-pattern number (exact 2.624 against 2.508)
    mech, pi, q0, q1 = rappor_case()
    printed = sum(e * n for e, n in losses(mech, 3, 2).items())
    assert _bitwise_case(pi, q0, q1, 3) > printed + 0.1


def test_gamma_zero_is_pure_memoization():
    assert person_level(DBitFlip(epsilon=1.0, domain_size=4, d=2), 2).epsilon == math.inf
    assert person_level(OneBitMean(epsilon=1.0, m=1.0), 2).epsilon == math.inf


def test_bit_log_ratio():
    assert bit_log_ratio(0.25, 0.75) == pytest.approx(math.log(3))
    assert bit_log_ratio(0.0, 0.5) == math.inf


def _spend(uc, days=4):
    from ldpsim.evaluation.privacy.accountant import device_spend
    from ldpsim.simulator.config import DeploymentConfig
    items = tuple(f"e{i}" for i in range(10))
    cfg = DeploymentConfig(items=items, item_weights=(1,) * 10, use_cases=(uc,), n_days=days)
    return device_spend(cfg)


def test_accountant_prints_the_person_level_beside_the_same_pattern_number():
    from ldpsim.simulator.config import UseCase
    grr = UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", 10)), memoize=True)
    spend = _spend(grr)
    row = spend.table.set_index("use_case").loc["emoji"]
    assert row["epsilon_device"] == pytest.approx(4.0) and row["epsilon_person"] == math.inf
    assert spend.total(column="epsilon_person") == math.inf
    line = spend.lines()[0]
    assert "per value, same repetition pattern" in line and "per person over the run ∞" in line
    fresh = _spend(UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", 10))))
    assert fresh.total(column="epsilon_person") == pytest.approx(4.0)
    assert "per person" not in fresh.lines()[0]


def test_run_lines_scope_each_memoized_use_case_and_the_total():
    from ldpsim.evaluation.report.run_summary import person_lines as run_lines
    from ldpsim.simulator.config import DeploymentConfig, UseCase
    items = tuple(f"e{i}" for i in range(10))
    memo = UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", 10)), memoize=True)
    cfg = DeploymentConfig(items=items, item_weights=(1,) * 10, use_cases=(memo,), n_days=4)
    lines = run_lines(cfg)
    assert lines[0].startswith("emoji: memoized, ε per device per value, same repetition pattern")
    assert "per person over the run ∞ (a change of report proves a change of value" in lines[0]
    assert lines[1] == ("all use cases (ε-LDP): per device over the run 4 (per value, same repetition pattern), "
                        "per person over the run ∞")
    fresh = UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", 10)))
    assert run_lines(DeploymentConfig(items=items, item_weights=(1,) * 10, use_cases=(fresh,), n_days=4)) == []
