"""The upload channel (cf. SimPy's latency.py ``Cable``): senders hand it a batch, it handles delay and loss.

An upload attempt of a bundle is lost w.p. ``loss``; a delivered one arrives after a lognormal latency
(median ``latency_median_s``, log-sd ``latency_sigma``); the server's acknowledgment is lost w.p.
``ack_loss``. The outcomes of every attempt of a bundle are drawn once, when the bundle is created,
from the device block's stream (:meth:`UploadChannel.fates`), so a bundle's fate does not depend on
which shard or batch carries it. A batch is delivered as one message when its slowest member arrives.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: bytes of framing per bundle on the wire: upload id (8), day (2), use-case tag and count (2 × 2)
HEADER_BYTES = 14


class Fates(NamedTuple):
    """Pre-drawn outcomes of attempts 0..A−1 of n bundles (each n × A)."""

    latency_s: np.ndarray
    lost: np.ndarray
    ack_lost: np.ndarray

    @staticmethod
    def concat(parts) -> "Fates":
        return Fates(*(np.concatenate(cols) for cols in zip(*parts)))


class Upload(NamedTuple):
    """A message on the wire: what the server receives (with metadata, before stripping)."""

    bundle: np.ndarray        # network route of each bundle (for the acknowledgment); not stored
    attempt: np.ndarray       # attempt index of each bundle
    device: np.ndarray        # metadata: device id of each bundle (stripped by the server)
    nonce: np.ndarray         # random upload id of each bundle (stable across retries; for dedupe)
    day: np.ndarray           # coarse collection day of each bundle
    sent_s: float             # metadata: send time (stripped by the server)
    reports: dict             # use case → (bundle position in this upload, rows uint8 n × report_bytes)


class UploadChannel:
    """Latency, loss and acknowledgment loss between devices and the server; measures traffic."""

    def __init__(self, env, latency_median_s: float, latency_sigma: float, loss: float, ack_loss: float,
                 max_attempts: int):
        self.env = env
        self.latency_median_s = latency_median_s
        self.latency_sigma = latency_sigma
        self.loss = loss
        self.ack_loss = ack_loss
        self.max_attempts = max_attempts
        self.records: list[dict] = []

    def fates(self, n: int, rng: np.random.Generator) -> Fates:
        """Outcomes of every possible attempt of ``n`` new bundles."""
        shape = (n, self.max_attempts)
        return Fates(self.latency_median_s * np.exp(self.latency_sigma * rng.standard_normal(shape)),
                     rng.random(shape) < self.loss, rng.random(shape) < self.ack_loss)

    def send(self, upload: Upload, fates: Fates, deliver):
        """Process: drop the lost bundles, wait for the slowest survivor, hand the rest to ``deliver``."""
        lost = fates.lost[upload.bundle, upload.attempt]
        n_bytes = HEADER_BYTES * upload.bundle.size + sum(r.nbytes for _, r in upload.reports.values())
        self.records.append({"t_s": self.env.now, "day": int(self.env.now // 86400),
                             "bundles": int(upload.bundle.size), "lost": int(lost.sum()),
                             "devices": int(np.unique(upload.device).size), "bytes": int(n_bytes)})
        keep = ~lost
        if not keep.any():
            return
        latency = fates.latency_s[upload.bundle[keep], upload.attempt[keep]]
        yield self.env.timeout(float(latency.max()))
        deliver(_subset(upload, keep))

    def acknowledge(self, bundle: np.ndarray, attempt: np.ndarray, fates: Fates) -> np.ndarray:
        """The bundles whose acknowledgment reaches the device."""
        return bundle[~fates.ack_lost[bundle, attempt]]


def _subset(upload: Upload, keep: np.ndarray) -> Upload:
    """The bundles of ``upload`` selected by the mask ``keep`` (reports re-indexed)."""
    new_pos = np.cumsum(keep) - 1
    reports = {}
    for uc, (pos, rows) in upload.reports.items():
        sel = keep[pos]
        reports[uc] = (new_pos[pos[sel]], rows[sel])
    return Upload(upload.bundle[keep], upload.attempt[keep], upload.device[keep], upload.nonce[keep],
                  upload.day[keep], upload.sent_s, reports)
