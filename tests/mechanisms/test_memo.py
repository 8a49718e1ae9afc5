"""Keyed uniforms (uniform, independent across words, deterministic) and the dispatch of keyed reports."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ldpsim.mechanisms import MECHANISMS, make, memo
from ldpsim.mechanisms.base import Mechanism
from ldpsim.mechanisms.memo import device_keys, keyed_perturb, keyed_uniforms
from ldpsim.runtime.errors import InputError
from tests.stats import assert_chisquare_gof, assert_z


def test_keyed_uniforms_are_uniform_and_pairwise_independent():
    keys = device_keys(100_000, np.random.default_rng(0))
    u, v = keyed_uniforms(keys, 1, 0), keyed_uniforms(keys, 1, 1)
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    cells = np.minimum((u * 8).astype(int), 7) * 8 + np.minimum((v * 8).astype(int), 7)
    assert_chisquare_gof(np.bincount(cells, minlength=64), np.full(64, 1 / 64), what="(u, v) pairs")
    w = keyed_uniforms(np.arange(100_000, dtype=np.uint64), 5)  # consecutive keys
    assert stats.kstest(w, "uniform").pvalue > 1e-4


def test_keyed_uniforms_are_deterministic_and_word_sensitive():
    k = np.array([7, 8], dtype=np.uint64)
    np.testing.assert_array_equal(keyed_uniforms(k, 3, 4), keyed_uniforms(k, 3, 4))
    assert not np.any(keyed_uniforms(k, 3, 4) == keyed_uniforms(k, 4, 3))


# ---- keyed_perturb asks the mechanism, never its class ---------------------------------------------------
MEMO = Path(memo.__file__)


def _class_names(node) -> list:
    """The dotted names in the class argument of an isinstance/issubclass call (a name, attribute or tuple)."""
    if isinstance(node, ast.Tuple):
        return [name for elt in node.elts for name in _class_names(elt)]
    return [ast.unparse(node)]


def _resolve(dotted: str):
    head, *rest = dotted.split(".")
    obj = vars(memo).get(head, getattr(builtins, head, None))
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def _mechanism_class_checks(source: str) -> list[str]:
    """isinstance/issubclass calls and ``type(...) is/==`` comparisons in ``source`` naming a mechanism
    class (or a name that does not resolve in memo.py: a check on a class imported under another name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            names = _class_names(node.args[1])
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) \
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "type":
            names = [n for c in node.comparators for n in _class_names(c)]
        for dotted in names:
            obj = _resolve(dotted)
            if obj is None or (isinstance(obj, type) and issubclass(obj, Mechanism)):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_memo_dispatches_by_the_mechanisms_methods_not_its_class():
    assert _mechanism_class_checks(MEMO.read_text()) == []
    # the check sees a class ladder (a planted one is caught)
    planted = "if isinstance(mech, (int, OUE)):\n    pass\n"
    assert _mechanism_class_checks(planted) == ["line 1: isinstance(mech, (int, OUE))"]


KEYED = [name for name, cls in MECHANISMS.items() if hasattr(cls, "perturb_keyed")]


@pytest.mark.parametrize("name", KEYED)
def test_keyed_sampler_is_a_memo_of_well_formed_reports(name):
    """keyed_perturb uses the mechanism's perturb_keyed: same key, same report; distinct keys draw
    reports a server accepts (the laws are checked in tests/simulator/test_memoization.py)."""
    mech = make(name, epsilon=1.0, shape="typical")
    n = 500
    ids = np.arange(n) % getattr(mech, "domain_size", 5)
    arg = np.array([f"t{i}" for i in ids], dtype=object) if mech.takes_tokens else ids
    keys = device_keys(n, np.random.default_rng(1))
    reports = keyed_perturb(mech, ids, keys, arg if mech.takes_tokens else None)
    again = mech.perturb_keyed(arg, keys)
    batch = mech.perturb(arg, np.random.default_rng(0))
    assert type(reports) is type(batch)
    for a, b, c in zip(*(r if isinstance(r, tuple) else (r,) for r in (reports, again, batch))):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == c.dtype and a.shape == c.shape
    assert mech.aggregate(mech.decode(mech.encode(reports))).n == n


def test_keyed_sampler_refuses_keys_that_do_not_match_the_values():
    with pytest.raises(InputError, match="'keys'"):
        make("oue", epsilon=1.0, domain_size=4).perturb_keyed([0, 1, 2], np.arange(2, dtype=np.uint64))


def test_fallback_is_the_mechanisms_own_client_per_keyed_report():
    """Without a keyed sampler (SUE) each report is perturb's from a Philox generator keyed by its key:
    deterministic, and its bits have the law of docs/math.md §7.1: P[own bit] = p, P[other bit] = q."""
    mech = make("sue", epsilon=1.0, domain_size=6)
    assert not hasattr(mech, "perturb_keyed") and not hasattr(mech, "perturb_memoized")
    n = 3000
    keys = device_keys(n, np.random.default_rng(2))
    rows = keyed_perturb(mech, np.full(n, 2), keys)
    np.testing.assert_array_equal(rows[:5], keyed_perturb(mech, np.full(5, 2), keys[:5]))
    philox = np.random.Generator(np.random.Philox(key=int(keys[7])))
    np.testing.assert_array_equal(rows[7], mech.perturb([2], philox)[0])
    ones = np.unpackbits(rows, axis=1, count=6).sum(axis=0)
    expected = np.where(np.arange(6) == 2, mech.p, mech.q)
    assert_z(ones, n * expected, np.sqrt(n * expected * (1 - expected)), what="SUE bit counts")
