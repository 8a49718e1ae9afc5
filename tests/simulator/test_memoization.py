"""Memoization: keyed reports have the mechanism's law, repeat exactly, and are charged once per value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldpsim.mechanisms import make
from ldpsim.simulator.config import UseCase
from ldpsim.simulator.deployment import run
from ldpsim.simulator.ledger import PrivacyLedger
from ldpsim.mechanisms.memo import key_streams, keyed_perturb
from ldpsim.simulator.memoization import Memo, report_keys
from tests.fleets import ITEMS, tiny_config
from tests.stats import assert_chisquare_gof

ALPHA = 1e-4  # false-alarm rate of each statistical check


def _keys(n, base=123):
    return report_keys(base, np.arange(n), np.zeros(n, np.int64))


def test_keyed_uniforms_are_uniform_and_deterministic():
    u = key_streams(_keys(20_000), 3)
    assert np.array_equal(u, key_streams(_keys(20_000), 3))
    counts = np.histogram(u.ravel(), bins=20, range=(0, 1))[0]
    assert_chisquare_gof(counts, np.full(20, 1 / 20), alpha=ALPHA)
    # different counters of one key and different keys are uncorrelated: |r| within 5 sd of 0
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 5 / np.sqrt(u.shape[0])


@pytest.mark.parametrize("name,params", [("grr", {"domain_size": 6}), ("sdgrr", {"domain_size": 6, "high": [0, 1]}),
                                         ("urr", {"domain_size": 6, "sensitive": [0, 1]}), ("hr", {"domain_size": 6})])
def test_keyed_transition_mechanisms_have_the_mechanisms_law(name, params):
    mech = make(name, epsilon=1.0, **params)
    n, x = 30_000, 2
    y = keyed_perturb(mech, np.full(n, x), _keys(n))
    row = mech.transition_matrix()[x]
    assert_chisquare_gof(np.bincount(y, minlength=row.size), row, alpha=ALPHA)
    assert np.array_equal(y, keyed_perturb(mech, np.full(n, x), _keys(n)))  # a memo: same key, same report


def _z_ok(hits, n, p):
    """|hits − n·p| within 4.5 sd (two-sided false alarm ≈ 7e-6 per test)."""
    return np.all(np.abs(hits - n * p) <= 4.5 * np.sqrt(n * p * (1 - p)))


def test_keyed_oue_bits_have_p_and_q():
    mech = make("oue", epsilon=1.0, domain_size=10)
    n = 20_000
    rows = keyed_perturb(mech, np.full(n, 3), _keys(n))
    ones = np.unpackbits(rows, axis=1, count=10).sum(axis=0)
    assert _z_ok(ones[3], n, mech.p)
    assert _z_ok(np.delete(ones, 3), n, mech.q)


def test_keyed_cms_flips_with_f_and_rows_uniform():
    mech = make("cms", epsilon=2.0, k=8, m=64, seed=1)
    n = 20_000
    rep = keyed_perturb(mech, np.zeros(n, np.int64), _keys(n), np.array(["a"] * n, dtype=object))
    assert_chisquare_gof(np.bincount(rep.row, minlength=8), np.full(8, 1 / 8), alpha=ALPHA)
    pos = mech.family.evaluate(rep.row, mech.value_keys(np.array(["a"] * n, dtype=object)))
    bits = np.unpackbits(rep.bits, axis=1, count=64)
    own = bits[np.arange(n), pos]
    bits[np.arange(n), pos] = 0
    # the own bit is 1 unless flipped (1 − f); every other bit is a flip (f)
    assert _z_ok(own.sum(), n, 1 - mech.flip)
    assert _z_ok(bits.sum(), n * 63, mech.flip)


def test_keyed_olh_and_hcms_are_deterministic_and_estimate_unbiased():
    n = 20_000
    for mech, tokens, items, counts in (
            (make("olh", epsilon=2.0, domain_size=5), None, None, np.array([n, 0, 0, 0, 0])),
            (make("hcms", epsilon=2.0, k=4, m=16), np.array(["a"] * n, dtype=object), ["a"], np.array([n]))):
        x = np.zeros(n, np.int64)
        rep = keyed_perturb(mech, x, _keys(n), tokens)
        again = keyed_perturb(mech, x, _keys(n), tokens)
        assert all(np.array_equal(a, b) for a, b in zip(rep, again))
        est = mech.estimate(mech.aggregate(rep), items)[0]
        bias = mech.bias(counts, items)[0]
        sd = np.sqrt(mech.variance(counts, items)[0])
        assert abs(est - n - bias) <= 4.5 * sd


def test_memo_charges_each_value_once_and_repeats_are_free():
    led = PrivacyLedger(2, n_days=3, budget_daily=10.0, budget_total=2.0)
    memo = Memo(2, 8, base=5)

    def select(day, device, value):
        return memo.select(np.array(device), np.array(value), lambda new: led.grant(day, 1.0, new))

    sent, rep = select(0, [0, 0, 1], [3, 3, 4])      # device 0 reports 3 twice: charged once
    assert sent.tolist() == [True, True, True] and rep.tolist() == [1, 0]
    sent, rep = select(1, [0, 1], [3, 5])            # repeat of 3 is free; 5 is new for device 1
    assert sent.tolist() == [True, True] and rep.tolist() == [1, 0]
    assert led.spent.tolist() == [1.0, 2.0]
    sent, rep = select(2, [1, 1, 1], [6, 6, 4])      # budget exhausted: 6 refused (both copies), 4 free
    assert sent.tolist() == [False, False, True] and rep.tolist() == [0, 1]
    assert led.spent.tolist() == [1.0, 2.0] and led.refused == 1


def _memo_config(mechanism="grr", extra=(), **kw):
    params = (("epsilon", 1.0), ("domain_size", len(ITEMS)), *extra)
    ucs = (UseCase("emoji", "event", mechanism, params, 1, memoize=True),)
    return tiny_config(use_cases=ucs, n_days=6, **kw)


@pytest.mark.parametrize("mechanism,extra", [("grr", ()), ("oue", ()), ("dbitflip", (("d", 2),))])
def test_memoized_deployment_repeats_reports_and_charges_distinct_values(tmp_path, mechanism, extra):
    # dbitflip brings its own perturb_memoized (per-device key): plugged in as it is
    cfg = _memo_config(mechanism, extra)
    r = run(cfg, tmp_path)
    tap = pd.DataFrame({"device": np.concatenate([t["device"] for t in r.tap]),
                        "value": np.concatenate([t["value"] for t in r.tap]),
                        "report": np.concatenate([t["rows"] for t in r.tap]).tolist()})
    tap["report"] = tap["report"].map(tuple)
    # the same (device, value) always carries the same report
    assert (tap.groupby(["device", "value"])["report"].nunique() == 1).all()
    # ε: once per distinct (device, value); the rest is saved
    donated = int(r.truth["donated"].sum())
    distinct = _distinct_pairs(cfg)
    assert r.ledger_spent.sum() == pytest.approx(1.0 * distinct)
    assert r.ledger_saved.sum() == pytest.approx(1.0 * (donated - distinct))
    assert r.ledger_saved.sum() > 0


def _distinct_pairs(cfg) -> int:
    """Distinct (device, value) donations, replayed with the fleet's own draws (memo-free path)."""
    from ldpsim.simulator.device import sample_per_device
    from ldpsim.simulator.fleet import block_range, block_rng, draw_day, draw_traits
    pairs = set()
    for b in range(cfg.n_blocks):
        tr = draw_traits(cfg, b)
        lo = block_range(cfg, b)[0]
        for day in range(cfg.n_days):
            d = draw_day(cfg, tr, b, day)
            rng = block_rng(cfg.seed, "donate", b, day)
            avail = np.bincount(d.event_device, minlength=tr.device.size) * tr.opt_in
            ch = sample_per_device(d.event_device, np.minimum(avail, 1), rng)
            pairs.update(zip((lo + d.event_device[ch]).tolist(), d.event_item[ch].tolist()))
    return len(pairs)


def test_memoized_reports_do_not_depend_on_sharding(tmp_path):
    cfg = _memo_config()
    one, two = run(cfg, tmp_path / "a"), run(cfg, tmp_path / "b", n_shards=2)
    for key, agg in one.aggregates.items():
        assert np.array_equal(agg.data, two.aggregates[key].data), key


def test_memoize_only_for_event_use_cases():
    with pytest.raises(ValueError, match="memoize"):
        UseCase("typing_speed", "reading", "pm", (("epsilon", 1.0),), 1, (0.0, 120.0), memoize=True)
    with pytest.raises(TypeError, match="memoize"):
        UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", 3)), memoize="yes")
