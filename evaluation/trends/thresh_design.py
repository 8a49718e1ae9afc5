"""THRESH: a longitudinal protocol whose ε per person grows with the changes it tracks, not the days — docs/math.md §12.7.

Time is cut into epochs of ℓ days. A device's *local count* M_j is the number of days of epoch j on
which it used the item. The server holds one released estimate and refreshes it only when the
devices vote that it is out of date:

* **vote** (every epoch j ≥ 1 while collections remain): a device whose local count moved by
  d = |M_j − M_f| since the last collection (epoch f) has the level b = min(⌊d/``gap``⌋, B), B =
  ``levels``; it votes *yes* when b ≥ 1, 2^{B − b} divides j (the dyadic schedule: the larger the
  move, the more epochs on which it may be reported; B = 1 is every epoch at d ≥ ``gap``) and it has
  yes-votes left (at most ``votes`` in the run); it sends binary randomized response at ε_vote of its
  vote. The server refreshes when the count of ones reaches c, the least count with
  P[Bin(n, q_vote) ≥ c] ≤ ``vote_level`` (an epoch where nobody votes yes refreshes with probability
  ≤ ``vote_level``, exactly).
* **collect** (epoch 0, and each refresh, at most ``changes`` + 1 times in the run): each device sends
  randomized response at ε_estimate of the bit of one of its ℓ days drawn uniformly (a bit that is 1
  with probability M_j/ℓ); the unbiased count (ones − n·q)/(p − q) estimates n·π̄_j, π̄_j the mean
  share of the epoch. After ``changes`` + 1 collections the release freezes.

The release of day t is the estimate held at the end of day t: epoch j's collection is known on the
epoch's last day (epoch 0's is shown from day 0).

**Guarantee** (§12.7): between *any* two histories of one person — whatever their number of changes —
the transcript's likelihood ratio is at most e^ε with ε = (k + 1)·ε_estimate + 2·m·ε_vote (k =
``changes``, m = ``votes``), pure (δ = 0), whatever the number of days. :func:`thresh_design` spends ε
as half on the collections and half on the votes. The assumption on k is an accuracy assumption: when
the item's share changes more often, the release lags or freezes; the privacy statement does not move.

Releases are drawn from their exact aggregate law (:meth:`ThreshDesign.run`; device by device on
given bits, e.g. changing favourites, with :meth:`ThreshDesign.simulate_devices`): devices are
exchangeable given the server's decisions, so the fleet is a count per state (yes-votes used, local
count at the last collection), split each epoch by a multinomial over the new local count (the
epoch's days are independent Bernoulli draws, so M_j is Poisson-binomial, exact), and votes and bits
are sums of Bernoulli reports, i.e. binomials.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ldpsim.evaluation.trends.designs import DesignGuarantee, rr_pair
from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.discovery.false_discoveries import count_threshold, expected_false
from ldpsim.runtime.errors import InputError

#: default P[a refresh] in an epoch where nobody votes yes
VOTE_LEVEL = 1e-3


def thresh_epsilon(changes: int, epsilon_estimate: float, epsilon_vote: float, votes: int) -> float:
    """ε per person over the whole run, any behaviour: (k + 1)·ε_estimate + 2·m·ε_vote (docs/math.md §12.7)."""
    return (changes + 1) * epsilon_estimate + 2 * votes * epsilon_vote


def local_count_law(shares, epoch: int) -> np.ndarray:
    """P[M_j = m], shape (J, ℓ + 1): the Poisson-binomial law of a device's count in each epoch."""
    pi = np.asarray(shares, dtype=float).reshape(-1, epoch)
    law = np.zeros((pi.shape[0], epoch + 1))
    law[:, 0] = 1.0
    for d in range(epoch):                          # ℓ convolutions, vectorised over epochs
        p = pi[:, d:d + 1]
        law = law * (1 - p) + np.concatenate([np.zeros((pi.shape[0], 1)), law[:, :-1]], axis=1) * p
    return law


@dataclass(frozen=True, eq=False)
class ThreshDesign:
    """THRESH for one item's daily count (module docstring; docs/math.md §12.7).

    Parameters
    ----------
    epoch : int
        ℓ, days per epoch (dividing ``days``).
    days : int
    changes : int
        k: the collections after the first (the share changes the release can follow).
    votes : int
        m: yes-votes a device may send in the run.
    epsilon_estimate, epsilon_vote : float
        ε of one collected report and of one vote.
    gap : int
        A device votes yes when its local count moved by at least ``gap`` since the last collection.
    vote_level : float
        P[refresh] in an epoch where nobody votes yes.
    guarantee : DesignGuarantee
    levels : int
        B, the levels of the dyadic vote schedule (module docstring; 1: every epoch).
    """

    epoch: int
    days: int
    changes: int
    votes: int
    epsilon_estimate: float
    epsilon_vote: float
    gap: int
    vote_level: float
    guarantee: DesignGuarantee
    levels: int = 1

    placement = "local"

    @property
    def name(self) -> str:
        """``"THRESH (k = <changes>)"``, with ``", <B> levels"`` for a dyadic schedule."""
        return f"THRESH (k = {self.changes})" if self.levels == 1 else f"THRESH (k = {self.changes}, {self.levels} levels)"

    def vote_allowed(self, epoch: int, moved) -> np.ndarray:
        """Whether a device whose local count moved by ``moved`` since the last collection votes yes at
        ``epoch`` when it has yes-votes left: level b = min(⌊moved/gap⌋, B) ≥ 1 and 2^{B − b} divides the epoch."""
        level = np.minimum(np.asarray(moved) // self.gap, self.levels)
        return (level >= 1) & (epoch % 2 ** (self.levels - np.maximum(level, 1)) == 0)

    def yes_cells(self, epoch: int) -> np.ndarray:
        """Which devices vote yes at ``epoch``, by state: a boolean (m + 1, ℓ + 1, ℓ + 1) over (yes-votes used u,
        local count at the last collection f, local count now): :meth:`vote_allowed` for |now − f| and u < m."""
        level = np.arange(self.epoch + 1)
        budget = (np.arange(self.votes + 1) < self.votes)[:, None, None]
        return self.vote_allowed(epoch, np.abs(level[:, None] - level[None, :]))[None, :, :] & budget

    @property
    def collections(self) -> int:
        """k + 1, the most collections in the run."""
        return self.changes + 1

    def vote_cut(self, n: int) -> int:
        """c: the least count of ones with P[Bin(n, q_vote) ≥ c] ≤ ``vote_level`` (exact)."""
        return count_threshold(n, rr_pair(self.epsilon_vote)[1], 1, self.vote_level)

    def estimate(self, ones, n: int):
        """Unbiased count (ones − n·q)/(p − q) of one collection."""
        p, q = rr_pair(self.epsilon_estimate)
        return (np.asarray(ones, dtype=float) - n * q) / (p - q)

    def collection_moments(self, share: float, n: int) -> tuple[float, float]:
        """Mean n·π̄ and variance n·μ(1 − μ)/(p − q)², μ = π̄p + (1 − π̄)q, of a collection not selected by a vote
        (epoch 0's): each device's sent bit is exactly Bernoulli(π̄) and independent of the others (§12.7)."""
        p, q = rr_pair(self.epsilon_estimate)
        mu = share * p + (1 - share) * q
        return n * share, n * mu * (1 - mu) / (p - q) ** 2

    def refresh_probability(self, share: float, n: int) -> float:
        """P[refresh at epoch 1] when epochs 0 and 1 have the same share π̄ (no change), exact (§12.7).

        A device votes yes when :meth:`vote_allowed` at epoch 1 for |M₁ − M₀| (≥ B·gap: 2^{B − b} divides 1
        only at b = B), M₀, M₁ independent Bin(ℓ, π̄) — probability y; the ones are Bin(n, y·p_v + (1 − y)·q_v).
        """
        law = local_count_law(np.full(2 * self.epoch, share), self.epoch)[0]
        m = np.arange(self.epoch + 1)
        y = float(np.sum(np.outer(law, law)[self.vote_allowed(1, np.abs(m[:, None] - m[None, :]))]))
        p, q = rr_pair(self.epsilon_vote)
        return float(expected_false(n, y * p + (1 - y) * q, 1, self.vote_cut(n)))

    def window_moments(self, shares, n: int, window: int) -> tuple[np.ndarray, np.ndarray]:
        """Closed form only for one day of an unused item: every collection is then exactly
        (Bin(n, q) − n·q)/(p − q) whichever epochs the votes chose, so a day's release has mean 0 and
        variance n·q(1 − q)/(p − q)². Otherwise the collection epochs are random (chosen by the votes)
        and there is none — NaN, not a wrong number (§12.7); the delay and the daily moments are computed
        over the refresh paths instead (:func:`~ldpsim.evaluation.trends.thresh_delay.thresh_law`, §12.13)."""
        pi = np.asarray(shares, dtype=float)
        if window == 1 and not np.any(pi):
            return np.zeros(pi.size), np.full(pi.size, self.collection_moments(0.0, n)[1])
        nan = np.full(pi.size, np.nan)
        return nan, nan

    def estimate_cut(self, n: int, tested: int, rate: float) -> int:
        """The least count of ones t with (k + 1)·tested·P[Bin(n, q) ≥ t] ≤ rate."""
        return count_threshold(n, rr_pair(self.epsilon_estimate)[1], self.collections * tested, rate)

    def null_thresholds(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """τ_t = w_t·x̂(t − ½): a window sum of held estimates exceeds τ only if one of the ≤ k + 1 collected
        estimates does, each exactly (Bin(n, q) − n·q)/(p − q) for an unused item (§12.7)."""
        w = np.asarray(lengths, dtype=float)
        return w * self.estimate(self.estimate_cut(n, tested, rate) - 0.5, n)

    def null_alarm_probability(self, n: int, lengths, tested: int, rate: float) -> np.ndarray:
        """An upper bound on each day's false-alarm probability: (k + 1)·P[Bin(n, q) ≥ t] (≤ rate/tested)."""
        t = self.estimate_cut(n, tested, rate)
        q = rr_pair(self.epsilon_estimate)[1]
        return np.full(len(lengths), expected_false(n, q, self.collections, t))

    def alarm_bound(self, shares, n: int, tested: int, rate: float) -> np.ndarray:
        """An upper bound on P[an alarm on or before day t] for an item of daily shares π, shape (T,) (§12.7).

        An alarm on day t needs a collection shown by day t with ones ≥ t_c (:meth:`null_thresholds`).
        Whether or not epoch j collects, its would-be collection sends ones ~ Bin(n, π̄_j·p_e + (1 − π̄_j)·q_e)
        exactly (each device's sent bit is Bernoulli(π̄_j), independently), so by the union bound the
        probability is at most Σ over the epochs shown by day t of P[Bin(n, ·) ≥ t_c], capped at 1:
        a closed-form lower bound on the detection delay, exact in each term.
        """
        pi = np.asarray(shares, dtype=float)
        if pi.shape != (self.days,) or not np.all((pi >= 0) & (pi <= 1)):
            raise InputError(f"ThreshDesign.alarm_bound: 'shares' must be {self.days} daily shares in [0, 1]; "
                             f"got shape {pi.shape}.")
        pe, qe = rr_pair(self.epsilon_estimate)
        mean = pi.reshape(-1, self.epoch).mean(axis=1)
        tail = stats.binom.sf(self.estimate_cut(n, tested, rate) - 1, n, mean * pe + (1 - mean) * qe)
        shown = np.arange(1, mean.size + 1) * self.epoch - 1           # epoch j's collection, from its last day
        shown[0] = 0                                                    # epoch 0's from day 0
        per_day = np.zeros(self.days)
        np.add.at(per_day, shown, tail)
        return np.minimum(np.cumsum(per_day), 1.0)

    def sample(self, shares, n: int, replicates: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(true daily counts, released daily estimates), each (replicates, T), from their exact aggregate law.

        The true count of day t is Bin(n, π_t), drawn independently of the release (which depends on the
        devices only through their local counts): the tracking error then carries n·π_t(1 − π_t) more
        variance than against the joint draw.
        """
        gen = as_generator(rng)
        daily = self.release(shares, n, replicates, gen)
        pi = np.asarray(shares, dtype=float)
        counts = gen.binomial(n, np.broadcast_to(pi, (replicates, self.days))).astype(float)
        return counts, daily

    def release(self, shares, n: int, replicates: int, rng=None) -> np.ndarray:
        """Released daily estimates (replicates, T) of the protocol, from its exact aggregate law (module docstring)."""
        return self.run(shares, n, replicates, rng)[0]

    def run(self, shares, n: int, replicates: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """(released daily estimates (replicates, T), which epochs collected (replicates, J)), exact law.

        Raises InputError unless ``shares`` is T shares in [0, 1].
        """
        pi = np.asarray(shares, dtype=float)
        if pi.shape != (self.days,) or not np.all((pi >= 0) & (pi <= 1)):
            raise InputError(f"ThreshDesign.run: 'shares' must be {self.days} daily shares in [0, 1]; "
                             f"got shape {pi.shape}.")
        gen = as_generator(rng)
        law = local_count_law(pi, self.epoch)                          # (J, ℓ + 1)
        ell, m_votes = self.epoch, self.votes
        level = np.arange(ell + 1)
        pv, qv = rr_pair(self.epsilon_vote)
        pe, qe = rr_pair(self.epsilon_estimate)
        cut = self.vote_cut(n)
        state = np.zeros((replicates, m_votes + 1, ell + 1), dtype=np.int64)   # devices per (u, f)
        held = np.zeros(replicates)
        left = np.full(replicates, self.collections)
        released = np.empty((replicates, law.shape[0]))
        collected = np.zeros((replicates, law.shape[0]), dtype=bool)
        collected[:, 0] = True

        def collect(split):                                            # split: devices per (…, m)
            bits = gen.binomial(split, level / ell).sum(axis=tuple(range(1, split.ndim)))
            ones = gen.binomial(bits, pe) + gen.binomial(n - bits, qe)
            return self.estimate(ones, n)

        for j in range(law.shape[0]):
            if j == 0:
                split0 = gen.multinomial(n, law[0], size=replicates)   # (R, ℓ + 1)
                held = collect(split0)
                state[:, 0, :] = split0
                left -= 1
            else:
                split = gen.multinomial(state, law[j])                  # (R, u, f, m)
                voters = np.where(self.yes_cells(j), split, 0)
                n_yes = voters.sum(axis=(1, 2, 3))
                ones = gen.binomial(n_yes, pv) + gen.binomial(n - n_yes, qv)
                refresh = (ones >= cut) & (left > 0)
                active = left > 0                                      # votes are sent while collections remain
                used = np.zeros_like(split)                            # devices moved to u + 1 by a yes
                used[:, 1:] = voters[:, :-1]
                stay = split - voters + used                           # (R, u, f, m) after the vote
                fresh = collect(split)
                held = np.where(refresh, fresh, held)
                left = left - refresh
                collected[:, j] = refresh
                new_state = np.where(refresh[:, None, None], stay.sum(axis=2), stay.sum(axis=3))
                state = np.where(active[:, None, None], new_state, state)
            released[:, j] = held
        return self._daily(released), collected

    def _daily(self, released: np.ndarray) -> np.ndarray:
        """Day t shows the estimate held at its end: epoch j's on its last day, epoch j − 1's before (epoch 0's from day 0)."""
        ell = self.epoch
        daily = np.repeat(np.concatenate([released[:, :1], released[:, :-1]], axis=1), ell, axis=1)
        daily[:, ell - 1::ell] = released
        return daily

    def simulate_devices(self, bits, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """The protocol run device by device on given daily bits (vectorised over devices), one run.

        For data that are not independent daily draws — e.g. "today's favourite is the item" from
        :func:`~ldpsim.evaluation.workloads.trends.changing_favourites` — and as an independent check of
        :meth:`run`'s aggregate law. The devices' side is :meth:`device_start` and :meth:`device_step` (the
        same rounds a fleet in blocks runs, summing the blocks' ones); this method is the server.

        Parameters
        ----------
        bits : array_like of bool, shape (n, T)
        rng : None, int, SeedSequence or Generator

        Returns
        -------
        (ndarray (1, T), ndarray of bool (1, J))
            The released daily estimates and which epochs collected.
        """
        b = np.asarray(bits)
        if b.ndim != 2 or b.shape[1] != self.days or not np.isin(b, (0, 1)).all():
            raise InputError(f"ThreshDesign.simulate_devices: 'bits' must be 0/1 of shape (devices, {self.days}); "
                             f"got shape {b.shape}.")
        gen = as_generator(rng)
        state, first = self.device_start(b.astype(bool), gen)
        box = [state]

        def step(j, refreshed):
            box[0], ones = self.device_step(box[0], j, refreshed, gen)
            return ones
        return self.serve(b.shape[0], first, step)

    def serve(self, n: int, first_ones: int, step) -> tuple[np.ndarray, np.ndarray]:
        """The server's side over the run: epoch 0's collection from ``first_ones``, then each epoch's vote
        while collections remain — ``step(j, refreshed)`` returns the fleet's (vote ones, collection ones) of
        epoch j, ``refreshed`` saying whether epoch j − 1 collected. Returns (released (1, T), collected (1, J))."""
        epochs = self.days // self.epoch
        cut = self.vote_cut(n)
        released = np.empty(epochs)
        collected = np.zeros(epochs, dtype=bool)
        held, left, refreshed = self.estimate(first_ones, n), self.collections - 1, True
        released[0], collected[0] = held, True
        for j in range(1, epochs):
            if left > 0:
                votes, ones = step(j, refreshed)
                refreshed = votes >= cut
                if refreshed:
                    held, left, collected[j] = self.estimate(ones, n), left - 1, True
            released[j] = held
        return self._daily(released[None, :]), collected[None, :]

    def device_start(self, bits, rng) -> tuple[tuple, int]:
        """Epoch 0 on a block of devices: (their state, the ones of their collected reports).

        The state is (bits, local counts M_j (n, J), local count at the last collection, yes-votes used).
        """
        counts = bits.reshape(bits.shape[0], -1, self.epoch).sum(axis=2, dtype=np.int16)
        state = (bits, counts, counts[:, 0], np.zeros(bits.shape[0], dtype=np.int16))
        return state, self._collect_ones(bits, 0, rng)

    def device_step(self, state, j: int, refreshed: bool, rng) -> tuple[tuple, tuple[int, int]]:
        """Epoch j ≥ 1 on a block of devices: (their new state, (ones of their votes, ones of the reports they
        would send if the epoch collects)). ``refreshed``: epoch j − 1 collected (the devices' last count moves)."""
        bits, counts, last, used = state
        last = counts[:, j - 1] if refreshed else last
        yes = self.vote_allowed(j, np.abs(counts[:, j] - last)) & (used < self.votes)
        pv, qv = rr_pair(self.epsilon_vote)
        votes = int((rng.random(yes.size) < np.where(yes, pv, qv)).sum())
        return (bits, counts, last, used + yes), (votes, self._collect_ones(bits, j, rng))

    def _collect_ones(self, bits, j: int, rng) -> int:
        """Ones of a collection in epoch j: RR at ε_estimate of the bit of a uniformly drawn day of the epoch."""
        pe, qe = rr_pair(self.epsilon_estimate)
        n = bits.shape[0]
        sent = bits[np.arange(n), j * self.epoch + rng.integers(self.epoch, size=n)]
        return int((rng.random(n) < np.where(sent, pe, qe)).sum())


def default_epoch(days: int) -> int:
    """The longest epoch of at most a week that divides ``days`` (6 for 90 days)."""
    return max(e for e in range(1, 8) if days % e == 0)


def thresh_design(epsilon: float, days: int, changes: int = 3, epoch: int | None = None, gap: int = 1,
                  vote_level: float = VOTE_LEVEL, votes: int | None = None, levels: int = 1) -> ThreshDesign:
    """THRESH at pure ε per person over ``days``, any behaviour (module docstring; docs/math.md §12.7).

    ε/2 is spread over the k + 1 collections (ε_estimate = ε/(2(k + 1))) and ε/2 over m yes-votes,
    each costing 2·ε_vote between two histories (ε_vote = ε/(4m)). ``epoch`` defaults to
    :func:`default_epoch`, ``votes`` (m) to k + 1; ``levels`` (B, with B·gap ≤ ℓ) sets the dyadic vote
    schedule, which the guarantee does not depend on.
    """
    epsilon = check_real("thresh_design", "epsilon", epsilon, 0.0)
    days = check_int("thresh_design", "days", days, low=1)
    changes = check_int("thresh_design", "changes", changes, low=0)
    epoch = check_int("thresh_design", "epoch", default_epoch(days) if epoch is None else epoch, low=1, high=days)
    gap = check_int("thresh_design", "gap", gap, low=1, high=epoch)
    levels = check_int("thresh_design", "levels", levels, low=1, high=epoch // gap)
    vote_level = check_real("thresh_design", "vote_level", vote_level, 0.0, 1.0)
    if days % epoch:
        raise InputError(f"thresh_design: the 'epoch' must divide the {days} days; got {epoch}.")
    votes = changes + 1 if votes is None else check_int("thresh_design", "votes", votes, low=1)
    e_est, e_vote = epsilon / (2 * (changes + 1)), epsilon / (4 * votes)
    spent = thresh_epsilon(changes, e_est, e_vote, votes)
    meaning = (f"pure ε-LDP per person over the {days}-day run, any behaviour (δ = 0); accurate while the "
               f"item's share changes at most {changes} times (≤ {changes + 1} collections, ≤ {votes} yes-votes a device)")
    return ThreshDesign(epoch, days, changes, votes, e_est, e_vote, gap, vote_level,
                        DesignGuarantee(spent, 0.0, meaning, spent), levels)
