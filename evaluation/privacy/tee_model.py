"""The confidential-aggregation (TEE) trust model as the trust-model accounting and designs use it —
docs/math.md §9.11.

Everything the ``"tee"`` kind of :class:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel` needs, as
functions of its :class:`~ldpsim.mechanisms.aggregation.tee.TeeDesign`: the starting design, the
guarantee per report, per day and per person over the run and what is left if attestation fails, the
calibration to an ε per person over the run, the collectors' release, the exact error, and the design as
plain values. One release a night; a device's reports of one day are its L0 = ``reports_per_day`` keys
(L∞ = 1: the count level holds one report per key and device).

>>> rows, _ = tee_guarantee(calibrate_design(DEFAULT, 1.0, 30, 1, 1e-9), 30, 1e-9)
>>> [(scope, round(eps, 3)) for scope, eps, _ in rows][-1]
('run', 1.0)
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ldpsim.mechanisms.aggregation.tee import IF_BREACHED, TeeDesign, calibrate_tee

#: the starting design before calibration: Gaussian noise (the smaller threshold at equal ε over 30 nights)
DEFAULT = TeeDesign("gaussian", 1.0, 1.0)
#: who must behave for the central guarantee
TRUSTED = "the attested enclave (the audited code, unbroken hardware)"


def tee_guarantee(design: TeeDesign, days: int, delta: float, replace: bool = True):
    """(rows, if breached): rows (scope, ε, δ) for one report (one key in one release), one day (one release
    at L0 keys) and the person over the run (``days`` releases), all at ``delta`` with one person replaced
    (``replace``, as the other trust models) or added/removed; then :data:`IF_BREACHED`."""
    rows = [("report", design.epsilon(1, delta, keys=1, replace=replace), delta),
            ("day", design.epsilon(1, delta, replace=replace), delta),
            ("run", design.epsilon(days, delta, replace=replace), delta)]
    return rows, IF_BREACHED


def calibrate_design(design: TeeDesign, target_epsilon: float, days: int, reports_per_day: int,
                     delta: float, replace: bool = True) -> TeeDesign:
    """``design``'s noise family calibrated to ``target_epsilon`` per person over ``days`` nightly releases
    of L0 = ``reports_per_day`` keys (:func:`~ldpsim.mechanisms.aggregation.tee.calibrate_tee`)."""
    return calibrate_tee(design.noise, target_epsilon, delta, days, reports_per_day, design.max_per_key, replace=replace)


def release(design: TeeDesign):
    """The collectors' release function of one night: ``release(counts, rng) -> estimate``."""
    return design.release_counts


def theory(design: TeeDesign, counts: np.ndarray) -> tuple[np.ndarray, float]:
    """Exact per-item MSE of a night's released counts, and the noise's sd."""
    return design.moments(counts)[1], math.sqrt(design.noise_variance())


def detection_floor(design: TeeDesign, z_power: float) -> float:
    """Smallest count released with the power of ``z_power``: T + z·sd (the threshold is the false-alarm
    control: a key held by one person passes it with probability p₁ ≤ δ)."""
    return design.threshold + z_power * math.sqrt(design.noise_variance())


def params(design: TeeDesign | None):
    """The design as plain values (JSON-ready), or None."""
    if design is None:
        return None
    return (design.noise, design.scale, design.threshold, design.max_keys, design.max_per_key)


def from_params(values) -> TeeDesign | None:
    """The design of :func:`params`."""
    return None if values is None else TeeDesign(*values)


def with_noise(design: TeeDesign, noise: str | None) -> TeeDesign:
    """``design`` with its noise family set (None: unchanged)."""
    return design if noise is None else replace(design, noise=noise)
