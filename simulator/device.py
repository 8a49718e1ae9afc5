"""The devices of one shard: daily donation (limit, ledger, on-device privatization), local store, uploads.

State lives in numpy arrays (one row per device or per bundle), behaviour in two kinds of SimPy
process: ``days`` (at each midnight: every device donates from the day before, in one vectorized
call per device block, then the day's upload windows are scheduled) and ``window`` (the devices whose
upload window opens in the same slot send their pending bundles, wait for acknowledgments, retry
with exponential backoff until the window closes).

A *bundle* is one device's donations of one day (every use case), with a random upload id (nonce)
kept across retries. It expires ``retention_days`` after its creation; an expired bundle is deleted
unsent (counted lost).
"""

from __future__ import annotations

import numpy as np

from ldpsim.simulator.channel import Fates, Upload, UploadChannel
from ldpsim.simulator.config import DeploymentConfig
from ldpsim.simulator.fleet import block_range, block_rng, draw_day, draw_online, draw_traits
from ldpsim.simulator.ledger import PrivacyLedger

PENDING, ACKED, EXPIRED, GAVE_UP = 0, 1, 2, 3
STATUS = ("pending", "acked", "expired", "gave_up")
DAY_S = 86400.0


def sample_per_device(device: np.ndarray, quota: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of a uniform sample without replacement of ``quota[i]`` of the records of each device i.

    ``device`` holds the (local) device of each record. Returns the chosen indices grouped by device
    in increasing device order.
    """
    order = np.argsort(device + rng.random(device.size))  # random order within each device
    dev = device[order]
    first = np.searchsorted(dev, dev, side="left")
    rank = np.arange(dev.size) - first
    return order[rank < quota[dev]]


def _records(uc, d) -> tuple[np.ndarray, np.ndarray]:
    """(device, value) of each of the day's records a use case can donate."""
    if uc.kind == "event":
        return d.event_device, d.event_item
    if uc.kind == "word":
        return d.word_device, d.word_item
    return d.reading_device, d.readings[uc.name]


class Devices:
    """Devices of the blocks ``blocks`` (a shard) with their ledger, local store and processes."""

    def __init__(self, env, cfg: DeploymentConfig, blocks, channel: UploadChannel, mechanisms: dict):
        self.env, self.cfg, self.channel, self.mechanisms = env, cfg, channel, mechanisms
        self.blocks = list(blocks)
        self.traits = [draw_traits(cfg, b) for b in self.blocks]
        sizes = [t.device.size for t in self.traits]
        self.offset = np.r_[0, np.cumsum(sizes)]
        self.n = int(self.offset[-1])
        self.first_device = block_range(cfg, self.blocks[0])[0] if self.blocks else 0
        self.window_start_h = np.concatenate([t.window_start_h for t in self.traits]) if sizes else np.zeros(0)
        self.ledger = PrivacyLedger(self.n, cfg.n_days, cfg.budget_daily, cfg.budget_total)
        self.server = None  # set by the deployment: receives uploads
        n_items = len(cfg.items)
        self.truth = {"events": np.zeros((cfg.n_days, n_items), np.int64),
                      "donated": np.zeros((cfg.n_days, n_items), np.int64),
                      "devices": np.zeros((cfg.n_days, n_items), np.int64),
                      "sessions": np.zeros(cfg.n_days, np.int64), "session_hours": np.zeros(24, np.int64)}
        if cfg.words:  # typed and donated words per day (the slang word is the last column)
            self.truth["word_events"] = np.zeros((cfg.n_days, len(cfg.words)), np.int64)
            self.truth["word_donated"] = np.zeros((cfg.n_days, len(cfg.words)), np.int64)
        for uc in cfg.readings():  # sums and counts of every session's and of the donated readings
            for level in ("all", "donated"):
                self.truth[f"{uc.name}:{level}_sum"] = np.zeros(cfg.n_days)
                self.truth[f"{uc.name}:{level}_n"] = np.zeros(cfg.n_days, np.int64)
        self.tap: list[dict] = []  # the linked view of the first devices (for the adversary)
        # bundles (appended per day): local device, day, nonce, expiry, fates, status, attempts, busy
        self.b_device = np.zeros(0, np.int64)
        self.b_day = np.zeros(0, np.int64)
        self.b_nonce = np.zeros(0, np.int64)
        self.b_expiry = np.zeros(0)
        self.b_status = np.zeros(0, np.int8)
        self.b_attempts = np.zeros(0, np.int64)
        self.b_busy = np.zeros(0, bool)
        self.b_fates = Fates(np.zeros((0, cfg.max_attempts)), np.zeros((0, cfg.max_attempts), bool),
                             np.zeros((0, cfg.max_attempts), bool))
        self.b_start = {uc: np.zeros(0, np.int64) for uc in mechanisms}   # first row in its day's chunk
        self.b_count = {uc: np.zeros(0, np.int64) for uc in mechanisms}
        self.rows = {uc: {} for uc in mechanisms}                          # day → rows (n × report_bytes)

    # ---- donation ------------------------------------------------------------------------------------
    def donate(self, day: int) -> None:
        """Every device privatizes a limited, budgeted sample of ``day``'s records and stores a bundle."""
        new = {"device": [], "nonce": [], "fates": [], "count": {uc: [] for uc in self.mechanisms}}
        chunks = {uc: [] for uc in self.mechanisms}
        for j, (block, traits) in enumerate(zip(self.blocks, self.traits)):
            lo, hi = int(self.offset[j]), int(self.offset[j + 1])
            d = draw_day(self.cfg, traits, block, day)
            self._book_truth(day, d)
            rng = block_rng(self.cfg.seed, "donate", block, day)
            granted_any = np.zeros(hi - lo, np.int64)
            counts = {}
            for uc in self.cfg.use_cases:
                dev, val = _records(uc, d)
                available = np.bincount(dev, minlength=hi - lo) * traits.opt_in
                granted = self.ledger.grant(day, uc.epsilon, np.minimum(available, uc.daily_limit), slice(lo, hi))
                chosen = sample_per_device(dev, granted, rng)
                rows = self._privatize(uc, val[chosen], rng)
                chunks[uc.name].append(rows)
                counts[uc.name] = granted
                granted_any += granted
                self._book_donated(uc, day, val[chosen])
                self._tap(uc.name, day, traits.device[dev[chosen]], val[chosen], rows)
            has = np.flatnonzero(granted_any > 0)
            new["device"].append(has + lo)
            new["nonce"].append(rng.integers(0, 2**63 - 1, size=has.size))
            new["fates"].append(self.channel.fates(has.size, rng))
            for uc in self.mechanisms:
                new["count"][uc].append(counts[uc][has])
        self._append_bundles(day, new, chunks)

    def _privatize(self, uc, values: np.ndarray, rng) -> np.ndarray:
        mech = self.mechanisms[uc.name]
        if uc.kind == "event":
            x = np.asarray(self.cfg.items, dtype=object)[values] if mech.takes_tokens else values
        elif uc.kind == "word":
            x = np.asarray(self.cfg.words, dtype=object)[values]
        else:
            lo, hi = uc.value_range
            x = np.clip((values - lo) / (hi - lo) * 2.0 - 1.0, -1.0, 1.0)
        reports = mech.perturb(x, rng)
        return np.frombuffer(mech.encode(reports), dtype=np.uint8).reshape(len(x), mech.report_bytes)

    def _append_bundles(self, day: int, new: dict, chunks: dict) -> None:
        dev = np.concatenate(new["device"])
        n = dev.size
        self.b_device = np.r_[self.b_device, dev]
        self.b_day = np.r_[self.b_day, np.full(n, day)]
        self.b_nonce = np.r_[self.b_nonce, np.concatenate(new["nonce"])]
        self.b_expiry = np.r_[self.b_expiry, np.full(n, self.env.now + self.cfg.retention_days * DAY_S)]
        self.b_status = np.r_[self.b_status, np.zeros(n, np.int8)]
        self.b_attempts = np.r_[self.b_attempts, np.zeros(n, np.int64)]
        self.b_busy = np.r_[self.b_busy, np.zeros(n, bool)]
        self.b_fates = Fates.concat([self.b_fates, *new["fates"]])
        for uc in self.mechanisms:
            count = np.concatenate(new["count"][uc])
            self.b_start[uc] = np.r_[self.b_start[uc], np.cumsum(count) - count]
            self.b_count[uc] = np.r_[self.b_count[uc], count]
            self.rows[uc][day] = np.concatenate(chunks[uc])

    # ---- truth and the observer tap -------------------------------------------------------------------
    def _book_truth(self, day: int, d) -> None:
        t, n_items = self.truth, len(self.cfg.items)
        t["events"][day] += np.bincount(d.event_item, minlength=n_items)
        pairs = np.unique(d.event_device.astype(np.int64) * n_items + d.event_item)
        t["devices"][day] += np.bincount(pairs % n_items, minlength=n_items)
        if d.word_item is not None:
            t["word_events"][day] += np.bincount(d.word_item, minlength=len(self.cfg.words))
        t["sessions"][day] += d.reading_device.size
        for uc in self.cfg.readings():
            t[f"{uc.name}:all_sum"][day] += d.readings[uc.name].sum()
            t[f"{uc.name}:all_n"][day] += d.reading_device.size
        t["session_hours"] += d.session_hours

    def _book_donated(self, uc, day: int, values: np.ndarray) -> None:
        if uc.kind == "event":
            self.truth["donated"][day] += np.bincount(values, minlength=len(self.cfg.items))
        elif uc.kind == "word":
            self.truth["word_donated"][day] += np.bincount(values, minlength=len(self.cfg.words))
        else:  # the values as privatized: clipped to the use case's range
            self.truth[f"{uc.name}:donated_sum"][day] += np.clip(values, *uc.value_range).sum()
            self.truth[f"{uc.name}:donated_n"][day] += values.size

    def _tap(self, uc: str, day: int, device: np.ndarray, values: np.ndarray, rows: np.ndarray) -> None:
        sel = device < self.cfg.adversary_devices
        if sel.any():
            self.tap.append({"use_case": uc, "day": day, "device": device[sel], "value": values[sel],
                             "rows": rows[sel]})

    # ---- uploads -------------------------------------------------------------------------------------
    def days(self):
        """Process: at each midnight, donate yesterday's records, then schedule today's upload windows."""
        for t_day in range(self.cfg.n_days + self.cfg.drain_days):
            yield self.env.timeout(t_day * DAY_S - self.env.now)
            if 1 <= t_day <= self.cfg.n_days:
                self.donate(t_day - 1)
            self._release(t_day)
            self._schedule(t_day)

    def _release(self, t_day: int) -> None:
        """Free the stored report rows of collection days whose bundles have all expired (day d's
        bundles are made at midnight d + 1 and kept ``retention_days``): memory stays bounded."""
        for by_day in self.rows.values():
            for d in [d for d in by_day if d < t_day - 1 - self.cfg.retention_days]:
                del by_day[d]

    def _schedule(self, t_day: int) -> None:
        online = np.concatenate([draw_online(self.cfg, b, t_day) for b in self.blocks])
        live = np.flatnonzero((self.b_status == PENDING) & ~self.b_busy)
        live = live[online[self.b_device[live]]]
        start = t_day * DAY_S + self.window_start_h[self.b_device[live]] * 3600.0
        slot = np.floor(start / self.cfg.slot_s).astype(np.int64)
        order = np.argsort(slot, kind="stable")
        live, slot = live[order], slot[order]
        cuts = np.flatnonzero(np.diff(slot)) + 1
        for group, s in zip(np.split(live, cuts), slot[np.r_[0, cuts]] if live.size else []):
            self.b_busy[group] = True
            t0 = s * self.cfg.slot_s
            self.env.process(self.window(t0, group, t0 + self.cfg.window_length_h * 3600.0))

    def window(self, t0: float, bundles: np.ndarray, t_end: float):
        """Process: send ``bundles`` at ``t0``; retry the unacknowledged ones with backoff until ``t_end``."""
        cfg = self.cfg
        yield self.env.timeout(t0 - self.env.now)
        for k in range(cfg.max_attempts + 1):
            b = bundles[self.b_status[bundles] == PENDING]
            expired = b[self.b_expiry[b] < self.env.now]
            self.b_status[expired] = EXPIRED
            b = b[self.b_expiry[b] >= self.env.now]
            spent = b[self.b_attempts[b] >= cfg.max_attempts]
            self.b_status[spent] = GAVE_UP
            b = b[self.b_attempts[b] < cfg.max_attempts]
            if b.size == 0:
                break
            upload = self._upload(b)
            self.b_attempts[b] += 1
            self.env.process(self.channel.send(upload, self.b_fates, self.server.receive))
            yield self.env.timeout(cfg.ack_timeout_s)
            wait = cfg.backoff_s * 2.0 ** k
            if self.env.now + wait > t_end:
                break
            yield self.env.timeout(wait)
        self.b_busy[bundles] = False

    def _upload(self, b: np.ndarray) -> Upload:
        reports = {}
        for uc in self.mechanisms:
            count = self.b_count[uc][b]
            pos = np.repeat(np.arange(b.size), count)
            idx = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) \
                + np.repeat(self.b_start[uc][b], count)
            day = np.repeat(self.b_day[b], count)
            rows = [self.rows[uc][d][idx[day == d]] for d in np.unique(day)]
            width = self.mechanisms[uc].report_bytes
            order = np.argsort(day, kind="stable")
            reports[uc] = (pos[order], np.concatenate(rows) if rows else np.zeros((0, width), np.uint8))
        return Upload(b, self.b_attempts[b].copy(), self.b_device[b] + self.first_device, self.b_nonce[b],
                      self.b_day[b], self.env.now, reports)

    def acknowledge(self, bundle: np.ndarray, attempt: np.ndarray) -> None:
        """Network callback of the server's acknowledgment (subject to ack loss)."""
        got = self.channel.acknowledge(bundle, attempt, self.b_fates)
        self.b_status[got] = ACKED
