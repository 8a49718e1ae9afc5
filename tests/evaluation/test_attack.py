"""The adversary dispatcher reaches the right attack for every kind of mechanism."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.adversary.attack import attack
from ldpsim.mechanisms import CMS, GRR, OUE, PM, SDPM
from ldpsim.mechanisms.frequency.sdgrr import SDGRR


@pytest.mark.parametrize("mech, extra", [(GRR(1.0, 5), "class"), (SDGRR(1.0, 5, high=[0]), "class"),
                                         (OUE(1.0, 5), None), (CMS(1.0, 4, 8), None),
                                         (PM(1.0), "tol"), (SDPM(1.0), "class")],
                         ids=["grr", "sdgrr", "oue", "cms", "pm", "sdpm"])
def test_dispatch(mech, extra):
    rng = np.random.default_rng(0)
    if isinstance(mech, (PM, SDPM)):
        values = rng.uniform(-1, 1, 300)
        reports, items = mech.perturb(values, rng), None
    else:
        values = rng.integers(0, 5, 300)
        items = np.array(list("abcde"), dtype=object) if mech.takes_tokens else None
        reports = mech.perturb(values if items is None else items[values], rng)
    out = attack(mech, values, reports, items=items, rng=1)
    assert 0 <= out["overall"] <= 1 and out["overall_se"] > 0
    if extra:
        assert extra in out


def test_errors():
    with pytest.raises(ValueError, match="needs the candidate 'items'"):
        attack(CMS(1.0, 4, 8), np.zeros(1, dtype=np.int64), CMS(1.0, 4, 8).perturb(["a"], rng=0))
    with pytest.raises(TypeError, match="No Bayesian adversary for object"):
        attack(object(), [0], [0])
