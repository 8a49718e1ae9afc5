"""Fake devices that push a chosen item or word into the server's top list, and the gate that meets them.

A fleet component (Cao, Jia, Gong 2021, in the deployment): ``n_fakes`` devices that never privatize
anything — each day from ``start_day``, at ``upload_hour``, every fake sends ``reports_per_day`` crafted
reports for ``target`` to the use case of kind ``use_case`` (``"event"``: an emoji; ``"word"``: a word
for the nightly discovery job), built by ``attack(mechanism, target, n, rng)`` (the evaluation layer
passes the maximal gain attack). They use the real wire form and the server's normal ingestion (strip,
shuffle, store, aggregate); they never wait for acknowledgments (a report sent while the server is down
is lost).

Defenses at the server's edge (:class:`Gate`; genuine devices are attested and far below the limits,
so only fakes are gated):

* device attestation: only the first ⌊``attested``·n_fakes⌋ fakes can authenticate; the others' uploads
  are refused;
* per-identity rate limit: fake i uploads as identity i mod ``identities`` (default: one identity each);
  the gate accepts at most ``rate_limit`` reports per identity per day (None: no limit), in report order.

Sharding (any number of shards, serial or on Dask, gives the same aggregates): identity j belongs to
device block j mod n_blocks, and the shard simulating that block runs every fake of identity j with
its own gate, so a rate limit never spans shards. Each day's reports of *all* fakes (and their upload
ids) are drawn from one stream ``("fakes", 0, day)`` of the run's seed, in fake order, whatever is
refused; a shard keeps the rows of its own fakes. A fake's reports therefore do not depend on the
sharding, and neither do the gate's decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.simulator.channel import Upload
from ldpsim.simulator.device import DAY_S
from ldpsim.simulator.fleet import block_rng

#: server counters the fakes' component adds in every shard (summed over shards by the merge)
GATE_COUNTERS = ("fake_sent", "fake_refused_attestation", "fake_refused_rate_limit", "fake_accepted")


@dataclass(frozen=True)
class FakeFleet:
    """Fake devices and the defenses they meet (see module docstring)."""

    n_fakes: int
    target: object
    attack: Callable  #: (mechanism, target, n, rng) -> n reports (picklable: a module-level function)
    use_case: str = "event"
    start_day: int = 0
    reports_per_day: int = 1
    upload_hour: float = 23.0
    attested: float = 1.0
    identities: int | None = None
    rate_limit: int | None = None

    def __post_init__(self):
        check_int("FakeFleet", "n_fakes", self.n_fakes, low=0)
        if self.use_case not in ("event", "word"):
            raise ValueError(f"The 'use_case' parameter of FakeFleet must be 'event' or 'word'. "
                             f"Got {self.use_case!r} instead.")
        check_int("FakeFleet", "start_day", self.start_day, low=0)
        check_int("FakeFleet", "reports_per_day", self.reports_per_day, low=1)
        check_real("FakeFleet", "upload_hour", self.upload_hour, 0.0, 24.0, low_open=False, high_open=True)
        check_real("FakeFleet", "attested", self.attested, 0.0, 1.0, low_open=False, high_open=False)
        if self.identities is not None:
            check_int("FakeFleet", "identities", self.identities, low=1)
        if self.rate_limit is not None:
            check_int("FakeFleet", "rate_limit", self.rate_limit, low=0)

    @property
    def n_identities(self) -> int:
        return self.identities or max(self.n_fakes, 1)

    def accepted_per_day(self) -> int:
        """Reports the gate lets through per day: attested fakes, capped by the identities' limits
        (fakes are spread round-robin over the identities, so each holds ⌊a/I⌋ or ⌈a/I⌉ of the a attested
        ones and Σ_j min(load_j·R, limit) = min(a·R, I·limit) whenever the loads differ by at most one)."""
        attested = int(self.n_fakes * self.attested)
        sent = attested * self.reports_per_day
        if self.rate_limit is None:
            return sent
        return min(sent, min(self.n_identities, attested) * self.rate_limit)

    def report_fakes(self) -> np.ndarray:
        """The fake sending each of a day's reports, in report order."""
        return np.repeat(np.arange(self.n_fakes), self.reports_per_day)

    def gate(self, counters: dict | None = None) -> "Gate":
        """A gate for these fakes (adding to ``counters``, or to a dict of its own)."""
        return Gate(np.arange(self.n_fakes) < int(self.n_fakes * self.attested),
                    np.arange(self.n_fakes) % self.n_identities, self.rate_limit,
                    {name: 0 for name in GATE_COUNTERS} if counters is None else counters)

    def accepted_reports(self) -> np.ndarray:
        """Indices (in report order) of a day's reports that the gate lets through (every day the same)."""
        return np.flatnonzero(self.gate().admit(self.report_fakes()))

    def day_reports(self, mech, cfg, day: int):
        """(reports, upload ids) of every fake's reports of ``day``, in report order, from the day's stream."""
        rng = block_rng(cfg.seed, "fakes", 0, day)
        reports = self.attack(mech, self.target, self.n_fakes * self.reports_per_day, rng)
        return reports, rng.integers(0, 2**63 - 1, size=self.n_fakes * self.reports_per_day)

    def component(self, env, server, mechanisms: dict, cfg, blocks) -> None:
        """Start the process of this shard's fakes (those whose identity's block is in ``blocks``)."""
        for name in GATE_COUNTERS:
            server.counters.setdefault(name, 0)
        if self.n_fakes == 0:
            return
        uc = cfg.use_case(self.use_case)
        if uc is None:
            raise ValueError(f"FakeFleet: the deployment has no {self.use_case} use case to poison.")
        mine = np.isin(np.arange(self.n_fakes) % self.n_identities % cfg.n_blocks, np.asarray(blocks, dtype=np.int64))
        if mine.any():
            env.process(self._upload(env, server, mechanisms[uc.name], uc.name, cfg, mine, self.gate(server.counters)))

    def _upload(self, env, server, mech, uc_name: str, cfg, mine: np.ndarray, gate: "Gate"):
        fake = self.report_fakes()
        own = np.flatnonzero(mine[fake])
        for day in range(self.start_day, cfg.n_days):
            yield env.timeout(max(0.0, day * DAY_S + self.upload_hour * 3600.0 - env.now))
            reports, nonce = self.day_reports(mech, cfg, day)  # every fake's, whatever is refused
            sel = own[gate.admit(fake[own])]
            if sel.size == 0:
                continue
            rows = np.frombuffer(mech.encode(reports), dtype=np.uint8).reshape(fake.size, mech.report_bytes)[sel]
            none = np.zeros(0, dtype=np.int64)  # no bundle routes: nothing to acknowledge
            server.receive(Upload(none, none, np.full(sel.size, -1), nonce[sel], np.full(sel.size, day), env.now,
                                  {uc_name: (np.arange(sel.size), rows)}))


class Gate:
    """The server's edge for the fakes of one shard: attestation, then a per-identity daily rate limit.

    Parameters
    ----------
    attested : numpy.ndarray of bool
        Per fake: can it authenticate?
    identity : numpy.ndarray of int
        Per fake: its upload identity.
    rate_limit : int or None
        Reports accepted per identity per day (None: no limit).
    counters : dict
        The server's counters; the gate adds to :data:`GATE_COUNTERS`.
    """

    def __init__(self, attested: np.ndarray, identity: np.ndarray, rate_limit: int | None, counters: dict):
        self.attested, self.identity, self.rate_limit, self.counters = attested, identity, rate_limit, counters

    def admit(self, fake: np.ndarray) -> np.ndarray:
        """Mask of the reports (one per entry of ``fake``, in arrival order, all of one day) let through."""
        if fake.size == 0:
            return np.zeros(0, dtype=bool)
        ok = self.attested[fake]
        self.counters["fake_sent"] += int(fake.size)
        self.counters["fake_refused_attestation"] += int((~ok).sum())
        if self.rate_limit is not None:
            ident = self.identity[fake]
            order = np.argsort(ident, kind="stable")  # arrival order within each identity
            sorted_ok = ok[order]
            ranked = np.cumsum(sorted_ok)              # running count of authenticated reports ...
            start = np.r_[0, np.flatnonzero(np.diff(ident[order])) + 1]
            base = np.repeat(ranked[start] - sorted_ok[start], np.diff(np.r_[start, fake.size]))
            within = np.empty(fake.size, dtype=bool)
            within[order] = ranked - base <= self.rate_limit  # ... restarted per identity
            limited = ok & ~within
            self.counters["fake_refused_rate_limit"] += int(limited.sum())
            ok &= within
        self.counters["fake_accepted"] += int(ok.sum())
        return ok
