"""Per-device privacy ledger: ε spent per donation, per day and in total (sequential composition).

Each donation of a use case costs that use case's ε (its mechanism's ε-LDP guarantee). By sequential
composition a device's total loss is the sum of its donations' ε. The ledger grants a request only
as far as both the daily cap and the total cap allow, so no device ever exceeds its budget: refused
donations are counted, never privatized.
"""

from __future__ import annotations

import numpy as np

#: slack for floating-point sums of ε (a donation that fits up to this is granted)
_TOL = 1e-9


class PrivacyLedger:
    """Ledger of ``n_devices`` devices over ``n_days`` days (arrays, no per-device objects).

    >>> led = PrivacyLedger(2, n_days=1, budget_daily=1.0, budget_total=1.5)
    >>> led.grant(0, 0.5, np.array([3, 1])).tolist()
    [2, 1]
    >>> led.spent.tolist()
    [1.0, 0.5]
    """

    def __init__(self, n_devices: int, n_days: int, budget_daily: float, budget_total: float):
        self.budget_daily = float(budget_daily)
        self.budget_total = float(budget_total)
        self.spent = np.zeros(n_devices)            # total ε per device
        self.daily = np.zeros((n_devices, n_days))  # ε per device per day
        self.refused = 0

    def grant(self, day: int, epsilon: float, requested: np.ndarray, devices=slice(None)) -> np.ndarray:
        """Donations of cost ``epsilon`` granted on ``day`` (≤ ``requested``) to ``devices``; books them."""
        requested = np.asarray(requested, dtype=np.int64)
        room = np.minimum(self.budget_daily - self.daily[devices, day], self.budget_total - self.spent[devices])
        fits = np.floor((room + _TOL) / epsilon)
        granted = np.clip(np.minimum(requested, fits), 0, None).astype(np.int64)
        self.refused += int((requested - granted).sum())
        self.daily[devices, day] += granted * epsilon
        self.spent[devices] += granted * epsilon
        return granted
