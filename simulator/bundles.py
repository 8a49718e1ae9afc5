"""The bundles of one shard's devices: bookkeeping whose memory does not grow with the number of days.

A *bundle* is one device's donations of one day (every use case), with a random upload id (nonce)
kept across retries. Bundles get increasing global ids; the table keeps one row per *live* bundle
(sorted by id), so a lookup is a binary search (:meth:`BundleTable.local`). At every midnight
:meth:`BundleTable.compact`

* marks the pending bundles whose retention has run out as expired (their device deletes them),
* drops every final bundle (acknowledged, expired, given up) that no upload window holds any more,
  adding it to per-(day, status) tallies (``records``), and
* keeps of each day's report rows only those of bundles that may still be sent (pending ones).

So a shard holds about one day of bundles plus the few that wait for a retry: O(1) per device in
the number of days (``tests/simulator/test_memory.py``).
"""

from __future__ import annotations

import numpy as np

from ldpsim.simulator.channel import Fates

PENDING, ACKED, EXPIRED, GAVE_UP = 0, 1, 2, 3
STATUS = ("pending", "acked", "expired", "gave_up")

_COLUMNS = {"id": np.int64, "device": np.int32, "day": np.int32, "nonce": np.int64, "expiry": np.float64,
            "status": np.int8, "attempts": np.int16, "busy": bool}


class _FatesById:
    """One column of the live bundles' fates, indexed by ``[global ids, attempt]`` (what the channel
    does); a bundle no longer in the table reads as lost (its late acknowledgment is moot)."""

    def __init__(self, table: "BundleTable", column: str):
        self.table, self.column = table, column

    def __getitem__(self, key):
        ids, attempt = key
        local, found = self.table.local(ids, strict=False)
        values = getattr(self.table.fates, self.column)[np.where(found, local, 0), attempt]
        return np.where(found, values, True) if values.dtype == bool else values


class BundleTable:
    """Live bundles (columns ``id device day nonce expiry status attempts busy``, ``fates``, per use
    case ``start``/``count`` into that day's report rows) and the tallies of the dropped ones."""

    def __init__(self, use_cases, max_attempts: int, n_days: int):
        self.use_cases = tuple(use_cases)
        self.col = {name: np.zeros(0, dtype) for name, dtype in _COLUMNS.items()}
        self.fates = Fates(np.zeros((0, max_attempts), np.float32), np.zeros((0, max_attempts), bool),
                           np.zeros((0, max_attempts), bool))
        self.start = {uc: np.zeros(0, np.int64) for uc in self.use_cases}  # first row in its day's chunk
        self.count = {uc: np.zeros(0, np.int32) for uc in self.use_cases}
        self.rows = {uc: {} for uc in self.use_cases}                     # day → rows (n × report_bytes)
        self.next_id = 0
        # dropped bundles: [day, status] → bundles, reports, attempts
        self.final = np.zeros((n_days, len(STATUS), 3), np.int64)
        self.by_id = Fates(*(_FatesById(self, c) for c in Fates._fields))

    def __len__(self) -> int:
        return self.col["id"].size

    def __getitem__(self, name: str) -> np.ndarray:
        return self.col[name]

    def local(self, ids, strict: bool = True):
        """Row of each global id; with ``strict=False`` also a mask of the ids still in the table."""
        ids = np.asarray(ids, dtype=np.int64)
        table = self.col["id"]
        pos = np.searchsorted(table, ids)
        found = pos < table.size
        found[found] = table[pos[found]] == ids[found]
        if strict:
            if not found.all():
                raise KeyError(f"bundles {ids[~found][:5].tolist()} are not in the table")
            return pos
        return pos, found

    # ---- growth ------------------------------------------------------------------------------------
    def append(self, day: int, device, nonce, fates: Fates, counts: dict, chunks: dict, expiry: float) -> None:
        """Add one day's bundles (``counts[uc]`` reports each) and their report rows ``chunks[uc]``."""
        n = len(device)
        new = {"id": np.arange(self.next_id, self.next_id + n), "device": device, "day": np.full(n, day),
               "nonce": nonce, "expiry": np.full(n, expiry), "status": np.zeros(n), "attempts": np.zeros(n),
               "busy": np.zeros(n, bool)}
        for name, dtype in _COLUMNS.items():
            self.col[name] = np.concatenate([self.col[name], np.asarray(new[name]).astype(dtype)])
        self.fates = Fates(*(np.concatenate([old, np.asarray(add).astype(old.dtype)])
                             for old, add in zip(self.fates, fates)))
        for uc in self.use_cases:
            count = np.asarray(counts[uc], np.int32)
            self.start[uc] = np.r_[self.start[uc], np.cumsum(count, dtype=np.int64) - count]
            self.count[uc] = np.r_[self.count[uc], count]
            self.rows[uc][day] = chunks[uc]
        self.next_id += n

    # ---- compaction ----------------------------------------------------------------------------------
    def compact(self, now_s: float) -> None:
        """Expire, drop final idle bundles into the tallies, shrink each day's rows to the pending ones."""
        c = self.col
        idle = ~c["busy"]
        expired = idle & (c["status"] == PENDING) & (c["expiry"] < now_s)
        c["status"][expired] = EXPIRED
        drop = idle & (c["status"] != PENDING)
        if drop.any():
            reports = sum(self.count[uc][drop].astype(np.int64) for uc in self.use_cases)
            np.add.at(self.final, (c["day"][drop], c["status"][drop], 0), 1)
            np.add.at(self.final, (c["day"][drop], c["status"][drop], 1), reports)
            np.add.at(self.final, (c["day"][drop], c["status"][drop], 2), c["attempts"][drop])
            keep = ~drop
            for name in self.col:
                self.col[name] = self.col[name][keep]
            self.fates = Fates(*(f[keep] for f in self.fates))
            for uc in self.use_cases:
                self.start[uc], self.count[uc] = self.start[uc][keep], self.count[uc][keep]
        self._shrink_rows()

    def _shrink_rows(self) -> None:
        """Keep, per day, only the report rows of the bundles still in the table that are pending."""
        c = self.col
        for uc in self.use_cases:
            for day in list(self.rows[uc]):
                sel = np.flatnonzero((c["day"] == day) & (c["status"] == PENDING))
                chunk = self.rows[uc][day]
                count = self.count[uc][sel].astype(np.int64)
                if sel.size == 0 or count.sum() == 0:
                    del self.rows[uc][day]
                    continue
                if count.sum() == chunk.shape[0]:
                    continue
                idx = _ranges(self.start[uc][sel], count)
                self.rows[uc][day] = chunk[idx]
                self.start[uc][sel] = np.cumsum(count) - count

    # ---- reading -------------------------------------------------------------------------------------
    def reports(self, local: np.ndarray, widths: dict) -> dict:
        """use case → (bundle position in ``local``, report rows) of the bundles at rows ``local``."""
        out = {}
        days = self.col["day"][local]
        for uc in self.use_cases:
            count = self.count[uc][local].astype(np.int64)
            pos = np.repeat(np.arange(local.size), count)
            idx = _ranges(self.start[uc][local], count)
            day = np.repeat(days, count)
            order = np.argsort(day, kind="stable")
            rows = [self.rows[uc][d][idx[day == d]] for d in np.unique(day)]
            out[uc] = (pos[order], np.concatenate(rows) if rows else np.zeros((0, widths[uc]), np.uint8))
        return out

    def records(self, shard: int) -> list[dict]:
        """Bundles per (donation day, final status): count, reports and attempts (dropped + live)."""
        tally = self.final.copy()
        c = self.col
        reports = sum((self.count[uc].astype(np.int64) for uc in self.use_cases), np.zeros(len(self), np.int64))
        np.add.at(tally, (c["day"], c["status"], 0), 1)
        np.add.at(tally, (c["day"], c["status"], 1), reports)
        np.add.at(tally, (c["day"], c["status"], 2), c["attempts"].astype(np.int64))
        made = np.flatnonzero(tally[:, :, 0].sum(axis=1))
        return [{"shard": shard, "day": int(day), "status": name, "bundles": int(tally[day, s, 0]),
                 "reports": int(tally[day, s, 1]), "attempts": int(tally[day, s, 2])}
                for day in made for s, name in enumerate(STATUS)]

    def nbytes(self) -> int:
        """Bytes held by the table (columns, fates, report rows)."""
        rows = sum(r.nbytes for by_day in self.rows.values() for r in by_day.values())
        return int(sum(a.nbytes for a in self.col.values()) + sum(f.nbytes for f in self.fates)
                   + sum(a.nbytes for a in self.start.values()) + sum(a.nbytes for a in self.count.values()) + rows)


def _ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start[i], start[i] + count[i])`` over i."""
    count = np.asarray(count, np.int64)
    return np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) + np.repeat(start, count)
