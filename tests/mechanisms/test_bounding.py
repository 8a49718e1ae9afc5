"""Contribution bounding (mechanisms/bounding.py, docs/math.md §8.7): each sampler's inclusion law
against its closed form (and successive sampling against an exact enumeration), the bounds themselves,
and the discovery protocols that use the family.

Statistical checks: R replicas of a small population of devices in one vectorized call; each entry's
kept-fraction is a mean of R Bernoulli(π) draws, tested with a z bound at family-wise α = 10⁻⁴
(Bonferroni over the entries, tests/stats.py); entries with π ∈ {0, 1} must be exact.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ldpsim.mechanisms.bounding import BOUNDING, SAMPLERS, ContributionBound, sample_records
from ldpsim.runtime.errors import InputError
from tests.stats import assert_z

#: three devices: ties, a lone item, a long tail; counts are typed occurrences
DEVICE = np.array([0, 0, 0, 0, 0, 1, 2, 2, 2])
COUNTS = np.array([5, 3, 3, 1, 2, 4, 7, 7, 1])
R = 20_000


def replicated(r: int = R):
    """R copies of the population as distinct devices (entries of a device contiguous)."""
    n_dev = DEVICE.max() + 1
    device = (DEVICE[None, :] + n_dev * np.arange(r)[:, None]).ravel()
    return device, np.tile(COUNTS, r)


def successive_inclusion(counts: np.ndarray, l0: int) -> np.ndarray:
    """Exact inclusion of successive sampling ∝ counts, l0 draws: the sum over every ordered sequence."""
    k, out = counts.size, np.zeros(counts.size)
    for seq in itertools.permutations(range(k), min(l0, k)):
        p, left = 1.0, counts.sum()
        for i in seq:
            p *= counts[i] / left
            left -= counts[i]
        out[list(seq)] += p
    return out


def check_law(bound: ContributionBound, expected: np.ndarray, seed: int) -> None:
    device, counts = replicated()
    kept = bound.select(device, counts, rng=seed).reshape(R, -1) > 0
    share = kept.mean(axis=0)
    exact = (expected == 0) | (expected == 1)
    assert np.array_equal(share[exact], expected[exact]), (bound, share, expected)
    inner = ~exact
    if inner.any():
        assert_z(share[inner], expected[inner], np.sqrt(expected[inner] * (1 - expected[inner]) / R),
                 what=f"{bound} inclusion")


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("l0", [1, 2, 3])
def test_inclusion_law_matches_closed_form(sampler, l0):
    bound = ContributionBound(l0=l0, sampler=sampler)
    if sampler == "occurrence" and l0 > 1:
        expected = np.concatenate([successive_inclusion(COUNTS[DEVICE == d], l0) for d in range(3)])
        with pytest.raises(InputError, match="no closed form"):
            bound.inclusion(DEVICE, COUNTS)
    else:
        expected = bound.inclusion(DEVICE, COUNTS)
    check_law(bound, expected, seed=100 * l0 + SAMPLERS.index(sampler))


def test_closed_forms_by_hand():
    """The closed forms of docs/math.md §8.7 on device 0 (counts 5, 3, 3, 1, 2; N = 14)."""
    c = COUNTS[:5]
    dev = np.zeros(5, int)
    assert ContributionBound(2, sampler="uniform").inclusion(dev, c) == pytest.approx([0.4] * 5)
    assert ContributionBound(1, sampler="occurrence").inclusion(dev, c) == pytest.approx(c / 14)
    assert ContributionBound(2, sampler="top").inclusion(dev, c) == pytest.approx([1, .5, .5, 0, 0])
    assert ContributionBound(3, sampler="top").inclusion(dev, c) == pytest.approx([1, 1, 1, 0, 0])
    none = [np.prod([(14 - ci - j) / (14 - j) for j in range(2)]) for ci in c]
    assert ContributionBound(2, sampler="events").inclusion(dev, c) == pytest.approx(1 - np.array(none))
    assert successive_inclusion(c, 1) == pytest.approx(c / 14)
    assert successive_inclusion(c, 5) == pytest.approx(np.ones(5))


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_bounds_hold(sampler):
    """At most l0 items (events: l0 occurrences) per device, at most L∞ each, never an ineligible entry."""
    device, counts = replicated(500)
    eligible = np.tile(COUNTS != 3, 500)
    bound = ContributionBound(l0=2, linf=2, sampler=sampler)
    got = bound.select(device, counts, eligible, rng=5)
    per_device = np.bincount(device, weights=got > 0)
    assert per_device.max() <= 2 and got.max() <= 2 and not got[~eligible].any()
    if sampler == "events":
        assert np.bincount(device, weights=got).max() <= 2
    else:  # a kept item contributes min(count, L∞)
        assert np.array_equal(got[got > 0], np.minimum(counts[got > 0], 2))
    inc = bound.inclusion(device[:9], counts[:9], eligible[:9]) if sampler != "occurrence" else None
    if inc is not None:
        assert not inc[~eligible[:9]].any()


def test_same_seed_same_choice_and_no_eligible_entries():
    device, counts = replicated(50)
    for s in SAMPLERS:
        b = ContributionBound(l0=2, sampler=s)
        assert np.array_equal(b.select(device, counts, rng=9), b.select(device, counts, rng=9))
        assert not b.select(device, counts, np.zeros(device.size, bool), rng=9).any()
    assert ContributionBound().select([], [], rng=1).size == 0


def test_events_sampler_on_records_is_uniform_without_replacement():
    """sample_records: quota records per device, each subset equally likely (the deployment's daily limit)."""
    device = np.repeat(np.arange(R), 4)
    chosen = sample_records(device, np.full(R, 2), np.random.default_rng(11))
    assert np.array_equal(np.bincount(device[chosen], minlength=R), np.full(R, 2))
    share = np.bincount(chosen % 4, minlength=4) / R
    assert_z(share, np.full(4, 0.5), np.full(4, np.sqrt(0.25 / R)), what="record inclusion")


@pytest.mark.parametrize("kwargs, match", [
    ({"l0": 0}, "'l0'"), ({"linf": 0}, "'linf'"), ({"sampler": "best"}, "'sampler'")])
def test_bad_parameters_named(kwargs, match):
    with pytest.raises(InputError, match=match):
        ContributionBound(**kwargs)


def test_bad_entries_named():
    b = ContributionBound()
    with pytest.raises(InputError, match="non-decreasing"):
        b.select([1, 0], [1, 1])
    with pytest.raises(InputError, match="'counts'"):
        b.select([0, 0], [1, -1])
    with pytest.raises(InputError, match="'counts' must be numbers"):
        b.select([0, 0], ["a", "b"])
    with pytest.raises(InputError, match="'eligible'"):
        b.select([0, 0], [1, 1], eligible=[True])


def test_discovery_protocols_use_the_family():
    """Gboard's sampler and the prefix tree's selection are the family's law with one word per device,
    ties uniformly at random in both."""
    from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
    from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
    assert set(BOUNDING) == {"random", "top"}
    tree = PrefixTree(epsilon=2.0, length=3, alphabet="ab", selection="top")
    rows, _ = tree.codec.symbols(["a", "b", "ab"])
    _, _, probs = tree.choice_probabilities(rows, np.array([[2.0, 2.0, 1.0]]), tree.root())
    assert np.sort(probs[0])[::-1][:3] == pytest.approx([0.5, 0.5, 0.0])  # "a", "b" tied; "ab" never
    g = GboardTrie(epsilon=2.0, length=3, alphabet="ab", sampler="top")
    device, counts = replicated()
    picked = g.choose(device, counts, np.ones(device.size, bool), rng=21).reshape(R, -1)
    expected = ContributionBound(1, sampler="top").inclusion(DEVICE, COUNTS)
    inner = (expected > 0) & (expected < 1)
    assert_z(picked.mean(axis=0)[inner], expected[inner], np.sqrt(expected[inner] * (1 - expected[inner]) / R),
             what="Gboard top ties")


def test_bound_run_holds_per_day_and_per_run_bounds():
    """bound_run: at most L0 items a day and per run, L∞ per item a day and over the run."""
    import pandas as pd
    from ldpsim.mechanisms.bounding import bound_run
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"day": rng.integers(0, 5, 3000), "device": rng.integers(0, 40, 3000),
                        "item": rng.integers(0, 20, 3000), "count": rng.integers(1, 4, 3000)})
    df = raw.groupby(["day", "device", "item"], as_index=False)["count"].sum()
    df["got"] = bound_run(df.day, df.device, df.item, df["count"], ContributionBound(2, 2, "occurrence"),
                          ContributionBound(3, 5, "top"), rng=1)
    kept = df[df.got > 0]
    assert kept.groupby(["day", "device"]).item.nunique().max() == 2
    assert kept.groupby("device").item.nunique().max() == 3
    assert df.got.max() == 2 and df.groupby(["device", "item"]).got.sum().max() == 5
    assert (df.got <= df["count"]).all()
    with pytest.raises(InputError, match="once"):
        bound_run([0, 0], [1, 1], [2, 2], [1, 1], ContributionBound())
