"""bounding_cost (evaluation/discovery/bounding_cost.py): reports and kept shares follow from the bound, and
with nothing left out the error is the oracle's exact sd alone."""

from __future__ import annotations

import numpy as np
import pytest

from ldpsim.evaluation.discovery.bounding_cost import bounding_cost
from ldpsim.mechanisms.registry import make
from ldpsim.runtime.errors import InputError


def test_reports_kept_share_and_error_follow_from_the_bound():
    device = np.repeat(np.arange(300), 3)          # every device typed words 0, 1, 2 once
    item = np.tile([0, 1, 2], 300)
    t = bounding_cost(device, item, 2.0, (1, 3), top=3, rng=4).set_index("l0")
    assert t.loc[1, "reports"] == 300 and t.loc[3, "reports"] == 900
    assert t.loc[1, "kept_share"] == pytest.approx(1 / 3) and t.loc[3, "kept_share"] == 1.0
    assert t.loc[3, "bias_rms"] == pytest.approx(0.0, abs=1e-15)
    sd = np.sqrt(make("olh", epsilon=2.0 / 3, domain_size=3).variance(np.full(3, 300), np.arange(3))) / 900
    assert t.loc[3, "rmse"] == pytest.approx(np.sqrt(np.mean(sd ** 2)))
    assert t.loc[1, "epsilon_report"] == 2.0 and t.loc[3, "epsilon_report"] == pytest.approx(2 / 3)


def test_bad_input_is_named():
    with pytest.raises(InputError, match="'device' and 'item'"):
        bounding_cost([0, 1], [0], 1.0)
    with pytest.raises(InputError, match="l0"):
        bounding_cost([0, 1], [0, 1], 1.0, l0s=(0,))
