"""The collection server: ingest, strip metadata, shuffle, store durably, acknowledge, aggregate.

Ingestion has ``capacity`` parallel workers and a service time per report (a ``simpy.Resource``;
queue lengths are recorded at every arrival). An ingested upload is stripped at once: the device
id and the send time are dropped; only the random upload id (for dedupe), the coarse collection day
and the reports are kept, next to the network route used for the acknowledgment (never stored).
Every ``batch_window_s`` the buffer is shuffled per (use case, day), written as one Parquet part per
partition (atomically), and only then acknowledged and added to the in-memory aggregates.
A crash loses the buffer (nothing of it was acknowledged, so devices retry) and the in-memory
state; recovery rebuilds the dedupe set and the aggregates from the store, so no acknowledged report
is lost and none is counted twice (upload ids are checked per use case).

Memory stays bounded however long the run: the dedupe sets (sorted arrays of upload ids, 8 bytes
an id, one per flush) are kept per collection day, and a day's set is dropped once ``dedupe_days`` have passed — by then every bundle of that day has expired on
its device (``retention_days``), so its upload id can never arrive again.
"""

from __future__ import annotations

import numpy as np
import simpy

from ldpsim.simulator.channel import Upload
from ldpsim.simulator.device import DAY_S
from ldpsim.simulator.report_store import ReportStore


class Server:
    """Ingestion + shuffler + durable store + aggregates (``aggregates[(use_case, day)]``).

    ``mechanisms[uc]`` decodes the wire form; ``aggregators[uc].aggregate(reports)`` makes the
    mergeable aggregate (the oracle itself, or EM's histogram for readings).
    """

    def __init__(self, env: simpy.Environment, store: ReportStore, mechanisms: dict, aggregators: dict,
                 capacity: int, service_s_per_report: float, batch_window_s: float,
                 rng: np.random.Generator, on_ack, dedupe_days: float):
        self.env, self.store, self.mechanisms, self.aggregators = env, store, mechanisms, aggregators
        self.dedupe_days = dedupe_days  # how long an upload id can still arrive after its collection day
        self.workers = simpy.Resource(env, capacity)
        self.service_s_per_report = service_s_per_report
        self.batch_window_s = batch_window_s
        self.rng = rng
        self.on_ack = on_ack            # callback(bundle, attempt) over the network
        self.up = True
        self.buffer: list[tuple] = []   # (use case, upload id per report, day per report, rows)
        self.routes: list[tuple] = []   # (bundle, attempt) of every upload in the buffer
        self.queue_records: list[dict] = []
        self.flush_records: list[dict] = []
        self.counters = {"refused_down": 0, "lost_in_crash": 0, "duplicates": 0, "stored": 0}
        self._recover()
        env.process(self._flusher())

    # ---- ingestion -------------------------------------------------------------------------------
    def receive(self, upload: Upload) -> None:
        """Called by the channel when an upload arrives."""
        self.env.process(self._ingest(upload))

    def _ingest(self, upload: Upload):
        n = sum(len(pos) for pos, _ in upload.reports.values())
        with self.workers.request() as req:
            self.queue_records.append({"t_s": self.env.now, "queue": len(self.workers.queue),
                                       "busy": self.workers.count})
            yield req
            yield self.env.timeout(self.service_s_per_report * n)
        if not self.up:
            self.counters["refused_down"] += int(upload.bundle.size)
            return
        # strip metadata: only (upload id, day, report) per report is kept; device ids and the send
        # time are dropped here. Uploads already stored or buffered (a retry after a lost ack) are
        # acknowledged again but not stored twice.
        for uc, (pos, rows) in upload.reports.items():
            known = self._known(uc, upload.nonce, upload.day)
            fresh = ~known[pos]
            self.counters["duplicates"] += int((~fresh).sum())
            if fresh.any():
                self.buffer.append((uc, upload.nonce[pos[fresh]], upload.day[pos[fresh]], rows[fresh]))
        self.routes.append((upload.bundle, upload.attempt))

    # ---- shuffle, store, acknowledge, aggregate ----------------------------------------------------
    def _flusher(self):
        while True:
            yield self.env.timeout(self.batch_window_s)
            if self.up:
                self.flush()

    def flush(self) -> None:
        """Write the buffered reports (shuffled per partition) durably, then acknowledge their uploads."""
        buf, routes = self.buffer, self.routes
        self.buffer, self.routes = [], []
        for uc in self.mechanisms:
            parts = [(k, *b[1:]) for k, b in enumerate(buf) if b[0] == uc]
            if not parts:
                continue
            entry = np.concatenate([np.full(len(p[1]), p[0]) for p in parts])
            nonce, day, rows = (np.concatenate(cols) for cols in zip(*(p[1:] for p in parts)))
            first = _first_upload(nonce, entry)  # one upload id may arrive twice within a window
            self.counters["duplicates"] += int((~first).sum())
            nonce, day, rows = nonce[first], day[first], rows[first]
            for d in np.unique(day):
                sel = np.flatnonzero(day == d)
                sel = sel[self.rng.permutation(sel.size)]  # shuffle within the batch window
                ids = np.unique(nonce[sel])
                self.store.append(uc, int(d), rows[sel], ids)
                self._seen[uc].setdefault(int(d), []).append(ids)
                self._add(uc, int(d), rows[sel])
                self.flush_records.append({"t_s": self.env.now, "use_case": uc, "day": int(d),
                                           "reports": int(sel.size)})
                self.counters["stored"] += int(sel.size)
        for bundle, attempt in routes:  # acknowledge only after every write of the window
            self.on_ack(bundle, attempt)
        for seen in self._seen.values():
            for d in [d for d in seen if d < self._oldest_day()]:
                del seen[d]

    def _known(self, uc: str, nonce: np.ndarray, day: np.ndarray) -> np.ndarray:
        """Whether each upload id (of its collection day) is stored already for ``uc`` (a second copy
        within the buffer is dropped at the flush)."""
        known = np.zeros(nonce.size, bool)
        for d in np.unique(day):
            chunks = self._seen[uc].get(int(d), [])
            if len(chunks) > 8:  # merge the flushes' sorted chunks now and then (amortized)
                chunks[:] = [np.sort(np.concatenate(chunks))]
            on = day == d
            for ids in chunks:
                known[on] |= _contains(ids, nonce[on])
        return known

    def _oldest_day(self) -> float:
        """Collection days before this can no longer send anything (their bundles have expired)."""
        return self.env.now / DAY_S - self.dedupe_days

    def _add(self, uc: str, day: int, rows: np.ndarray) -> None:
        agg = self.aggregators[uc].aggregate(self.mechanisms[uc].decode(rows.tobytes()))
        key = (uc, day)
        self.aggregates[key] = agg if key not in self.aggregates else self.aggregates[key] + agg

    # ---- crash and recovery ------------------------------------------------------------------------
    def crash(self, at_s: float, restart_s: float):
        """Process: crash at ``at_s`` (buffer and memory lost), come back after ``restart_s``."""
        yield self.env.timeout(max(at_s - self.env.now, 0.0))
        self.up = False
        self.counters["lost_in_crash"] += sum(int(b.size) for b, _ in self.routes)
        self.buffer, self.routes = [], []
        self.aggregates, self._seen = {}, {}
        yield self.env.timeout(restart_s)
        self._recover()
        self.up = True

    def _recover(self) -> None:
        """Rebuild the dedupe sets (of the days that can still send) and the aggregates from this
        server's parts of the store."""
        self._seen = {uc: {} for uc in self.mechanisms}
        self.aggregates = {}
        for uc, day in self.store.partitions(mine=True):
            if uc in self.mechanisms:
                self._add(uc, day, self.store.read(uc, day, mine=True))
                if day >= self._oldest_day():
                    self._seen[uc][day] = [np.unique(self.store.upload_ids(uc, day, mine=True).astype(np.int64))]



def _contains(sorted_ids: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Membership of ``x`` in the sorted array ``sorted_ids`` (binary search)."""
    pos = np.minimum(np.searchsorted(sorted_ids, x), max(sorted_ids.size - 1, 0))
    return sorted_ids[pos] == x if sorted_ids.size else np.zeros(np.shape(x), bool)


def _first_upload(nonce: np.ndarray, entry: np.ndarray) -> np.ndarray:
    """Mask of the rows that belong to the first buffered upload (``entry``) of their upload id."""
    order = np.lexsort((entry, nonce))
    n_sorted, e_sorted = nonce[order], entry[order]
    head = np.r_[True, n_sorted[1:] != n_sorted[:-1]]
    first_entry = e_sorted[head][np.cumsum(head) - 1]
    keep = np.empty(nonce.size, bool)
    keep[order] = e_sorted == first_entry
    return keep
