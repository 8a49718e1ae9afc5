"""Population engine: batching, common random numbers, and reports path ≡ direct path."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.mechanisms import GRR, FrequencyOracle
from ldpsim.simulator.population import (estimate_counts, items_for, population_batches, simulate_aggregate,
                                  streams)
from tests.mechanisms.cases import CASES
from tests.stats import assert_chisquare_gof, assert_same_distribution

COUNTS = np.array([50, 30, 10, 5, 5])


class Spy:
    """Wraps a mechanism, records what its client side is given; optionally hides the direct sampler."""

    def __init__(self, mechanism, direct=True):
        self.mechanism, self.direct, self.seen = mechanism, direct, []
        self.takes_tokens = mechanism.takes_tokens

    def perturb(self, values, rng=None):
        self.seen.append(np.asarray(values).copy())
        return self.mechanism.perturb(values, rng)

    def aggregate(self, reports):
        return self.mechanism.aggregate(reports)

    def perturb_aggregate(self, values, rng=None):
        return self.aggregate(self.perturb(values, rng))

    def estimate(self, agg, items=None):
        return self.mechanism.estimate(agg, items)

    def sample_aggregate(self, true_counts, rng=None, items=None):
        if not self.direct:
            raise NotImplementedError
        return self.mechanism.sample_aggregate(true_counts, rng, items)


class Tokens(Spy):
    """Pretends to be a sketch on tokens."""

    def __init__(self, mechanism):
        super().__init__(mechanism)
        self.takes_tokens = True


def test_items_for():
    words = np.array(["a", "b", "c"], dtype=object)
    np.testing.assert_array_equal(items_for(GRR(1.0, 3), words), [0, 1, 2])
    assert items_for(Tokens(GRR(1.0, 3)), words).tolist() == ["a", "b", "c"]


def test_batches_cover_the_population_exactly():
    batches = list(population_batches(COUNTS, np.random.default_rng(0), batch_size=30))
    assert [b.size for b in batches] == [30, 30, 30, 10]
    np.testing.assert_array_equal(np.bincount(np.concatenate(batches)), COUNTS)


def test_batched_order_is_a_uniform_permutation():
    """One odd user among four, batches of 3: its position is uniform over 0..3 (chi-square)."""
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(1).spawn(4000)]
    pos = [int(np.flatnonzero(np.concatenate(list(population_batches([3, 1], r, 3))) == 1)[0]) for r in rngs]
    assert_chisquare_gof(np.bincount(pos, minlength=4), np.full(4, 0.25), what="position of the odd user")


def test_common_random_numbers_same_population_across_mechanisms():
    a, b = Spy(GRR(0.5, 5), direct=False), Spy(GRR(4.0, 5), direct=False)
    items = np.arange(5)
    simulate_aggregate(a, items, COUNTS, rng=9, batch_size=40)
    simulate_aggregate(b, items, COUNTS, rng=9, batch_size=40)
    assert len(a.seen) == 3
    for x, y in zip(a.seen, b.seen):
        np.testing.assert_array_equal(x, y)
    ss = np.random.SeedSequence(5)
    np.testing.assert_array_equal(estimate_counts(GRR(1.0, 5), items, COUNTS, ss, "reports"),
                                  estimate_counts(GRR(1.0, 5), items, COUNTS, ss, "reports"))


def test_generator_is_a_running_stream():
    g = np.random.default_rng(3)
    first, second = streams(g), streams(g)
    assert first[0].random() != second[0].random()
    assert streams(3)[0].random() == streams(3)[0].random()
    assert streams(3)[0].random() != streams(3)[1].random()


def test_auto_path_falls_back_to_reports():
    spy = Spy(GRR(1.0, 5), direct=False)
    agg = simulate_aggregate(spy, np.arange(5), COUNTS, rng=1)
    assert agg.n == COUNTS.sum() and spy.seen
    with pytest.raises(NotImplementedError):
        simulate_aggregate(spy, np.arange(5), COUNTS, rng=1, path="direct")
    direct = Spy(GRR(1.0, 5))
    simulate_aggregate(direct, np.arange(5), COUNTS, rng=1)
    assert not direct.seen


def test_tokens_reach_token_mechanisms():
    spy = Tokens(GRR(1.0, 3))
    words = np.array(["x", "y", "z"], dtype=object)
    with pytest.raises(TypeError):  # GRR refuses str tokens: proves the tokens were passed through
        simulate_aggregate(spy, words, [2, 1, 1], rng=0, path="reports")
    assert spy.seen[0].dtype == object


def test_bad_arguments():
    with pytest.raises(ValueError, match="'path' parameter of simulate_aggregate must be one of"):
        simulate_aggregate(GRR(1.0, 5), np.arange(5), COUNTS, path="fast")
    with pytest.raises(ValueError, match="same length"):
        simulate_aggregate(GRR(1.0, 5), np.arange(4), COUNTS)


def test_empty_population():
    agg = simulate_aggregate(GRR(1.0, 3), np.arange(3), [0, 0, 0], rng=0, path="reports")
    assert agg.n == 0 and agg.data.sum() == 0


ORACLE_CASES = sorted(name for name, c in CASES.items() if issubclass(c.cls, FrequencyOracle))


@pytest.mark.parametrize("name", ORACLE_CASES)
def test_batched_reports_path_matches_direct_path(name):
    """Two-sample test (Welch z + KS per aggregate cell, tests/stats.py) of the two paths' aggregates."""
    case = CASES[name]
    mech = case.make()
    items, counts = case.item_array, case.count_array
    batch = max(1, int(counts.sum()) // 3 + 1)  # three batches per population
    seeds = np.random.SeedSequence(17).spawn(600)
    direct = [simulate_aggregate(mech, items, counts, s, "direct").data.ravel() for s in seeds[:300]]
    reports = [simulate_aggregate(mech, items, counts, s, "reports", batch).data.ravel() for s in seeds[300:]]
    assert_same_distribution(np.array(direct), np.array(reports), what=f"{name} aggregate")


def test_reports_path_refuses_a_population_numpy_cannot_deal():
    from ldpsim.mechanisms import GRR
    from ldpsim.simulator.population import estimate_counts
    with pytest.raises(ValueError, match="'counts' sum to 1,000,000,002 users.*path='direct'"):
        estimate_counts(GRR(1.0, 3), np.arange(3), np.array([10**9, 1, 1]), 0, path="reports")
