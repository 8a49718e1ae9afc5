"""Fake devices that push a chosen item into the daily top list, and two server-side defenses.

A fleet component (Cao, Jia, Gong 2021, in the deployment): ``n_fakes`` devices that never privatize
anything — each day from ``start_day``, at ``upload_hour``, every fake sends ``reports_per_day`` crafted
reports for ``target`` of the event use case, built by ``attack(mechanism, target, n, rng)`` (the
evaluation layer passes the maximal gain attack, :func:`ldpsim.evaluation.poisoning.attacks.fake_reports`).
They use the real wire form and the server's normal ingestion (strip, shuffle, store, aggregate), so
the measurement sees exactly what the server would; they never wait for acknowledgments.

Defenses at the server's edge (:class:`Gate`, a real service's infrastructure; genuine devices are
attested and far below the limits, so only fakes are gated here):

* device attestation: only ``attested`` (a fraction) of the fakes can authenticate; the uploads of the
  others are refused;
* per-identity rate limit: the fakes share ``identities`` upload identities (default: one each) and
  the server accepts at most ``rate_limit`` reports per identity per day (None: no limit).

Only shard 0 runs the fakes (their reports add to the merged aggregates like any shard's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.simulator.channel import Upload
from ldpsim.simulator.device import DAY_S


@dataclass(frozen=True)
class FakeFleet:
    """Fake devices and the defenses they meet (see module docstring)."""

    n_fakes: int
    target: object
    attack: Callable  #: (mechanism, target, n, rng) -> n reports (picklable: a module-level function)
    start_day: int = 0
    reports_per_day: int = 1
    upload_hour: float = 23.0
    attested: float = 1.0
    identities: int | None = None
    rate_limit: int | None = None
    seed: int = 0

    def __post_init__(self):
        check_int("FakeFleet", "n_fakes", self.n_fakes, low=0)
        check_int("FakeFleet", "start_day", self.start_day, low=0)
        check_int("FakeFleet", "reports_per_day", self.reports_per_day, low=1)
        check_real("FakeFleet", "upload_hour", self.upload_hour, 0.0, 24.0, low_open=False, high_open=True)
        check_real("FakeFleet", "attested", self.attested, 0.0, 1.0, low_open=False, high_open=False)
        if self.identities is not None:
            check_int("FakeFleet", "identities", self.identities, low=1)
        if self.rate_limit is not None:
            check_int("FakeFleet", "rate_limit", self.rate_limit, low=0)

    def accepted_per_day(self) -> int:
        """Reports the gate lets through per day: attested fakes, capped by the identities' limits."""
        sent = int(self.n_fakes * self.attested) * self.reports_per_day
        if self.rate_limit is None:
            return sent
        ids = self.identities or int(self.n_fakes * self.attested)
        return min(sent, ids * self.rate_limit)



    def component(self, env, server, mechanisms: dict, cfg, shard: int) -> None:
        """Start the fakes' process in a shard's environment (shard 0 only)."""
        if shard != 0 or self.n_fakes == 0:
            return
        uc = cfg.use_case("event")
        if uc is None:
            raise ValueError("FakeFleet: the deployment has no event use case to poison.")
        env.process(self._upload(env, server, mechanisms[uc.name], uc.name, cfg.n_days))

    def _upload(self, env, server, mech, uc_name: str, n_days: int):
        rng = np.random.default_rng([self.seed, 0xFA4E])
        for day in range(self.start_day, n_days):
            yield env.timeout(max(0.0, day * DAY_S + self.upload_hour * 3600.0 - env.now))
            n = self.accepted_per_day()  # the gate refuses the rest at the server's edge
            if n == 0:
                continue
            reports = self.attack(mech, self.target, n, rng)
            rows = np.frombuffer(mech.encode(reports), dtype=np.uint8).reshape(n, mech.report_bytes)
            none = np.zeros(0, dtype=np.int64)  # no bundle routes: nothing to acknowledge
            server.receive(Upload(none, none, np.full(n, -1), rng.integers(0, 2**63 - 1, size=n),
                                  np.full(n, day), env.now, {uc_name: (np.arange(n), rows)}))
