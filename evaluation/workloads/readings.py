"""Numeric workloads: per-user readings normalised to [−1, 1] by a FIXED public range — docs/math.md §5.

The range is a public constant (a plausible physical range for the quantity), never taken from the
sampled private data; readings outside it are clipped. It is deliberately not mean ± c·sd: that would
map every normal workload onto the same standardized shape (heights and weights would coincide).
Builders have the signature ``(n, rng=None, **params)``.
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real

from ldpsim.evaluation.workloads.types import NumericWorkload
from ldpsim.evaluation.workloads.real import letter_frequencies

def to_unit_interval(x, low: float, high: float) -> np.ndarray:
    """Map [low, high] affinely onto [−1, 1] and clip."""
    return np.clip(2.0 * (np.asarray(x, float) - low) / (high - low) - 1.0, -1.0, 1.0)


def _normal(name: str, n, rng, mean: float, sd: float, unit: str, low: float, high: float) -> NumericWorkload:
    n = check_int(name, "n", n, low=1)
    mean = check_real(name, "mean", mean)
    sd = check_real(name, "sd", sd, 0.0, math.inf)
    low = check_real(name, "low", low)
    high = check_real(name, "high", high, low)
    x = as_generator(rng).normal(mean, sd, n)
    return NumericWorkload(name, to_unit_interval(x, low, high),
                           {"mean": mean, "sd": sd, "unit": unit, "range": (low, high)})


def heights(n: int, rng=None, mean: float = 68.0, sd: float = 1.9,
            low: float = 54.0, high: float = 84.0) -> NumericWorkload:
    """Heights in inches ~ Normal(68.0, 1.9) (the SOCR set of the paper is such a sample; docs/math.md §5),
    public range 4′6″–7′ (54–84 in)."""
    return _normal("heights", n, rng, mean, sd, "in", low, high)


def weights(n: int, rng=None, mean: float = 127.1, sd: float = 11.7,
            low: float = 60.0, high: float = 200.0) -> NumericWorkload:
    """Weights in pounds ~ Normal(127.1, 11.7) (docs/math.md §5), public range 60–200 lb."""
    return _normal("weights", n, rng, mean, sd, "lb", low, high)


def typing_speed(n: int, rng=None, mean: float = 36.2, sd: float = 13.2,
                 max_wpm: float = 100.0) -> NumericWorkload:
    """Mobile typing speed in words/min ~ lognormal with the given mean and sd, public range [0, max_wpm].

    Defaults follow the order of magnitude reported for phone typing (≈ 36 ± 13 wpm, Palin et al.,
    MobileHCI 2019); the lognormal's (μ, σ) solve mean = e^(μ+σ²/2), sd² = mean²(e^(σ²) − 1).
    """
    n = check_int("typing-speed", "n", n, low=1)
    mean = check_real("typing-speed", "mean", mean, 0.0, math.inf)
    sd = check_real("typing-speed", "sd", sd, 0.0, math.inf)
    max_wpm = check_real("typing-speed", "max_wpm", max_wpm, 0.0, math.inf)
    sigma2 = math.log1p((sd / mean) ** 2)
    x = as_generator(rng).lognormal(math.log(mean) - sigma2 / 2, math.sqrt(sigma2), n)
    return NumericWorkload("typing-speed", to_unit_interval(x, 0.0, max_wpm),
                           {"mean": mean, "sd": sd, "unit": "wpm", "range": (0.0, max_wpm)})


def key_latency(n: int, rng=None, median_ms: float = 230.0, sigma: float = 0.45,
                max_ms: float = 1000.0) -> NumericWorkload:
    """Time between two key taps in milliseconds ~ LogNormal(ln median_ms, sigma²), public range [0, max_ms]
    (docs/math.md §5.2); longer pauses are clipped to ``max_ms``."""
    n = check_int("key-latency", "n", n, low=1)
    median_ms = check_real("key-latency", "median_ms", median_ms, 0.0, math.inf)
    sigma = check_real("key-latency", "sigma", sigma, 0.0, math.inf, low_open=False)
    max_ms = check_real("key-latency", "max_ms", max_ms, 0.0, math.inf)
    x = as_generator(rng).lognormal(math.log(median_ms), sigma, n)
    return NumericWorkload("key-latency", to_unit_interval(x, 0.0, max_ms),
                           {"median": median_ms, "sigma": sigma, "unit": "ms", "range": (0.0, max_ms)})


#: QWERTY letter rows and their horizontal offsets, in key widths (a phone layout)
QWERTY_ROWS = (("qwertyuiop", 0.0), ("asdfghjkl", 0.5), ("zxcvbnm", 1.5))


def key_centres() -> dict[str, tuple[float, float]]:
    """Centre of each letter key in [−1, 1]²: 10 key widths across, 3 rows, top row at the top."""
    centres = {}
    for row, (letters, offset) in enumerate(QWERTY_ROWS):
        y = 1.0 - (row + 0.5) * 2.0 / len(QWERTY_ROWS)
        for col, ch in enumerate(letters):
            centres[ch] = (-1.0 + (offset + col + 0.5) * 2.0 / 10, y)
    return centres


def tap_positions(n: int, rng=None, top: int = 2000, spread: float = 0.25) -> NumericWorkload:
    """Tap points in [−1, 1]²: a mixture of Gaussians centred on the QWERTY letter keys.

    Key weights are the letter frequencies of the ``words`` workload's ``top`` words; each tap is
    its key's centre plus isotropic normal noise of sd ``spread`` key widths, clipped to the square.
    Returns a 2-D NumericWorkload (``values`` has shape (n, 2): x to the right, y upwards).
    """
    n = check_int("tap-positions", "n", n, low=1)
    spread = check_real("tap-positions", "spread", spread, 0.0, math.inf, low_open=False)
    freqs = letter_frequencies(top)
    centres = key_centres()
    letters = sorted(centres)
    xy = np.array([centres[ch] for ch in letters])
    w = np.array([freqs[ch] for ch in letters])
    rng = as_generator(rng)
    keys = rng.choice(len(letters), size=n, p=w / w.sum())
    pts = xy[keys] + rng.normal(0.0, spread * 2.0 / 10, size=(n, 2))
    return NumericWorkload("tap-positions", np.clip(pts, -1.0, 1.0),
                           {"top": top, "spread": spread, "layout": "qwerty"})
