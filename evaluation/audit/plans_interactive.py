"""Audit plans of one round of the interactive discovery protocols — docs/math.md §11.5.

A round of an interactive protocol is audited through its per-round interface (the one
:class:`~ldpsim.mechanisms.discovery.triehh.TrieHH` defines and every interactive protocol keeps):
``codec``, ``root()``, ``device_votes(rows, trie, level, rng) -> (codes, votes)`` (every device's own
answer, tallied as the server sees it) and ``advance(codes, votes, level) -> (trie, done, done_votes)``.
Two kinds of round, told apart by what the protocol declares:

* **local** (:func:`local_round_plan`; a protocol with ``epsilon``, ``categories``, ``oracle`` and
  ``vote``: LDPTrie, GboardTrie, PrefixTree): one device's report of the round is ε-LDP. x, x′ = the
  words of the first two symbols repeated; on the root trie their categories i ≠ j (:func:`round_one`
  reads both per-round interfaces); the round's own randomizer (``oracle``) gives the event at the
  boundary: GRR (LDPTrie, GboardTrie) S = {report = i}, P = p vs q (the keep-or-uniform plan of
  docs/math.md §7.5); OUE (PrefixTree) S = {bit i = 1 and bit j = 0}, P = p(1 − q) vs q(1 − p)
  (§7.1); both ratios are e^ε exactly. The client is the protocol's own per-device report ``vote``
  (GboardTrie's runs the device's sampler first: a device holding one word picks it).
* **sample and threshold** (:func:`threshold_round_plan`; a protocol with ``gamma``, ``theta`` and
  ``counts_released``, e.g. TrieHH, TrieHH++): the guarantee is central (ε, δ(ε)) about the round's
  release, for fleets that differ by one device (§10.2). The neighbours are the worst ones of the exact
  analysis: c = :func:`~ldpsim.mechanisms.discovery.threshold_privacy.worst_holders` other holders of
  the device's prefix, and c + 1 with it. The statistic is what the round releases about that prefix
  (its votes V if it survived, ⊥ otherwise; the set release only whether it survived), and S is the set of
  outputs where the worst direction's likelihood ratio exceeds e^ε, read off the two output laws
  written out in full, so P[S|x] − e^ε P[S|x′] = δ(ε): the plan sits on the boundary. The bound is
  ε ≥ ln((P[S|x] − δ)/P[S|x′]) (§11.5). A second target, ``"below-threshold"``
  (:func:`below_threshold_plan`), checks the threshold itself: a prefix with θ − 1 holders (the
  device and θ − 2 others) must never be released, so P[S|x] = 0 ≤ δ for a correct round, while a
  server that keeps θ − 1 votes releases it with probability γ^{θ−1} > δ(ε) once δ(ε) is near its
  floor γ^θ.

Sample mode runs the protocol's own round on many independent fleets at once: trial t's fleet holds
one distinct word w_t (|alphabet|^L of them) ``holders`` times, the trie holds every w_t's (L − 1)-prefix,
and round L is run with ``device_votes`` and ``advance`` (every survivor of round L is complete, so its
votes are released with it). Prefixes never interact in a threshold round (each device votes once, for
its own prefix), so the trials are independent.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
from scipy import stats

from ldpsim.evaluation.audit.event import AuditPlan, packed_bit
from ldpsim.mechanisms._validation import as_generator
from ldpsim.mechanisms.discovery.threshold_privacy import round_delta, worst_holders
from ldpsim.mechanisms.frequency.unary import UnaryEncoding

#: devices per call of the round in the sample mode (trials × holders), bounding memory
DEVICES_PER_CALL = 1 << 18


def is_local_round(mech) -> bool:
    """Does ``mech`` expose a locally randomized round (``epsilon``, ``categories``, ``vote``)?"""
    return all(hasattr(mech, a) for a in ("epsilon", "categories", "vote", "oracle", "root", "codec"))


def is_threshold_round(mech) -> bool:
    """Does ``mech`` expose a sample-and-threshold round (``gamma``, ``theta``, ``counts_released``,
    ``device_votes``, ``advance``)?"""
    return (not is_local_round(mech)
            and all(hasattr(mech, a) for a in ("gamma", "theta", "counts_released", "device_votes", "advance",
                                               "codec")))


def _rows(mech, words) -> np.ndarray:
    rows, inv = mech.codec.symbols(words)
    return rows[inv]


def round_one(mech, rows: np.ndarray):
    """(candidates, each row's category, the randomizer) of round 1 on the root trie, whichever per-round
    interface ``mech`` keeps: LDPTrie's ``categories(rows, trie, level) -> (candidates, cat)`` and
    ``oracle(candidates)``, or PrefixTree's ``categories(rows, trie) -> (candidates, m, cat)`` (its
    segment length m chosen by the protocol) and ``oracle(n_candidates)``."""
    trie = mech.root()
    if "level" in inspect.signature(mech.categories).parameters:
        candidates, cat = mech.categories(rows, trie, 1)
        return candidates, cat, mech.oracle(candidates)
    candidates, _, cat = mech.categories(rows, trie)
    return candidates, cat, mech.oracle(candidates.size)


def local_round_plan(mech) -> AuditPlan:
    """One device's report in the first round (module docstring), against the protocol's ε per round:
    GRR's S = {report = i}, P = p vs q; a unary encoding's (OUE) S = {bit i = 1, bit j = 0},
    P = p(1 − q) vs q(1 − p) (docs/math.md §7.1)."""
    a, b = mech.codec.alphabet[:2]
    x, x_prime = a * mech.codec.length, b * mech.codec.length
    trie = mech.root()
    rows = _rows(mech, [x, x_prime])
    _, cat, oracle = round_one(mech, rows)
    i, j = int(cat[0]), int(cat[1])
    row_of = {x: rows[0], x_prime: rows[1]}

    def client(values, rng):
        return mech.vote(np.repeat(row_of[values[0]][None, :], len(values), axis=0), trie, 1, as_generator(rng))
    p, q = float(oracle.p), float(oracle.q)
    if isinstance(oracle, UnaryEncoding):
        return AuditPlan(x, x_prime, f"round 1 report: bit {i} (x's candidate) set, bit {j} (x′'s) clear",
                         lambda r: (packed_bit(r, i) == 1) & (packed_bit(r, j) == 0), p * (1 - q), q * (1 - p),
                         claim=float(mech.epsilon), client=client)
    return AuditPlan(x, x_prime, f"round 1 report == category {i} (prefix {x[0]!r} of x)",
                     lambda r: np.asarray(r) == i, p, q, claim=float(mech.epsilon), client=client)


def round_outputs(mech, holders: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    """(outputs, their probabilities) of one round's release about a prefix with ``holders`` voters:
    −1 (⊥, not released) and, for a count release, each v in [θ, ``top``] (docs/math.md §10.2); a set
    release has the outputs −1 and θ (released)."""
    g, t = mech.gamma, mech.theta
    if not mech.counts_released:
        return np.array([-1, t]), np.array([stats.binom.cdf(t - 1, holders, g), stats.binom.sf(t - 1, holders, g)])
    v = np.arange(t, max(t, top) + 1)
    return np.concatenate([[-1], v]), np.concatenate([[stats.binom.cdf(t - 1, holders, g)],
                                                      stats.binom.pmf(v, holders, g)])


def threshold_round_plan(mech, epsilon: float) -> AuditPlan:
    """One round's release at the worst neighbouring fleets, against (ε, δ(ε)) (module docstring)."""
    counts = bool(mech.counts_released)
    delta = round_delta(epsilon, mech.gamma, mech.theta, counts)
    c = worst_holders(epsilon, mech.gamma, mech.theta, counts)
    out, p_without = round_outputs(mech, c, c + 1)
    _, p_with = round_outputs(mech, c + 1, c + 1)
    e = math.exp(epsilon)
    add, remove = p_with - e * p_without, p_without - e * p_with
    if np.clip(add, 0, None).sum() >= np.clip(remove, 0, None).sum():
        x, x_prime, chosen, p_x, p_xp = c + 1, c, add > 0, p_with, p_without
    else:
        x, x_prime, chosen, p_x, p_xp = c, c + 1, remove > 0, p_without, p_with
    S = out[chosen]
    if counts:
        shown = "V in {" + ", ".join("⊥" if s < 0 else str(s) for s in S[:6]) + (", ..." if S.size > 6 else "") + "}"
    else:
        shown = "survived" if S.tolist() == [mech.theta] else "not released"

    def event(stat):
        stat = np.asarray(stat)
        if not counts:  # the set release: only whether the prefix survived
            stat = np.where(stat >= 0, mech.theta, -1)
        return np.isin(stat, S)
    return AuditPlan(x, x_prime, f"{x} vs {x_prime} holders of the device's prefix (worst c = {c} others); "
                     f"the round's release: {shown}", event, float(p_x[chosen].sum()), float(p_xp[chosen].sum()),
                     claim=float(epsilon), client=fleet_client(mech), delta=delta)


def below_threshold_plan(mech, epsilon: float) -> AuditPlan:
    """θ − 1 vs θ − 2 holders of the device's prefix, S = the prefix is released (module docstring)."""
    t = mech.theta
    if t < 2:
        raise ValueError(f"{type(mech).__name__}: the 'below-threshold' audit needs theta >= 2 (a prefix with "
                         f"theta - 1 >= 1 holders); got theta = {t}.")
    delta = round_delta(epsilon, mech.gamma, t, bool(mech.counts_released))
    return AuditPlan(t - 1, t - 2, f"{t - 1} vs {t - 2} holders of the device's prefix; the round's release: "
                     f"survived (never, below theta = {t})", lambda stat: np.asarray(stat) >= 0, 0.0, 0.0,
                     claim=float(epsilon), client=fleet_client(mech), delta=delta)


def fleet_client(mech):
    """``perturb(holders, rng) -> statistic``: for each entry (all equal to the fleet's number of holders),
    one independent fleet run through one round of the protocol's own code (module docstring); the
    statistic is the prefix's released votes, −1 when it was not released."""
    codec = mech.codec
    k, L = len(codec.alphabet), codec.length
    weights = codec.base ** np.arange(L - 1, -1, -1, dtype=np.int64)

    def perturb(values, rng):
        rng = as_generator(rng)
        holders = int(np.asarray(values)[0])
        per_call = max(1, min(k ** L, DEVICES_PER_CALL // max(holders, 1)))
        out = np.empty(len(values), dtype=np.int64)
        for start in range(0, len(values), per_call):
            m = min(per_call, len(values) - start)
            digits = (np.arange(m)[:, None] // k ** np.arange(L - 1, -1, -1)) % k + 1   # m distinct words
            codes = digits @ weights
            rows = np.repeat(digits, holders, axis=0)
            trie = codes // codec.base                                               # their (L−1)-prefixes
            got, votes = mech.device_votes(rows, trie, L, rng)
            _, done, done_votes = mech.advance(got, votes, L)
            order = np.argsort(done)
            done, done_votes = np.append(done[order], -1), np.append(np.asarray(done_votes)[order], -1)
            pos = np.minimum(np.searchsorted(done[:-1], codes), done.size - 1)
            out[start:start + m] = np.where(done[pos] == codes, done_votes[pos], -1)
        return out
    return perturb
