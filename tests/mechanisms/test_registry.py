"""The registry's one table of typical parameters and its one builder, ``make``."""

from __future__ import annotations

import pytest

from ldpsim.mechanisms import CMS, GRR, INTERACTIVE, MECHANISMS
from ldpsim.mechanisms.registry import PARAMETERS, make, takes, typical
from ldpsim.runtime.errors import InputError


def test_every_registered_name_has_one_row_that_builds():
    assert list(PARAMETERS) == [*PARAMETERS] and set(PARAMETERS) == set(MECHANISMS) | set(INTERACTIVE)
    for name, row in PARAMETERS.items():
        eps = {"epsilon": 1.0} if takes(name, "epsilon") else {}
        mech = make(name, shape="typical", **eps)
        for key, value in row.typical.items():
            assert getattr(mech, key) == value, (name, key)
        if row.deployed is not None:
            mech = make(name, shape="deployed", domain_size=100, **eps)  # a deployment brings its items
            assert all(getattr(mech, k) == v for k, v in row.deployed.items())
        if row.pair is not None:             # the shape over the two values {0, 1} of an audit pair
            mech = make(name, shape="pair", **eps)
            assert mech.domain_size == 2 and all(getattr(mech, k) == v for k, v in row.pair.items()), name


def test_the_deployed_shapes_are_the_published_ones():
    """docs/math.md §1.5, §7.1–§7.3: Apple's k = m = 1024, RAPPOR's 128 bits × 2 hashes × 8 cohorts,
    dBitFlip's d = 4, FLH's 1024 hashes."""
    assert {n: r.deployed for n, r in PARAMETERS.items() if r.deployed is not None} == {
        "cms": {"k": 1024, "m": 1024}, "rappor": {"num_bits": 128, "num_hashes": 2, "cohorts": 8},
        "flh": {"pool_size": 1024}, "dbitflip": {"d": 4}}


def test_overrides_win_and_domain_size_goes_only_where_taken():
    assert make("grr", epsilon=2.0, shape="typical", domain_size=7) == GRR(2.0, 7)
    assert make("cms", epsilon=2.0, shape="deployed", domain_size=7, m=64) == CMS(2.0, k=1024, m=64)
    assert make("grr", epsilon=1.0, domain_size=4) == GRR(1.0, 4)  # no shape: nothing filled in


def test_typical_is_a_copy():
    typical("cms")["k"] = 3
    assert PARAMETERS["cms"].typical["k"] == 64


def test_bad_shape_and_missing_deployed_row_are_named():
    with pytest.raises(InputError, match=r"'shape' parameter of make must be one of typical, deployed, pair\. Got 'big'"):
        make("grr", epsilon=1.0, shape="big")
    with pytest.raises(InputError, match="grr has no deployed shape; the deployed designs are cms, rappor, flh"):
        make("grr", epsilon=1.0, shape="deployed")
    with pytest.raises(InputError, match="grr has no pair shape; the mechanisms with one are urr, sdgrr, personalized-sdgrr"):
        make("grr", epsilon=1.0, shape="pair")
    with pytest.raises(InputError, match="GRR needs the parameter.s. domain_size"):
        make("grr", epsilon=1.0)
    with pytest.raises(InputError, match="did you mean 'grr'"):
        takes("grrr", "epsilon")
