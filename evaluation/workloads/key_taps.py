"""Where on a key the finger lands: a synthetic per-key tap model — docs/math.md §5.1.

No tap data is installable, so positions come from a generative model with the structure touch-model
studies report: each key has its own systematic offset from its centre, each device (its owner's hand
and grip) adds a habit offset to every tap, left-handed owners mirror the horizontal part of the
handedness shift, and taps scatter around all of that. Coordinates are in the key's own box, mapped to
[−1, 1]² (x to the right, y upwards; 0 = the key's centre); points outside the box are clipped onto it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.runtime.errors import InputError


#: names of the default 30 keys, in key-id order (the letters, then space and three function keys)
KEY_NAMES = tuple("abcdefghijklmnopqrstuvwxyz") + ("space", "enter", "backspace", "shift")


class KeyTaps(NamedTuple):
    """One tap per device: the key it landed on, its position in the key's box, the owner's hand, and
    the model's per-key offsets (for reference)."""

    keys: np.ndarray          # (n,) int key ids 0 … K−1
    xy: np.ndarray            # (n, 2) positions in [−1, 1]²
    left_handed: np.ndarray   # (n,) bool
    key_offsets: np.ndarray   # (K, 2) the keys' systematic offsets
    habit: np.ndarray | None = None  # (n, 2) the tapping device's habit offset

    def grid_counts(self, side: int) -> np.ndarray:
        """True tap counts per key on a side × side grid of each key's box, shape (K, side, side);
        row 0 is the bottom of the key (y = −1), column 0 its left edge (x = −1)."""
        cells = np.minimum(((self.xy + 1.0) / 2.0 * side).astype(np.int64), side - 1)
        flat = (self.keys * side + cells[:, 1]) * side + cells[:, 0]
        k = self.key_offsets.shape[0]
        return np.bincount(flat, minlength=k * side * side).reshape(k, side, side)


#: the tap model's per-device parameters (:func:`device_habits`): the habit's sd per axis, the left-handed share
HABIT_SPREAD, LEFT_SHARE = 0.12, 0.1


def device_habits(n: int, rng=None, habit_spread: float = HABIT_SPREAD,
                  left_share: float = LEFT_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` devices' owners: (left_handed (n,) bool, habit (n, 2)), the habit N(0, habit_spread²) per
    axis (docs/math.md §5.1). A device keeps both for all its taps (pass them to :func:`key_taps`)."""
    n = check_int("device_habits", "n", n, low=0)
    habit_spread = check_real("device_habits", "habit_spread", habit_spread, 0.0, math.inf, low_open=False)
    left_share = check_real("device_habits", "left_share", left_share, 0.0, 1.0, low_open=False, high_open=False)
    g = as_generator(rng)
    left = g.random(n) < left_share
    return left, g.normal(0.0, habit_spread, (n, 2))


def key_taps(n: int, rng=None, keys: int = 30, key_spread: float = 0.15, habit_spread: float = HABIT_SPREAD,
             tap_spread: tuple = (0.32, 0.26), left_share: float = LEFT_SHARE,
             hand_shift: tuple = (0.12, -0.15), habits: tuple | None = None) -> KeyTaps:
    """Draw one tap per device on one of ``keys`` keys chosen uniformly (docs/math.md §5.1).

    Tap = key offset (per key, N(0, key_spread²) per axis, drawn once) + handedness shift (right-handed:
    ``hand_shift``; left-handed: its x mirrored) + device habit (N(0, habit_spread²) per axis, per device)
    + scatter (N(0, tap_spread²) per axis, per tap), clipped to [−1, 1]². Independent child streams of
    ``rng`` (Generator.spawn) draw the key offsets, the devices (their keys; and, without ``habits``, their
    owners by :func:`device_habits`) and the taps.

    Parameters
    ----------
    n : int
        Devices (one tap each), ≥ 1.
    rng : numpy.random.Generator, int or None
        Source of randomness.
    keys : int, default 30
        Number of keys K ≥ 1.
    key_spread, habit_spread : float
        Standard deviations (key-box half-widths) of the per-key and per-device offsets, ≥ 0.
    tap_spread : (float, float)
        Standard deviations of the scatter along x and y, > 0.
    left_share : float, default 0.1
        Share of left-handed owners, in [0, 1].
    hand_shift : (float, float)
        Right-handed owners' mean shift (x, y); left-handed owners get (−x, y).
    habits : (ndarray, ndarray), optional
        The tapping devices' ``(left_handed, habit)`` of :func:`device_habits`, one row per tap (a device
        tapping on several nights repeats its row); then ``habit_spread`` and ``left_share`` are not used.

    Returns
    -------
    KeyTaps

    Examples
    --------
    >>> taps = key_taps(1000, rng=0, keys=3)
    >>> taps.xy.shape, taps.grid_counts(16).shape, int(taps.grid_counts(16).sum())
    ((1000, 2), (3, 16, 16), 1000)
    """
    n = check_int("key_taps", "n", n, low=1)
    k = check_int("key_taps", "keys", keys, low=1)
    key_spread = check_real("key_taps", "key_spread", key_spread, 0.0, math.inf, low_open=False)
    sx, sy = (check_real("key_taps", "tap_spread", s, 0.0, math.inf) for s in tap_spread)
    hx, hy = (check_real("key_taps", "hand_shift", s) for s in hand_shift)
    g_keys, g_devices, g_taps = as_generator(rng).spawn(3)
    offsets = g_keys.normal(0.0, key_spread, (k, 2))
    key = g_devices.integers(0, k, n)
    if habits is None:
        left, habit = device_habits(n, g_devices, habit_spread, left_share)
    else:
        left, habit = np.asarray(habits[0], bool), np.asarray(habits[1], np.float64)
        if left.shape != (n,) or habit.shape != (n, 2):
            raise InputError(f"The 'habits' of key_taps must be (left_handed of shape ({n},), habit of shape "
                             f"({n}, 2)), one row per tap. Got shapes {left.shape} and {habit.shape} instead.")
    shift = np.stack([np.where(left, -hx, hx), np.full(n, hy)], axis=1)
    xy = offsets[key] + shift + habit + g_taps.normal(0.0, 1.0, (n, 2)) * (sx, sy)
    return KeyTaps(key, np.clip(xy, -1.0, 1.0), left, offsets, habit)
