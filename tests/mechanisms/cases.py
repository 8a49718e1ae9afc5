"""Contract cases: variants of every registered frequency oracle's parameters (several sizes and ε, the
edge shapes the contract must hold at) with a small workload each; the typical parameters themselves are
the library's (``ldpsim.mechanisms.registry.PARAMETERS``).

Each case: the mechanism class, its parameters, the items of a small population and their true counts.
Add a line here when a mechanism is added to ``ldpsim.mechanisms.registry``; the contract suite checks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    cls: type
    params: dict
    counts: tuple
    items: tuple | None = None  # None: integer ids 0..len(counts)-1
    pure_ldp: bool = True  # every pair of inputs is ε-indistinguishable (max ratio exactly e^ε)
    extra: dict = field(default_factory=dict)

    def make(self, **overrides):
        return self.cls(**{**self.params, **overrides})

    @property
    def item_array(self):
        return np.arange(len(self.counts)) if self.items is None else np.asarray(self.items, dtype=object)

    @property
    def count_array(self):
        return np.asarray(self.counts, dtype=np.int64)

    def population(self, rng):
        """One value per user, shuffled."""
        vals = np.repeat(self.item_array, self.count_array)
        return vals[rng.permutation(vals.size)]


def _cases():
    import math

    from ldpsim.mechanisms import (BLH, CMS, FLH, GRR, HCMS, HR, OLH, OUE, RAPPOR, RR, SDGRR, SHE, SUE, THE, URR,
                                   DBitFlip)

    counts6 = (300, 200, 100, 50, 30, 20)
    return [
        Case("grr", GRR, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("grr-large-eps", GRR, {"epsilon": 4.0, "domain_size": 6}, counts6),
        Case("rr", RR, {"epsilon": 1.0}, (700, 300)),
        Case("urr", URR, {"epsilon": 1.0, "domain_size": 6, "sensitive": (1, 4)}, counts6, pure_ldp=False),
        Case("sdgrr", SDGRR, {"epsilon": 1.0, "domain_size": 6, "high": (0, 2, 5)}, counts6, pure_ldp=False),
        # one low value: c3/c2 = |X_L| + e^ε − 1 = e^ε, so this SDGRR is pure ε-LDP
        Case("sdgrr-one-low", SDGRR, {"epsilon": 2.0, "domain_size": 6, "high": (0, 1, 2, 3, 4)}, counts6),
        # OUE/OLH: huge output spaces, privacy boundary in tests/mechanisms/test_oue.py, test_olh.py
        Case("oue", OUE, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("oue-10-items", OUE, {"epsilon": 4.0, "domain_size": 10}, counts6 + (40, 0, 10, 5)),
        Case("olh", OLH, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("olh-g5", OLH, {"epsilon": 2.0, "domain_size": 8, "g": 5}, counts6 + (0, 60)),
        # sketches on string/int tokens; small k, m so hash collisions (γ) matter in bias and variance
        Case("cms", CMS, {"epsilon": 4.0, "k": 4, "m": 8}, counts6, items=("the", "of", "and", "to", "a", "in")),
        Case("cms-m10", CMS, {"epsilon": 1.0, "k": 3, "m": 10, "seed": 7}, counts6,
             items=("é", "ü", 42, "42x", b"raw", "emoji 😀")),
        Case("hcms", HCMS, {"epsilon": 2.0, "k": 4, "m": 8}, counts6, items=("the", "of", "and", "to", "a", "in")),
        # deployed designs and the peers' oracles (docs/math.md §7.1–§7.3); privacy boundaries from
        # report_distribution (test_report_distribution_exact_privacy_boundary)
        Case("hr", HR, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("hr-large-eps", HR, {"epsilon": 4.0, "domain_size": 10, "blocks": 4}, counts6 + (40, 0, 10, 5)),
        # the paper's default layout at ε = 3: 16 blocks requested, 14 blocks of 4 cells used
        Case("hr-eps3-default", HR, {"epsilon": 3.0, "domain_size": 40}, tuple(300 // (i + 1) for i in range(40))),
        Case("sue", SUE, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("the", THE, {"epsilon": 2.0, "domain_size": 6}, counts6, pure_ldp=False),
        Case("she", SHE, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("blh", BLH, {"epsilon": 1.0, "domain_size": 6}, counts6),
        Case("flh", FLH, {"epsilon": 2.0, "domain_size": 8, "pool_size": 4}, counts6 + (0, 60)),
        Case("dbitflip", DBitFlip, {"epsilon": 1.0, "domain_size": 6}, counts6, pure_ldp=False),
        Case("dbitflip-d3", DBitFlip, {"epsilon": 2.0, "domain_size": 6, "d": 3}, counts6),
        # output perturbation γ: every sent bit is the memoized bit flipped w.p. γ (docs/math.md §7.3)
        Case("dbitflip-gamma", DBitFlip, {"epsilon": 2.0, "domain_size": 6, "d": 2, "gamma": 0.15}, counts6),
        Case("rappor", RAPPOR, {"epsilon": 4 * math.log(3), "num_bits": 8, "num_hashes": 2, "cohorts": 4},
             counts6, items=("the", "of", "and", "to", "a", "in"), pure_ldp=False),
    ]


CASES = {c.name: c for c in _cases()}
