"""Memoization: a device reports the same randomized response for the same value every day.

A use case with ``memoize = true`` privatizes a value v of device i as R(K_i, v), a deterministic
function of a per-device key K_i (derived from the run's seed, the use case and the device id) and v.
The randomness of R is a counter-based stream: uniform number t of the report of (i, v) is the keyed
hash of ``mechanisms/memo.py`` of (key(i, v), t), so R(K_i, ·) has the mechanism's output law for
each v, and nothing about the memo has to be stored: a device keeps only
a bitmap of the values it has already paid for (⌈D/8⌉ bytes, D the domain size), O(1) in the number
of days. The privacy ledger charges ε the first time a value is reported; a repeat is
post-processing of a report already published (free), so a device that reports k distinct values
spends k·ε however many days it reports (docs/math.md §7.5, "Memoization in the ledger"; RAPPOR's
permanent response, Erlingsson et al. 2014; Ding et al. 2017's memoization). The price: the repeated report is a fingerprint that links a
device's days, and a change of the report reveals a change of the value
(``evaluation/adversary/linking.py`` measures both).

For a reading collected with 1BitMean the memoized "value" is the device's α-point-rounded level
(D = s + 1 levels; docs/math.md §7.3), and its report comes from ``OneBitMean.perturb_memoized``.

Sound for any mechanism, since the whole report is memoized. The keyed samplers of the reports are
mechanism math (:func:`ldpsim.mechanisms.memo.keyed_perturb`); this module keys them by device and value
and keeps the bitmap.
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms.memo import keyed_words


def device_keys(base: int, device: np.ndarray) -> np.ndarray:
    """The per-device key K_i = hash(base, device) (uint64; ``mechanisms/memo.py``'s keyed hash)."""
    return keyed_words(np.uint64(base), np.asarray(device, np.int64))


def report_keys(base: int, device: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Key of the memoized report of (device, value): hash(K_i, value) (uint64)."""
    return keyed_words(device_keys(base, device), np.asarray(value, np.int64))


class Memo:
    """The memo of one use case on the devices of a shard: a bitmap of the values each has paid for.

    ``base`` keys the use case's reports (see :func:`report_keys`); devices are local indices
    0..n−1 for the bitmap and global ids for the keys (so a device's reports do not depend on the
    sharding).
    """

    def __init__(self, n_devices: int, domain_size: int, base: int):
        self.paid = np.zeros((n_devices, -(-domain_size // 8)), np.uint8)
        self.base = int(base)

    def has(self, device: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Whether each (local device, value) has been paid for."""
        value = np.asarray(value, np.int64)
        return (self.paid[device, value >> 3] >> (7 - (value & 7)).astype(np.uint8)) & 1 == 1

    def mark(self, device: np.ndarray, value: np.ndarray) -> None:
        value = np.asarray(value, np.int64)
        np.bitwise_or.at(self.paid, (device, value >> 3), (0x80 >> (value & 7)).astype(np.uint8))

    def select(self, device: np.ndarray, value: np.ndarray, grant, lo: int = 0,
               n_dev: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Charge and select the donations of devices lo..lo+n_dev−1 (``device``: local indices,
        grouped in increasing order).

        First-time (device, value) pairs cost ε: ``grant(new_per_device)`` (n_dev counts) returns how
        many each device may pay for (the ledger); the first of those pairs per device are paid
        for. Returns (mask of the donations sent — paid now or before —, free repeats per device).
        """
        n_dev = self.paid.shape[0] - lo if n_dev is None else n_dev
        pair = device.astype(np.int64) * (self.paid.shape[1] * 8) + value
        _, first = np.unique(pair, return_index=True)
        new = np.zeros(device.size, bool)
        new[first] = True
        new &= ~self.has(device, value)
        new_idx = np.flatnonzero(new)
        granted = grant(np.bincount(device[new_idx] - lo, minlength=n_dev))
        d = device[new_idx]
        rank = np.arange(d.size) - np.searchsorted(d, d, side="left")
        pay = new_idx[rank < granted[d - lo]]
        self.mark(device[pay], value[pay])
        sent = self.has(device, value)
        repeat = sent.copy()
        repeat[pay] = False
        return sent, np.bincount(device[repeat] - lo, minlength=n_dev)
