"""Small fleets and scenarios shared by the deployment, simulator, sweep and command-line tests: a tiny
:class:`DeploymentConfig`, scenario texts for a deployment (``TINY``), one with discovered words
(``WORDS``) and a sweep (``SWEEP``), and a check that two runs aggregated the same reports."""

from __future__ import annotations

import numpy as np

from ldpsim.simulator.config import DeploymentConfig, UseCase

ITEMS = tuple(f"e{i}" for i in range(8))
WEIGHTS = (8, 6, 5, 4, 3, 2, 1, 1)


def tiny_config(**overrides) -> DeploymentConfig:
    """A small fleet with GRR emoji and PM typing speed; no loss unless overridden; no fsync (speed)."""
    use_cases = (UseCase("emoji", "event", "grr", (("epsilon", 2.0), ("domain_size", len(ITEMS))), 2),
                 UseCase("typing_speed", "reading", "pm", (("epsilon", 1.0),), 1, (0.0, 120.0)))
    base = dict(items=ITEMS, item_weights=WEIGHTS, use_cases=use_cases, n_devices=300, n_days=3,
                block_size=64, seed=11, opt_in=1.0, p_online=1.0, loss=0.0, ack_loss=0.0, fsync=False,
                adversary_devices=50)
    return DeploymentConfig(**{**base, **overrides})


def same_aggregates(a: dict, b: dict) -> None:
    """Equal aggregates: integer data exactly, float data (PM's report sums) up to summation order."""
    assert a.keys() == b.keys()
    for key, agg in a.items():
        assert agg.n == b[key].n, key
        if np.issubdtype(agg.data.dtype, np.integer):
            assert np.array_equal(agg.data, b[key].data), key
        else:
            np.testing.assert_allclose(agg.data, b[key].data, rtol=1e-12, err_msg=str(key))


#: a deployment scenario of 150 devices over 2 days (emoji GRR, typing speed SDPM)
TINY = """
[deployment]
name = "tiny"
seed = 3
devices = 150
days = 2
block_size = 64
adversary_devices = 40

[workload]
name = "harmonic"
domain_size = 12

[trend]
rank = 9
start_day = 1

[use_case.emoji]
mechanism = "grr"
epsilon = 4.0
daily_limit = 1

[use_case.typing_speed]
mechanism = "sdpm"
epsilon = 2.0
range = [0.0, 120.0]
low_range = [20.0, 60.0]
em_bins = 16

[use_case.session_length]
mechanism = "pm"
epsilon = 1.0
range = [0.0, 300.0]

[server]
fsync = false
"""

#: TINY with discovered words (PEM) and a planted slang word, 2000 devices over 3 days
WORDS = TINY.replace("[server]", """[use_case.words]
mechanism = "pem"
epsilon = 4.0
top_k = 10
pool = 64

[words]
top = 200
slang = "rizzé"
slang_start_day = 1
slang_share = 0.3

[server]""").replace("devices = 150", "devices = 2000").replace("days = 2", "days = 3")

#: a sweep scenario of 4 tiny cells
SWEEP = """
[scenario]
name = "tiny"
seed = 5
repeats = 3
path = "direct"
top = 5

[workload]
name = "harmonic"
n = 2_000
domain_size = 20

[[mechanism]]
name = "grr"

[grid]
epsilon = [1.0, 2.0]
"workload.name" = ["harmonic", "exponential"]

[metrics]
names = ["mse", "variance"]
"""


def write_scenario(tmp_path, text, name="s.toml"):
    """Write a scenario text as ``tmp_path/name``; returns the path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
