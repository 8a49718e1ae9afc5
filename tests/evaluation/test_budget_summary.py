"""The run summary's privacy budget says what an infinite budget means, never "ε inf" or "exhausted for below
10 %" of a budget that cannot be exhausted."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from ldpsim.evaluation.report.run_summary import budget, per_day, render_text


def _tables():
    b = pd.DataFrame({"day": [0, 1, 2], "reports_emoji": [176, 174, 170], "exhausted_emoji": [0.0, 0.0, 0.0],
                      "daily_full": [0.0, 0.0, 0.0]})
    b.attrs["donating_devices"] = 195
    return {"budget": b, "summary": {}}


def _cfg(total, daily):
    uc = SimpleNamespace(name="emoji", interactive=False, ledger_cost=4.0, kind="event")
    return SimpleNamespace(use_cases=[uc], budget_total=total, budget_daily=daily,
                           use_case=lambda kind: uc if kind == "event" else None)


def _text(blocks) -> str:
    return "\n".join(line for b in blocks for line in render_text(b))


def test_an_infinite_budget_is_said_to_be_no_cap():
    text = _text(budget(_tables(), _cfg(math.inf, math.inf)))
    assert "inf" not in text.replace("infinite", "")
    assert "no cap on ε per device over the run" in text and "no total budget to exhaust" in text
    assert "exhausted" not in text and "no cap on the ε a device spends in a day" in text
    assert "budget gone" not in _text(per_day(_tables(), _cfg(math.inf, math.inf)))


@pytest.mark.parametrize("total, daily", [(16.0, 8.0), (16.0, math.inf)])
def test_a_finite_budget_is_stated_with_its_exhaustion(total, daily):
    text = _text(budget(_tables(), _cfg(total, daily)))
    assert f"ε {total:g} per device over the run" in text and "total budget exhausted for below 10%" in text
    assert ("8 per device per day" in text) == math.isfinite(daily)
    assert "budget gone (emoji)" in _text(per_day(_tables(), _cfg(total, daily)))
