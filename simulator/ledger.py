"""Per-device privacy ledger: ε spent per donation, per day and in total (sequential composition).

Each donation of a use case costs its ``UseCase.ledger_cost`` (ε of one report; ε_∞ once per memo
class when memoized; the policy's ε under SMP and RS+FD — docs/math.md §8.1). By sequential
composition a device's total loss is the sum of its donations' costs: the ledger enforces the caps
with it; what a device spends over a run, on every scale, is the accountant's
(``evaluation/privacy/accountant.py``). The ledger grants a request only
as far as both the daily cap and the total cap allow, so no device ever exceeds its budget: refused
donations are counted, never privatized.

A memoized use case (``simulator/memoization.py``) sends the same report for the same value every day: a
repeat is post-processing of a report already paid for, so it costs nothing. The ledger books what
such repeats would have cost without memoization (``saved``), per device.

State is O(1) per device whatever the number of days: today's spending, the running total, the
largest daily spending and the memoization savings (one float each), plus per day, over all devices,
the ε spent and how many devices can no longer afford each use case (``close_day``).
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

    def __init__(self, n_devices: int, n_days: int, budget_daily: float, budget_total: float,
                 thresholds=()):
        self.budget_daily = float(budget_daily)
        self.budget_total = float(budget_total)
        self.spent = np.zeros(n_devices)            # total ε per device
        self.today = np.zeros(n_devices)            # ε per device on the current day
        self.daily_max = np.zeros(n_devices)        # largest ε a device spent on one day
        self.saved = np.zeros(n_devices)            # ε not charged thanks to memoization
        self.day_totals = np.zeros(n_days)          # ε spent on each day, summed over devices
        self.day = 0
        self.refused = 0
        # budget state at the end of each day, counted over the devices that have donated so far:
        # total budget left below each threshold (a use case's ε), daily budget left below the cheapest
        self.thresholds = tuple(float(t) for t in thresholds)
        self.exhausted = np.zeros((n_days, len(self.thresholds)), np.int64)
        self.full = np.zeros(n_days, np.int64)

    def close_day(self) -> None:
        """Book the budget state at the end of the current day (``exhausted``, ``full``)."""
        if not self.thresholds or self.day >= self.full.size:
            return
        donors = self.spent > 0
        left = self.budget_total - self.spent[donors]
        self.exhausted[self.day] = [int((left < t - _TOL).sum()) for t in self.thresholds]
        self.full[self.day] = int(((self.budget_daily - self.today[donors]) < min(self.thresholds) - _TOL).sum())

    def _advance(self, day: int) -> None:
        if day != self.day:
            if day < self.day:
                raise ValueError(f"The 'day' parameter of PrivacyLedger.grant must not go back in time "
                                 f"(current day {self.day}). Got {day!r} instead.")
            self.close_day()
            for skipped in range(self.day + 1, day):  # days without any grant: nothing spent
                self.today[:] = 0.0
                self.day = skipped
                self.close_day()
            self.today[:] = 0.0
            self.day = day

    def grant(self, day: int, epsilon: float, requested: np.ndarray, devices=slice(None)) -> np.ndarray:
        """Donations of cost ``epsilon`` granted on ``day`` (≤ ``requested``) to ``devices``; books them.

        Days are granted in non-decreasing order (today's spending restarts at zero on a new day).
        """
        self._advance(day)
        requested = np.asarray(requested, dtype=np.int64)
        room = np.minimum(self.budget_daily - self.today[devices], self.budget_total - self.spent[devices])
        fits = np.floor((room + _TOL) / epsilon)
        granted = np.clip(np.minimum(requested, fits), 0, None).astype(np.int64)
        self.refused += int((requested - granted).sum())
        self.today[devices] += granted * epsilon
        self.spent[devices] += granted * epsilon
        self.daily_max[devices] = np.maximum(self.daily_max[devices], self.today[devices])
        self.day_totals[day] += float(granted.sum()) * epsilon
        return granted

    def book_saved(self, epsilon: float, repeats: np.ndarray, devices=slice(None)) -> None:
        """Book ``repeats`` memoized re-sends per device: free, but worth ``epsilon`` each without memo."""
        self.saved[devices] += np.asarray(repeats, dtype=np.int64) * epsilon
