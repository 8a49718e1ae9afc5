"""The devices of one shard: daily donation (limit, ledger, on-device privatization), local store, uploads.

State lives in numpy arrays (one row per device or per bundle), behaviour in two kinds of SimPy
process: ``days`` (at each midnight: every device donates from the day before, in one vectorized
call per device block, then the day's upload windows are scheduled) and ``window`` (the devices whose
upload window opens in the same slot send their pending bundles, wait for acknowledgments, retry
with exponential backoff until the window closes).

A *bundle* is one device's donations of one day (every use case), with a random upload id (nonce)
kept across retries. It expires ``retention_days`` after its creation; an expired bundle is deleted
unsent (counted lost). Bundles live in a :class:`~ldpsim.simulator.bundles.BundleTable` that drops
the final ones every midnight, so memory does not grow with the number of days.
"""

from __future__ import annotations

import numpy as np

from ldpsim.simulator.attributes import fake_values, participants
from ldpsim.simulator.bundles import ACKED, EXPIRED, GAVE_UP, PENDING, STATUS, BundleTable  # noqa: F401
from ldpsim.simulator.channel import Fates, Upload, UploadChannel
from ldpsim.simulator.config import DeploymentConfig
from ldpsim.simulator.fleet import block_range, block_rng, draw_day, draw_online, draw_traits, memo_base
from ldpsim.simulator.ledger import PrivacyLedger
from ldpsim.mechanisms.bounding import sample_records as sample_per_device  # the daily limit: the "events" sampler
from ldpsim.mechanisms.memo import keyed_perturb
from ldpsim.simulator.memoization import Memo, device_keys, report_keys
DAY_S = 86400.0


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
        self.ledger = PrivacyLedger(self.n, cfg.n_days, cfg.budget_daily, cfg.budget_total,
                                    thresholds=[uc.ledger_cost for uc in cfg.use_cases])
        self.server = None  # set by the deployment: receives uploads
        n_items = len(cfg.items)
        self.truth = {"events": np.zeros((cfg.n_days, n_items), np.int64),
                      "donated": np.zeros((cfg.n_days, n_items), np.int64),
                      "devices": np.zeros((cfg.n_days, n_items), np.int64),
                      "sessions": np.zeros(cfg.n_days, np.int64), "session_hours": np.zeros(24, np.int64)}
        if cfg.policy == "rsfd":  # fake inputs per item (RS+FD)
            self.truth["fake"] = np.zeros((cfg.n_days, n_items), np.int64)
        if cfg.words:  # typed and donated words per day (the slang word is the last column)
            self.truth["word_events"] = np.zeros((cfg.n_days, len(cfg.words)), np.int64)
            self.truth["word_donated"] = np.zeros((cfg.n_days, len(cfg.words)), np.int64)
        for uc in cfg.readings():  # sums and counts of every session's and of the donated readings
            for level in ("all", "donated"):
                self.truth[f"{uc.name}:{level}_sum"] = np.zeros(cfg.n_days)
                self.truth[f"{uc.name}:{level}_n"] = np.zeros(cfg.n_days, np.int64)
            if uc.em_bins is not None:  # the donated readings' histogram on EM's bins (the distribution's truth)
                self.truth[f"{uc.name}:donated_hist"] = np.zeros((cfg.n_days, uc.em_bins), np.int64)
        self.tap: list[dict] = []  # the linked view of the first devices (for the adversary)
        self.bundles = BundleTable(mechanisms, cfg.max_attempts, cfg.n_days)
        #: per collected use case: (day, global device, item, window start hour) of every exact donation
        self.donations = {uc.name: [] for uc in cfg.use_cases if uc.collected}
        self.memos = {uc.name: Memo(self.n, self._memo_classes(uc), memo_base(cfg.seed, i))
                      for i, uc in enumerate(cfg.use_cases) if uc.memoize}

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
            plan = self._policy_plan(d, traits, block, day, lo, hi)
            for u, uc in enumerate(self.cfg.use_cases):
                dev, val = _records(uc, d)
                available = np.bincount(dev, minlength=hi - lo) * traits.opt_in
                if uc.interactive:
                    self._answer_rounds(uc, day, block, dev, val, available, lo, hi, rng)
                    continue
                if plan is not None:  # rows of real and (RS+FD) fake inputs, in device order
                    chosen, granted, rows, row_dev, row_val = self._policy_donate(uc, u, plan, dev, val, rng, day)
                elif uc.name in self.memos:
                    chosen, granted = self._memo_select(uc, day, dev, val, available, lo, hi, rng, traits.device)
                    rows = self._privatize(uc, val[chosen], rng, traits.device[dev[chosen]])
                else:
                    granted = self.ledger.grant(day, uc.ledger_cost, np.minimum(available, uc.daily_limit),
                                                slice(lo, hi))
                    chosen = sample_per_device(dev, granted, rng)
                    if uc.collected:  # exact reports for the trust model's collectors, not the LDP path
                        self._book_donated(uc, day, val[chosen])
                        self._hand_over(uc, day, traits, dev[chosen], val[chosen])
                        continue
                    rows = self._privatize(uc, val[chosen], rng)
                if plan is None:
                    row_dev, row_val = dev[chosen], val[chosen]
                chunks[uc.name].append(rows)
                counts[uc.name] = granted
                granted_any += granted
                self._book_donated(uc, day, val[chosen])  # the real values only
                self._tap(uc.name, day, traits.device[row_dev], row_val, rows)
            has = np.flatnonzero(granted_any > 0)
            new["device"].append(has + lo)
            new["nonce"].append(rng.integers(0, 2**63 - 1, size=has.size))
            new["fates"].append(self.channel.fates(has.size, rng))
            for uc in self.mechanisms:
                new["count"][uc].append(counts[uc][has])
        self._append_bundles(day, new, chunks)

    def _hand_over(self, uc, day: int, traits, dev: np.ndarray, items: np.ndarray) -> None:
        """Keep a collected use case's exact donations (one a device-day) for its trust collectors."""
        self.donations[uc.name].append((np.full(dev.size, day, np.int32), traits.device[dev].astype(np.int64),
                                        items.astype(np.int32), traits.window_start_h[dev].astype(np.float32)))

    def donated(self) -> dict:
        """Use case → (day, device, item, window_start_h) arrays of the exact donations (collected use cases)."""
        return {name: tuple(np.concatenate(col) if parts else np.zeros(0) for col in zip(*parts)) if parts
                else tuple(np.zeros(0, t) for t in (np.int32, np.int64, np.int32, np.float32))
                for name, parts in self.donations.items()}

    def _answer_rounds(self, uc, day: int, block: int, dev, val, available, lo: int, hi: int, rng) -> None:
        """An interactive words protocol (docs/math.md §10.8): the opted-in devices with a word that are
        online the night after ``day`` (their upload window) answer that night's rounds about one of
        the day's words; the ledger charges each of them one day of rounds. Their words are the
        rounds' population (``truth["word_donated"]``); nothing is uploaded."""
        online = draw_online(self.cfg, block, day + 1)
        granted = self.ledger.grant(day, uc.ledger_cost, np.minimum(available * online, 1), slice(lo, hi))
        self._book_donated(uc, day, val[sample_per_device(dev, granted, rng)])

    def _policy_plan(self, d, traits, block: int, day: int, lo: int, hi: int):
        """Under ``smp``/``rsfd``: the device-days that take part (ledger-granted, ε once) and the use
        case each samples; None under ``spl``."""
        cfg = self.cfg
        if cfg.policy == "spl":
            return None
        n, ucs = hi - lo, cfg.use_cases
        has = [np.bincount(d.event_device if u.kind == "event" else d.reading_device, minlength=n) > 0 for u in ucs]
        ok = participants(n, has, traits.opt_in)
        granted = self.ledger.grant(day, ucs[0].ledger_cost, ok.astype(np.int64), slice(lo, hi)) > 0
        rng = block_rng(cfg.seed, "policy", block, day)
        return {"granted": granted, "sampled": rng.integers(0, len(ucs), size=n), "rng": rng}

    def _policy_donate(self, uc, u: int, plan: dict, dev, val, rng, day: int):
        """One use case's donations under ``smp``/``rsfd``: the real record of the devices that sampled
        it (one, uniformly among the day's records), and under ``rsfd`` a fake input for every other
        granted device. Returns (chosen records, reports per device, rows, device of each row, value
        of each row); rows are in device order."""
        n = plan["granted"].size
        real = plan["granted"] & (plan["sampled"] == u)
        chosen = sample_per_device(dev, real.astype(np.int64), rng)
        r_dev, r_val = dev[chosen], val[chosen]
        if self.cfg.policy == "rsfd":
            fake = np.flatnonzero(plan["granted"] & ~real)
            f_val = fake_values(uc, len(self.cfg.items), fake.size, plan["rng"])
            self._book_fake(uc, day, f_val)
            order = np.argsort(np.r_[r_dev, fake], kind="stable")
            r_dev, r_val = np.r_[r_dev, fake][order], np.r_[r_val, f_val][order]
        rows = self._privatize(uc, r_val, rng)
        return chosen, np.bincount(r_dev, minlength=n), rows, r_dev, r_val

    def _memo_classes(self, uc) -> int:
        """Memo classes of a memoized use case: the items (events), or 1BitMean's s + 1 rounded levels."""
        return len(self.cfg.items) if uc.kind == "event" else self.mechanisms[uc.name].granularity + 1

    def _memo_class(self, uc, values: np.ndarray, device: np.ndarray) -> np.ndarray:
        """Memo class of each record: the item, or the level of the reading after the device's α-point
        rounding (keyed by its device key; docs/math.md §7.3)."""
        if uc.kind == "event":
            return values
        mech = self.mechanisms[uc.name]
        return mech.rounded_levels(uc.to_input(values, mech), device_keys(self.memos[uc.name].base, device))

    def _memo_select(self, uc, day: int, dev, val, available, lo: int, hi: int, rng, global_ids):
        """Memoized use case: up to the daily limit of records; a memo class (value, or rounded level)
        new to the device costs ε (as far as the ledger grants), one already paid for is re-sent for free."""
        chosen = sample_per_device(dev, np.minimum(available, uc.daily_limit), rng)
        sent, repeats = self.memos[uc.name].select(
            lo + dev[chosen], self._memo_class(uc, val[chosen], global_ids[dev[chosen]]),
            lambda new: self.ledger.grant(day, uc.ledger_cost, new, slice(lo, hi)), lo, hi - lo)
        self.ledger.book_saved(uc.ledger_cost, repeats, slice(lo, hi))
        chosen = chosen[sent]
        return chosen, np.bincount(dev[chosen], minlength=hi - lo)

    def _privatize(self, uc, values: np.ndarray, rng, device=None) -> np.ndarray:
        """Encoded reports of ``values``; memoized (keyed by the global ``device`` ids) when given."""
        mech = self.mechanisms[uc.name]
        if uc.kind == "event":
            x = np.asarray(self.cfg.items, dtype=object)[values] if mech.takes_tokens else values
        elif uc.kind == "word":
            x = np.asarray(self.cfg.words, dtype=object)[values]
        else:
            x = uc.to_input(values, mech)
        if device is None:
            reports = mech.perturb(x, rng)
        elif uc.kind == "reading":  # 1BitMean: the memoized bit of the device's rounded level
            reports = mech.perturb_memoized(x, device_keys(self.memos[uc.name].base, device), rng)
        else:
            base = self.memos[uc.name].base
            reports = keyed_perturb(mech, values, report_keys(base, device, values), x if mech.takes_tokens else None,
                                    rng, device_keys(base, device))
        return np.frombuffer(mech.encode(reports), dtype=np.uint8).reshape(len(x), mech.report_bytes)

    def _append_bundles(self, day: int, new: dict, chunks: dict) -> None:
        self.bundles.append(day, np.concatenate(new["device"]), np.concatenate(new["nonce"]),
                            Fates.concat(new["fates"]), {uc: np.concatenate(c) for uc, c in new["count"].items()},
                            {uc: np.concatenate(c) for uc, c in chunks.items()},
                            self.env.now + self.cfg.retention_days * DAY_S)

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
            if uc.em_bins is not None:
                x = uc.to_input(values)
                a, b = uc.input_range()
                bins = np.minimum(((x - a) / (b - a) * uc.em_bins).astype(np.int64), uc.em_bins - 1)
                self.truth[f"{uc.name}:donated_hist"][day] += np.bincount(bins, minlength=uc.em_bins)

    def _book_fake(self, uc, day: int, values: np.ndarray) -> None:
        """RS+FD: the fake inputs sent (events: per item; the variance theory needs them)."""
        if uc.kind == "event":
            self.truth["fake"][day] += np.bincount(values, minlength=len(self.cfg.items))

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
        """Expire and drop final bundles, shrink the stored report rows: memory stays bounded."""
        self.bundles.compact(self.env.now)

    def _schedule(self, t_day: int) -> None:
        online = np.concatenate([draw_online(self.cfg, b, t_day) for b in self.blocks])
        t = self.bundles
        live = np.flatnonzero((t["status"] == PENDING) & ~t["busy"])
        live = live[online[t["device"][live]]]
        start = t_day * DAY_S + self.window_start_h[t["device"][live]] * 3600.0
        slot = np.floor(start / self.cfg.slot_s).astype(np.int64)
        order = np.argsort(slot, kind="stable")
        live, slot = live[order], slot[order]
        cuts = np.flatnonzero(np.diff(slot)) + 1
        for group, s in zip(np.split(live, cuts), slot[np.r_[0, cuts]] if live.size else []):
            t["busy"][group] = True
            t0 = s * self.cfg.slot_s
            self.env.process(self.window(t0, t["id"][group], t0 + self.cfg.window_length_h * 3600.0))

    def window(self, t0: float, bundles: np.ndarray, t_end: float):
        """Process: send ``bundles`` (global ids) at ``t0``; retry the unacknowledged ones with backoff
        until ``t_end``. Rows are looked up afresh after every wait (the table is compacted at midnight;
        bundles held here are busy, so they stay)."""
        cfg, t = self.cfg, self.bundles
        yield self.env.timeout(t0 - self.env.now)
        for k in range(cfg.max_attempts + 1):
            b = t.local(bundles)
            b = b[t["status"][b] == PENDING]
            expired = b[t["expiry"][b] < self.env.now]
            t["status"][expired] = EXPIRED
            b = b[t["expiry"][b] >= self.env.now]
            spent = b[t["attempts"][b] >= cfg.max_attempts]
            t["status"][spent] = GAVE_UP
            b = b[t["attempts"][b] < cfg.max_attempts]
            if b.size == 0:
                break
            upload = self._upload(b)
            t["attempts"][b] += 1
            self.env.process(self.channel.send(upload, t.by_id, self.server.receive))
            yield self.env.timeout(cfg.ack_timeout_s)
            wait = cfg.backoff_s * 2.0 ** k
            if self.env.now + wait > t_end:
                break
            yield self.env.timeout(wait)
        t["busy"][t.local(bundles)] = False

    def _upload(self, b: np.ndarray) -> Upload:
        t = self.bundles
        widths = {uc: m.report_bytes for uc, m in self.mechanisms.items()}
        return Upload(t["id"][b], t["attempts"][b].astype(np.int64), t["device"][b] + self.first_device,
                      t["nonce"][b], t["day"][b].astype(np.int64), self.env.now, t.reports(b, widths))

    def acknowledge(self, bundle: np.ndarray, attempt: np.ndarray) -> None:
        """Network callback of the server's acknowledgment (subject to ack loss); ``bundle``: global ids."""
        got = self.channel.acknowledge(bundle, attempt, self.bundles.by_id)
        local, found = self.bundles.local(got, strict=False)
        self.bundles["status"][local[found]] = ACKED
