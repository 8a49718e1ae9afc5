"""THRESH's detection day and daily release, computed over its refresh paths — docs/math.md §12.13.

When THRESH (:mod:`ldpsim.evaluation.trends.thresh_design`) collects is decided by the devices' votes,
so its release has no closed form; but it has few *refresh paths* (which epochs collect: at most k of
the J − 1 epochs after the first), and along one path everything is a binomial:

* the devices are treated as independent given the server's decisions, so one device's law over its
  state (yes-votes used, local count at the last collection) follows the path exactly, the fraction y_j of
  devices voting yes in epoch j is read from it, the vote's ones are Bin(n, y_j·p_v + (1 − y_j)·q_v) and
  the refresh probability is its tail at the vote's cut c;
* a collection in epoch j sends ones ~ Bin(n, μ_j), μ_j = π̄_j·p_e + (1 − π̄_j)·q_e (each device's sent
  bit is Bernoulli(π̄_j)), independently of the other collections and (as the devices are taken
  independent given the decisions) of the vote;
* the detector (§12.6, THRESH's thresholds of §12.7) alarms on day t when the window's ones
  a·X′ + b·X exceed w_t·(t_c − ½), X the collection shown on day t and X′ the one before it (a, b their days in
  the window). While a window spans at most two collections (epoch ℓ ≥ w − 1) the first alarm follows
  by a forward recursion over the path's collections on the exact pmf of X′ (every integer count), and
  so does each day's alarm probability.

The one approximation is the independence given the decisions: the decisions read every device's vote,
so given them the devices are not exactly independent; each device moves the vote by 1 of its n reports
(§12.13 states the size of the effect, and the test suite checks the law against the simulated
protocol). For an item nobody uses nobody votes yes and the law is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ldpsim.evaluation.trends.designs import rr_pair
from ldpsim.evaluation.trends.thresh_design import ThreshDesign, local_count_law
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError

#: what THRESH's theory columns of the trends tables are (printed under ``ldpsim trends`` and ``compare --query trend:``)
THEORY_NOTE = ("THRESH: delay, false-alarm and tracking theory computed over its refresh paths (docs/math.md §12.13; "
               "when the window spans more than two of its collections, epoch < window − 1, the delay is nan and the "
               "false alarms are the union bound over its ≤ k + 1 collections); its window sd and smallest growth are "
               "nan (the window mixes the collections its votes choose, so it has no single variance)")
#: refresh paths less likely than this are not followed (their mass is reported as ``unresolved``)
PATH_FLOOR = 1e-12
#: each collection's pmf is kept on the counts whose tails beyond it hold at most this mass (each side)
TAIL = 1e-14


@dataclass(frozen=True, repr=False)
class ThreshLaw(BriefRepr):
    """THRESH's alarms, first alarm, collections and daily release for daily shares π (module docstring).

    Attributes
    ----------
    first_alarm : ndarray, shape (T,)
        P[the first alarm on or after day ``start`` is on day t] (0 before ``start``).
    alarm : ndarray, shape (T,)
        P[an alarm on day t] (whatever the other days): for an item nobody uses, the exact false-alarm
        probability of each day.
    day_mean, day_var : ndarray, shape (T,)
        Mean and variance of the released estimate of each day.
    collects : ndarray, shape (J,)
        P[epoch j collects] (1 for epoch 0).
    start : int
        The first day watched.
    paths : int
        Refresh paths followed.
    unresolved : float
        Probability of the paths not followed and of the pmfs' cut tails: every probability above is
        exact to within it.
    limit : str or None
        Why the alarms were not computed (:func:`window_limit`; ``first_alarm`` and ``alarm`` are then NaN),
        None if they were.
    """

    first_alarm: np.ndarray
    alarm: np.ndarray
    day_mean: np.ndarray
    day_var: np.ndarray
    collects: np.ndarray
    start: int
    paths: int
    unresolved: float
    limit: str | None = None

    @property
    def detected(self) -> float:
        """P[an alarm on or after ``start``] (NaN when not computed)."""
        return float(self.first_alarm.sum())

    def median_delay(self, emergence: float) -> float:
        """The first day t with P[first alarm ≤ t] ≥ ½, minus e (an undetected run counting as ∞); NaN when
        half the runs or more are never alarmed (or the first alarm was not computed) — the theory of
        ``measure_design``'s median delay."""
        hit = np.flatnonzero(np.cumsum(self.first_alarm) >= 0.5)
        return float(hit[0] - emergence) if hit.size else math.nan

    def tracking_error(self, shares, n: int) -> float:
        """√(mean over days of E(x̂_t − x_t)²) with the true count x_t ~ Bin(n, π_t) drawn independently of the
        release (as :meth:`ThreshDesign.sample`): Var x̂_t + n·π_t(1 − π_t) + (E x̂_t − n·π_t)²."""
        pi = np.asarray(shares, dtype=float)
        return float(np.sqrt(np.mean(self.day_var + n * pi * (1 - pi) + (self.day_mean - n * pi) ** 2)))


def window_limit(design: ThreshDesign, window: int) -> str | None:
    """Why :func:`thresh_law` cannot be computed for this window (None: it can)."""
    if window - 1 > design.epoch:
        return (f"a {window}-day window spans more than two of THRESH's collections when its epoch is "
                f"{design.epoch} days (the recursion of docs/math.md §12.13 needs epoch ≥ window − 1)")
    return None


class _Collections:
    """Each epoch's collection: the pmf and cdf of its ones on the counts that carry its mass."""

    def __init__(self, design: ThreshDesign, pbar: np.ndarray, n: int):
        pe, qe = rr_pair(design.epsilon_estimate)
        self.mu = pbar * pe + (1 - pbar) * qe
        self.n, self._cache = n, {}
        self.mean = n * pbar
        self.var = n * self.mu * (1 - self.mu) / (pe - qe) ** 2

    def law(self, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(counts, pmf, cdf at each count, mass cut off) of epoch j's ones."""
        if j not in self._cache:
            lo = int(stats.binom.ppf(TAIL, self.n, self.mu[j]))
            hi = int(stats.binom.isf(TAIL, self.n, self.mu[j]))
            x = np.arange(lo, hi + 1)
            pmf = stats.binom.pmf(x, self.n, self.mu[j])
            self._cache[j] = (x, pmf, np.cumsum(pmf), max(1.0 - float(pmf.sum()), 0.0))
        return self._cache[j]


def _vote(design: ThreshDesign, state: np.ndarray, counts: np.ndarray, j: int, n: int, cut: int):
    """One epoch's vote on a device's law ``state`` over (yes-votes used, count at the last collection):
    (P[refresh], the law after a refresh, the law after none)."""
    joint = state[:, :, None] * counts[j][None, None, :]                   # (u, f, m)
    voters = np.where(design.yes_cells(j), joint, 0.0)
    y = float(voters.sum())
    pv, qv = rr_pair(design.epsilon_vote)
    refresh = float(stats.binom.sf(cut - 1, n, min(max(y * pv + (1 - y) * qv, 0.0), 1.0)))
    stay = joint - voters
    stay[1:] += voters[:-1]
    return refresh, stay.sum(axis=1), stay.sum(axis=2)


def thresh_law(design: ThreshDesign, shares, n: int, lengths, tested: int, rate: float, start: int) -> ThreshLaw:
    """THRESH's first alarm on or after ``start`` and daily release for daily shares π (module docstring).

    Parameters
    ----------
    design : ThreshDesign
    shares : array_like, shape (T,)
    n : int
        Devices.
    lengths : array_like of int, shape (T,)
        w_t, the days in each day's window (:meth:`Detector.lengths`).
    tested, rate : int, float
        The detector's item-days a month and false alarms a month (its thresholds, §12.7).
    start : int
        The first day watched.

    Returns
    -------
    ThreshLaw

    Raises
    ------
    InputError
        Unless ``shares`` is T shares in [0, 1], ``lengths`` T window lengths ≥ 1, n ≥ 1, ``tested`` ≥ 1,
        ``rate`` > 0 and 0 ≤ ``start`` ≤ T. A window spanning more than two collections is not an error:
        the law's ``limit`` says so and only its daily moments are computed.
    """
    pi = np.asarray(shares, dtype=float)
    if pi.shape != (design.days,) or not np.all((pi >= 0) & (pi <= 1)):
        raise InputError(f"thresh_law: 'shares' must be {design.days} daily shares in [0, 1]; got shape {pi.shape}.")
    n = check_int("thresh_law", "n", n, low=1)
    tested = check_int("thresh_law", "tested", tested, low=1)
    rate = check_real("thresh_law", "rate", rate, 0.0)
    start = check_int("thresh_law", "start", start, low=0, high=design.days)
    w = np.asarray(lengths)
    if w.shape != (design.days,) or not np.all(w == np.round(w)) or w.min() < 1:
        raise InputError(f"thresh_law: 'lengths' must be {design.days} window lengths ≥ 1 (whole days); "
                         f"got shape {w.shape}.")
    w = w.astype(np.int64)
    limit = window_limit(design, int(w.max()))
    ell, days = design.epoch, design.days
    epochs = days // ell
    counts = local_count_law(pi, ell)
    coll = _Collections(design, pi.reshape(epochs, ell).mean(axis=1), n)
    two_w = w * (2 * design.estimate_cut(n, tested, rate) - 1)            # 2·w_t·(t_c − ½), an integer
    cut = design.vote_cut(n)
    shown = np.arange(1, epochs + 1) * ell - 1                             # epoch j's collection, from its last day
    shown[0] = 0
    first, alarm = np.zeros(days), np.zeros(days)
    collects = np.zeros(epochs)
    collects[0] = 1.0
    moment = np.zeros((2, days))
    tally = {"paths": 0, "unresolved": 0.0}

    def segment(c: int, prev, begin: int, end: int, weight: float, prob: float):
        """Collection c shown on days [begin, end) after the previous one ``prev`` = (its counts, their pmf,
        their joint mass with no alarm so far): adds its alarms, first alarms and moments; returns its own."""
        prev_x, prev_pmf, prev_h = prev
        x, pmf, cdf, lost = coll.law(c)

        def below(k):                                                      # P[X ≤ k], k per previous count
            return np.where(k < x[0], 0.0, cdf[np.clip(k - x[0], 0, x.size - 1)])

        def window(t):                       # (θ_t per previous count: no alarm ⇔ X ≤ θ_t; θ stays from t on)
            b = t - max(begin, t - w[t] + 1) + 1
            return (two_w[t] - 2 * (w[t] - b) * prev_x) // (2 * b), b == w[t] == w.max()

        tally["unresolved"] += prob * weight * lost
        moment[0, begin:end] += prob * weight * coll.mean[c]
        moment[1, begin:end] += prob * weight * (coll.var[c] + coll.mean[c] ** 2)
        if limit is not None:
            return prev                                                    # no alarm to follow
        for t in range(begin, end):
            theta, steady = window(t)
            alarm[t:end if steady else t + 1] += prob * weight * float(np.sum(prev_pmf * (1 - below(theta))))
            if steady:
                break
        top = np.full(prev_x.size, np.iinfo(np.int64).max)                 # least θ so far, per previous count
        survive = np.ones(prev_x.size)
        for t in range(max(begin, start), end):
            theta, steady = window(t)
            top = np.minimum(top, theta)
            now = below(top)
            first[t] += weight * float(np.sum(prev_h * (survive - now)))
            survive = now
            if steady:
                break
        order = np.argsort(top)
        tail = np.concatenate([np.cumsum(prev_h[order][::-1])[::-1], [0.0]])
        return x, pmf, weight * pmf * tail[np.searchsorted(top[order], x, side="left")]

    def follow(c: int, left: int, state, prev, begin: int, prob: float):
        """The paths from the collection of epoch c (shown from day ``begin``), ``left`` collections to go."""
        stay = 1.0
        for j in range(c + 1, epochs if left > 0 else c + 1):
            refresh, after, state = _vote(design, state, counts, j, n, cut)
            collects[j] += prob * stay * refresh
            if prob * stay * refresh >= PATH_FLOOR:
                follow(j, left - 1, after, segment(c, prev, begin, shown[j], stay * refresh, prob), shown[j],
                       prob * stay * refresh)
            else:
                tally["unresolved"] += prob * stay * refresh
            stay *= 1 - refresh
        if prob * stay >= PATH_FLOOR:
            tally["paths"] += 1
            segment(c, prev, begin, days, stay, prob)
        else:
            tally["unresolved"] += prob * stay

    state0 = np.zeros((design.votes + 1, ell + 1))
    state0[0] = counts[0]
    follow(0, design.changes, state0, (np.zeros(1, dtype=np.int64), np.ones(1), np.ones(1)), 0, 1.0)
    mean = moment[0]
    nan = np.full(days, np.nan)
    return ThreshLaw(first if limit is None else nan, alarm if limit is None else nan, mean,
                     np.maximum(moment[1] - mean ** 2, 0.0), collects, start, tally["paths"],
                     float(tally["unresolved"]), limit)
