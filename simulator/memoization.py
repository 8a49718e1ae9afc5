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

Sound for any mechanism, since the whole report is memoized. Vectorized keyed samplers exist for the
mechanisms with a transition matrix (rr, grr, urr, sdgrr), OUE, OLH, CMS and HCMS; a mechanism may
bring its own as ``perturb_memoized(values, keys[, rng])`` (RAPPOR's permanent response and
dBitFlip's memoized bits are of this kind); any other falls back to one Philox generator per report, keyed the
same way (correct, slower).
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms import CMS, HCMS, OLH, OUE
from ldpsim.mechanisms.memo import keyed_uniforms as _uniforms
from ldpsim.mechanisms.memo import keyed_words
from ldpsim.mechanisms.frequency.olh import OLHReports

#: uniforms per keyed-sampler chunk (bounds the temporary memory of OUE and CMS reports)
_CHUNK = 1 << 22


def device_keys(base: int, device: np.ndarray) -> np.ndarray:
    """The per-device key K_i = hash(base, device) (uint64; ``mechanisms/memo.py``'s keyed hash)."""
    return keyed_words(np.uint64(base), np.asarray(device, np.int64))


def report_keys(base: int, device: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Key of the memoized report of (device, value): hash(K_i, value) (uint64)."""
    return keyed_words(device_keys(base, device), np.asarray(value, np.int64))


def keyed_uniforms(keys: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """(len(keys), n) uniforms in [0, 1): number t of each key's stream is hash(key, t)."""
    return _uniforms(np.asarray(keys, np.uint64)[:, None], np.arange(offset, offset + n)[None, :])


def _keyed_ints(keys, high: int, t: int) -> np.ndarray:
    return np.minimum((keyed_uniforms(keys, 1, t)[:, 0] * high).astype(np.int64), high - 1)


def _by_transition(mech, x, keys):
    cum = np.cumsum(mech.transition_matrix(), axis=1)
    u = keyed_uniforms(keys, 1)[:, 0]
    out = np.empty(x.size, np.int64)
    step = max(1, _CHUNK // cum.shape[1])
    for s in range(0, x.size, step):
        out[s:s + step] = (cum[x[s:s + step]] <= u[s:s + step, None]).sum(axis=1)
    return np.minimum(out, cum.shape[1] - 1)


def _oue(mech: OUE, x, keys):
    d = mech.domain_size
    out = np.empty((x.size, mech.report_bytes), np.uint8)
    step = max(1, _CHUNK // d)
    for s in range(0, x.size, step):
        u = keyed_uniforms(keys[s:s + step], d)
        own = np.arange(d)[None, :] == x[s:s + step, None]
        out[s:s + step] = np.packbits(u < np.where(own, mech.p, mech.q), axis=1)
    return out


def _olh(mech: OLH, x, keys):
    seed = (_keyed_ints(keys, 1 << 32, 0)).astype(np.uint32)
    h = mech.hash_items(seed, x).astype(np.int64)
    keep = keyed_uniforms(keys, 1, 1)[:, 0] < mech.p
    other = (h + 1 + _keyed_ints(keys, mech.g - 1, 2)) % mech.g
    return OLHReports(seed, np.where(keep, h, other))


def _cms(mech: CMS, tokens, keys):
    from ldpsim.mechanisms.sketches.cms import CMSReports
    rows = _keyed_ints(keys, mech.k, 0)
    pos = mech.family.evaluate(rows, mech._value_keys(tokens))
    bits = np.empty((keys.size, -(-mech.m // 8)), np.uint8)
    step = max(1, _CHUNK // mech.m)
    for s in range(0, keys.size, step):
        bits[s:s + step] = np.packbits(keyed_uniforms(keys[s:s + step], mech.m, 1) < mech.flip, axis=1)
    bits[np.arange(keys.size), pos >> 3] ^= (0x80 >> (pos & 7)).astype(np.uint8)
    return CMSReports(bits, rows)


def _hcms(mech: HCMS, tokens, keys):
    from ldpsim.mechanisms.sketches.hcms import HCMSReports, hadamard_sign
    rows = _keyed_ints(keys, mech.k, 0)
    pos = mech.family.evaluate(rows, mech._value_keys(tokens))
    col = _keyed_ints(keys, mech.m, 1)
    plus = hadamard_sign(col, pos) > 0
    bit = (plus ^ (keyed_uniforms(keys, 1, 2)[:, 0] < mech.flip)).astype(np.uint8)
    return HCMSReports(bit, rows, col)


def _generic(mech, x, keys):
    """One Philox generator per report, keyed by the report key (any mechanism; a Python loop)."""
    parts = [mech.perturb(x[i:i + 1], np.random.Generator(np.random.Philox(key=int(k))))
             for i, k in enumerate(keys.tolist())]
    if not parts:
        return mech.perturb(x[:0], np.random.default_rng(0))
    if isinstance(parts[0], tuple):
        return type(parts[0])(*(np.concatenate(cols) for cols in zip(*parts)))
    return np.concatenate(parts)


def keyed_perturb(mech, values: np.ndarray, keys: np.ndarray, tokens=None, rng=None, dev_keys=None):
    """Reports of ``values`` (item ids; ``tokens`` = the items for token mechanisms), each a
    deterministic function of its uint64 key with the mechanism's output law. A mechanism with its
    own ``perturb_memoized(values, keys[, rng])`` is used as it is (RAPPOR memoizes the permanent
    response only and draws the instantaneous one from ``rng`` every day)."""
    x = np.asarray(values, np.int64)
    keys = np.asarray(keys, np.uint64)
    own = getattr(mech, "perturb_memoized", None)
    if own is not None:  # the mechanism's own memoization (RAPPOR's permanent response, dBitFlip)
        arg = tokens if getattr(mech, "takes_tokens", False) else x
        import inspect
        takes_rng = "rng" in inspect.signature(own).parameters
        k = keys if dev_keys is None else np.asarray(dev_keys, np.uint64)
        return own(arg, k, rng=rng) if takes_rng else own(arg, k)
    if isinstance(mech, CMS):
        return _cms(mech, tokens, keys)
    if isinstance(mech, HCMS):
        return _hcms(mech, tokens, keys)
    if isinstance(mech, OUE):
        return _oue(mech, x, keys)
    if isinstance(mech, OLH):
        return _olh(mech, x, keys)
    if callable(getattr(mech, "transition_matrix", None)) and not getattr(mech, "takes_tokens", False):
        try:
            return _by_transition(mech, x, keys)
        except NotImplementedError:
            pass
    return _generic(mech, tokens if getattr(mech, "takes_tokens", False) else x, keys)


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
