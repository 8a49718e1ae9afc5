"""Trends: words and emoji that rise, peak and fade, and devices whose favourites change — docs/math.md §12.5.

* **A rising item** (:class:`TrendShape`): the share of devices that use it on day t,

      π_t = peak · 1/(1 + e^{−g·(t − m)}) · e^{−λ·(t − m)₊},   m = e + ln(99)/g,

  a logistic rise of rate g per day, centred on day m, damped after m at the fade rate λ per day. The
  **emergence day** e is the day the logistic factor reaches 1 % (before the fade, which starts at m,
  so π_e = peak/100 exactly). The peak share comes from a real frequency list: a device that types
  ``words_per_day`` words a day, each the item with wordfreq's frequency f, uses it on a day with
  probability 1 − e^{−words_per_day·f} (Poisson occurrences). :func:`rising_items` draws e, g and λ
  from a seeded generator.
* **Daily counts** (:func:`daily_counts`): each device uses the item on day t independently with
  probability π_t, so the day's count is exactly Bin(n, π_t) — drawn directly, whatever n.
* **Changing favourites** (:func:`changing_favourites`): each device holds one favourite item a day
  and changes it on at most ``max_changes`` days of the run (the class of behaviour longitudinal
  protocols protect): the number of changes is uniform on 0 … max_changes, their days uniform without
  replacement, each new favourite drawn from the shares (it may equal the old one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.runtime.errors import InputError

#: default words a device types a day (the scale from a frequency to a daily share of devices)
WORDS_PER_DAY = 500.0
#: the logistic factor on the emergence day: 1 % of the peak
EMERGED = 0.01


@dataclass(frozen=True)
class TrendShape:
    """One rising item's daily share of devices (module docstring; docs/math.md §12.5).

    Parameters
    ----------
    item : str
        The word or emoji.
    peak : float in (0, 1]
        The share of devices using it per day at the top of the logistic (before the fade).
    emergence : float
        e, the day π reaches 1 % of ``peak``.
    growth : float > 0
        g, the logistic rate per day.
    fade : float ≥ 0
        λ, the decay rate per day after the centre m.

    Examples
    --------
    >>> s = TrendShape("rizz", 0.01, emergence=30.0, growth=0.25, fade=0.0)
    >>> round(float(s.shares(90)[30] / 0.01), 6)
    0.01
    """

    item: str
    peak: float
    emergence: float
    growth: float
    fade: float = 0.0

    def __post_init__(self):
        check_real("TrendShape", "peak", self.peak, 0.0, 1.0, high_open=False)
        check_real("TrendShape", "emergence", self.emergence)
        check_real("TrendShape", "growth", self.growth, 0.0)
        check_real("TrendShape", "fade", self.fade, 0.0, math.inf, low_open=False)

    @property
    def centre(self) -> float:
        """m = e + ln(99)/g, the day the logistic factor reaches ½."""
        return self.emergence + math.log(1 / EMERGED - 1) / self.growth

    def shares(self, days: int) -> np.ndarray:
        """π_0 … π_{T−1}, shape (T,) (module docstring)."""
        t = np.arange(check_int("TrendShape.shares", "days", days, low=1), dtype=float)
        rise = 1.0 / (1.0 + np.exp(-self.growth * (t - self.centre)))
        return self.peak * rise * np.exp(-self.fade * np.maximum(t - self.centre, 0.0))


def peak_share(item: str, words_per_day: float = WORDS_PER_DAY, lang: str = "en") -> float:
    """1 − exp(−words_per_day · f): the daily share of devices using ``item``, f its wordfreq frequency.

    Raises InputError when the item is not one printable wordfreq token, or wordfreq does not know it (f = 0).
    """
    import wordfreq

    words_per_day = check_real("peak_share", "words_per_day", words_per_day, 0.0)
    if not isinstance(item, str) or not item.isprintable() or len(wordfreq.tokenize(item, lang)) != 1:
        raise InputError(f"peak_share: the 'item' must be one printable word or emoji (one wordfreq token); "
                         f"got {item!r:.80}.")
    f = wordfreq.word_frequency(item, lang)
    if f <= 0:
        raise InputError(f"peak_share: wordfreq ({lang}) has no frequency for the item {item!r}; "
                         "choose a word or emoji it lists.")
    return float(-math.expm1(-words_per_day * f))


def rising_items(items, days: int, rng=None, words_per_day: float = WORDS_PER_DAY,
                 emergence=(0.2, 0.6), growth=(0.1, 0.4), fade=(0.0, 0.05)) -> list[TrendShape]:
    """A :class:`TrendShape` per item: peak from wordfreq, e, g and λ drawn uniformly (seeded).

    Parameters
    ----------
    items : sequence of str
        Words or emoji wordfreq knows.
    days : int
        T, the run's length.
    rng : None, int, SeedSequence or Generator
    words_per_day : float
        Words a device types a day (:func:`peak_share`).
    emergence : (float, float)
        e is uniform on [a·T, b·T).
    growth, fade : (float, float)
        g and λ, uniform on these ranges (per day).

    Returns
    -------
    list of TrendShape
    """
    days = check_int("rising_items", "days", days, low=1)
    items = list(items)
    if not items:
        raise InputError("rising_items: 'items' must name at least one word or emoji; got an empty list.")
    peaks = [peak_share(w, words_per_day) for w in items]
    gen = as_generator(rng)
    k = len(items)
    e = gen.uniform(emergence[0] * days, emergence[1] * days, k)
    g = gen.uniform(*growth, k)
    lam = gen.uniform(*fade, k)
    return [TrendShape(w, p, float(a), float(b), float(c)) for w, p, a, b, c in zip(items, peaks, e, g, lam)]


def daily_counts(shares, n_devices: int, rng=None) -> np.ndarray:
    """True daily counts Bin(n, π_t) of every item and day, drawn directly (module docstring).

    Parameters
    ----------
    shares : array_like, shape (..., T)
        π of every item and day, in [0, 1].
    n_devices : int
        n ≥ 1.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of int64, same shape as ``shares``
    """
    p = np.asarray(shares, dtype=float)
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise InputError("daily_counts: 'shares' must lie in [0, 1]; "
                         f"got values in [{np.nanmin(p):g}, {np.nanmax(p):g}].")
    n = check_int("daily_counts", "n_devices", n_devices, low=1)
    return as_generator(rng).binomial(n, p).astype(np.int64)


def changing_favourites(n_devices: int, days: int, shares, max_changes: int, rng=None) -> np.ndarray:
    """Each device's favourite item on every day, changing on at most ``max_changes`` days (module docstring).

    Parameters
    ----------
    n_devices, days : int
        n ≥ 1 devices over T ≥ 1 days.
    shares : array_like, shape (d,)
        The law of a new favourite (non-negative, summing to 1).
    max_changes : int
        k, 0 ≤ k < T: the most days a device's favourite is redrawn (day 0 excluded).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of int, shape (n, T)
        Item indices; the number of days t ≥ 1 with a different favourite than on t − 1 is ≤ k.
    """
    n = check_int("changing_favourites", "n_devices", n_devices, low=1)
    t = check_int("changing_favourites", "days", days, low=1)
    k = check_int("changing_favourites", "max_changes", max_changes, low=0, high=t - 1)
    p = np.asarray(shares, dtype=float)
    if p.ndim != 1 or p.size == 0 or p.min() < 0 or not np.isclose(p.sum(), 1.0):
        raise InputError(f"changing_favourites: 'shares' must be a non-empty 1-D law summing to 1; got {p!r}.")
    gen = as_generator(rng)
    n_changes = gen.integers(0, k + 1, size=n)
    # the change days: the first n_changes of a random order of days 1 … T−1
    order = np.argsort(gen.random((n, t - 1)), axis=1) + 1
    chosen = np.arange(t - 1)[None, :] < n_changes[:, None]
    marks = np.zeros((n, t), dtype=np.int64)
    np.put_along_axis(marks, order, chosen.astype(np.int64), axis=1)
    segment = np.cumsum(marks, axis=1)
    favourites = gen.choice(p.size, size=(n, k + 1), p=p)
    return np.take_along_axis(favourites, segment, axis=1)
