"""SFP's compiled fragment search against a plain reference: the same fragments, the same ``dropped``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ldpsim.mechanisms.discovery import fragment_search
from ldpsim.mechanisms.discovery.false_discoveries import (DEFAULT_FALSE_DISCOVERIES, above, count_threshold,
                                                           sketch_null_share)
from ldpsim.mechanisms.discovery.sfp import SFP
from ldpsim.mechanisms.discovery.words import sketch_sums

PACKAGE = Path(fragment_search.__file__).resolve().parents[2] / "mechanisms"


def reference_slots(mech: SFP, agg, threshold: float, per_slot: int, rate: float) -> tuple[np.ndarray, int]:
    """The definition, token by token: every token's sum S read cell by cell through the family's own
    ``evaluate``; a slot keeps the valid fragments whose estimate reaches threshold·σ_l, sorted by S
    (stable: smaller fragment first on ties), the first ``per_slot``; dropped counts, per slot, those of
    them whose S reaches the position's false-discovery bar beyond the first ``per_slot``."""
    _, frag_aggs = mech.parts(agg)
    cms, b = mech.fragment_cms, mech.codec.base
    hash_values, b2 = 1 << mech.hash_bits, b * b
    tokens = np.arange(hash_values * b2, dtype=np.uint64)
    cells = cms.family.evaluate(np.arange(cms.k)[:, None], tokens[None, :])  # (k, R·b²)
    out = np.full((hash_values, mech.positions, per_slot), -1, dtype=np.int64)
    q0 = sketch_null_share(cms.flip, cms.m)
    dropped = 0
    for pos, frag_agg in enumerate(frag_aggs):
        table, n = frag_agg.data, frag_agg.n
        sums = table[np.arange(cms.k)[:, None], cells].sum(axis=0).reshape(hash_values, b2)
        sigma = cms.m / (cms.m - 1) * np.sqrt(n * (cms.c_eps ** 2 - 1) / 4 + n / cms.m)
        frags = np.array([s * b + t for s in range(b) for t in range(b)
                          if not (s == 0 and t != 0) and not (pos == 0 and s == 0)])
        bar = count_threshold(n, q0, hash_values * frags.size, rate)
        for r in range(hash_values):
            est = cms.estimates_from_sums(n, sums[r, frags])
            frequent = frags[est >= threshold * sigma]
            s = sums[r, frequent]
            order = np.argsort(-s, kind="stable")
            out[r, pos, :min(per_slot, order.size)] = frequent[order[:per_slot]]
            dropped += max(0, above(s, bar).size - per_slot)
    return out, dropped


CASES = [  # SFP parameters: packed positions (L/2 = 2, 3), one position alone, m not a power of two, ties
    dict(epsilon=3.0, length=4, alphabet="abc", hash_bits=2, word_k=8, word_m=64, fragment_k=8, fragment_m=64),
    dict(epsilon=2.0, length=6, alphabet="abcd", hash_bits=1, word_k=8, word_m=64, fragment_k=5, fragment_m=48),
    dict(epsilon=4.0, length=2, alphabet="abcdefg", hash_bits=3, word_k=8, word_m=64, fragment_k=16, fragment_m=32),
    dict(epsilon=1.0, length=4, alphabet="ab", hash_bits=2, word_k=4, word_m=16, fragment_k=3, fragment_m=7),
]
WORDS = ("ab", "cab", "a", "bca", "cc", "dab", "bad", "g", "fe")


@pytest.mark.parametrize("case", range(len(CASES)))
def test_slots_equal_the_reference(case, monkeypatch):
    """Same fragments and the same ``dropped`` as the token-by-token definition, at thresholds that keep
    many fragments per slot (sums tie often in these small sketches) and at a false-discovery rate that
    lets the bar count, over blocks of 7 tokens (the last one shorter) and the default block."""
    params = CASES[case]
    mech = SFP(**params)
    words = [w for w in WORDS if set(w) <= set(params["alphabet"]) and len(w) <= params["length"]]
    for seed in range(3):
        agg = mech.sample_aggregate(np.arange(len(words)) * 300 + 200, np.random.default_rng(seed), words)
        for threshold, per_slot, rate in [(0.0, 16, 1e6), (1.5, 4, DEFAULT_FALSE_DISCOVERIES), (0.5, 1, 50.0)]:
            want = reference_slots(mech, agg, threshold, per_slot, rate)
            for block in (7, fragment_search.BLOCK):
                monkeypatch.setattr(fragment_search, "BLOCK", block)
                got = mech.fragment_slots(agg, threshold, per_slot, rate)
                assert np.array_equal(got[0], want[0]) and got[1] == want[1], (seed, threshold, block)


def test_reference_sees_drops_and_ties():
    """The comparison above is not vacuous: on its own inputs, the reference drops fragments and keeps
    fragments of equal sums in one slot."""
    drops = ties = 0
    for params in CASES:
        mech = SFP(**params)
        words = [w for w in WORDS if set(w) <= set(params["alphabet"]) and len(w) <= params["length"]]
        agg = mech.sample_aggregate(np.arange(len(words)) * 300 + 200, np.random.default_rng(0), words)
        drops += reference_slots(mech, agg, 0.5, 1, 50.0)[1]
        frags = reference_slots(mech, agg, 0.0, 16, 1e6)[0]
        _, tables = mech.parts(agg)
        for r, pos in zip(*np.nonzero((frags >= 0).sum(axis=2) > 1)):
            kept = frags[r, pos][frags[r, pos] >= 0] + r * mech.codec.base ** 2
            s = sketch_sums(mech.fragment_cms.family, tables[pos].data, kept)
            ties += int((np.diff(s) == 0).any())
    assert drops > 0 and ties > 0


@pytest.mark.slow
def test_numba_stays_out_of_the_import():
    """``import ldpsim`` and importing SFP and the registry load no numba: only a fragment search does."""
    code = ("import sys, ldpsim, ldpsim.mechanisms.discovery.sfp, ldpsim.mechanisms.registry; "
            "print('numba' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split() == ["False"]


@pytest.mark.slow
def test_compiled_search_is_cached_outside_the_package(tmp_path, monkeypatch):
    """The compiled search goes to the user's cache folder, never beside the source."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fragment_search._kernel.cache_clear()
    try:
        mech = SFP(**CASES[0])
        mech.fragment_slots(mech.sample_aggregate([500], np.random.default_rng(0), ["ab"]))
    finally:
        fragment_search._kernel.cache_clear()
    assert list((tmp_path / "ldpsim" / "numba").rglob("*.nbi"))
    assert not [p for p in PACKAGE.rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_tables_must_hold_counts():
    """A sketch of negative or fractional cells is refused, naming what is expected."""
    mech = SFP(**CASES[0])
    tables = np.zeros((2, mech.fragment_k, mech.fragment_m + 1))
    valid = np.ones((2, mech.codec.base ** 2), dtype=bool)
    for bad in (-1.0, 0.5):
        tables[1, 2, 3] = bad
        with pytest.raises(ValueError, match="non-negative integer counts"):
            fragment_search.slot_fragments(mech.fragment_cms.family, tables, valid, [0, 0], [1, 1], 2, 4)


def test_per_slot_is_checked_where_it_enters():
    """fragment_slots names a per_slot outside [1, 16] (the compiled loop would read out of bounds)."""
    mech = SFP(**CASES[0])
    agg = mech.sample_aggregate([500], np.random.default_rng(0), ["ab"])
    for bad in (0, 17):
        with pytest.raises(ValueError, match="per_slot"):
            mech.fragment_slots(agg, per_slot=bad)


def test_shapes_are_checked_before_the_compiled_loop():
    """The compiled loop reads without bounds checks, so slot_fragments refuses mismatched shapes."""
    mech = SFP(**CASES[0])
    family, k, m = mech.fragment_cms.family, mech.fragment_k, mech.fragment_m
    tables, valid = np.zeros((2, k, m + 1), dtype=np.int64), np.ones((2, 16), dtype=bool)
    good = dict(family=family, tables=tables, valid=valid, least=[0, 0], bar=[1, 1], per_slot=2, hash_values=4)
    assert fragment_search.slot_fragments(**good)[0].shape == (4, 2, 2)
    for change in (dict(tables=tables[:1]), dict(tables=tables[:, :k - 1]), dict(valid=valid[:1]),
                   dict(least=[0]), dict(bar=[1, 1, 1]), dict(per_slot=0), dict(hash_values=0)):
        with pytest.raises(ValueError, match="slot_fragments"):
            fragment_search.slot_fragments(**{**good, **change})
