"""Planted bugs for the auditor to catch: GRR and BLH whose flip probability is 10 % too small, a
device client that redraws its memoized response on every report (:func:`redrawing_client`), and two
interactive protocols with a wrong round (:class:`LowThresholdTrieHH`, :class:`DoubledEpsilonLDPTrie`,
:class:`DoubledEpsilonGboardTrie`, :class:`DoubledEpsilonPrefixTree`).

Correct GRR keeps x w.p. p = e^ε/(e^ε+D−1) and "flips" to one of the D−1 other values w.p. 1 − p.
This client flips w.p. (1 − p)·(1 − shortfall): P[x|x] = 1 − 0.9(1 − p), P[y|x] = 0.9·q, so its true ε is
ln((1 − 0.9(1 − p)) / (0.9 q)) — at ε = 1, D = 10: 1.391 instead of 1. Written from scratch (not via
:class:`~ldpsim.mechanisms.GRR`) as an outside implementation would be.

``ldpsim audit --client ldpsim.evaluation.audit.planted:buggy_grr --client-arg epsilon=1
--client-arg domain_size=10 --epsilon 1 --domain-size 10 --trials 20000``

BLH (g = 2) reports (seed, y): y = H_s(x) w.p. p = e^ε/(e^ε+1), else the other bucket. The buggy client
flips w.p. (1 − p)(1 − shortfall), so on BLH's own plan event (y = H_s(x) ≠ H_s(x′)) its ratio is
(1 − 0.9(1 − p))/(0.9(1 − p)): true ε 1.141 at a claimed 1 (GRR with D = 2). It uses BLH's public
hash (the report format is the protocol's) with its own perturbation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ldpsim.mechanisms import BLH, GRR, OUE, GboardTrie, LDPTrie, PrefixTree, TrieHH
from ldpsim.mechanisms.frequency.olh import OLHReports


def buggy_grr(epsilon: float, domain_size: int, shortfall: float = 0.1):
    """A GRR client ``perturb(values, rng)`` whose flip probability is ``shortfall`` too small."""
    e = math.exp(epsilon)
    flip = (domain_size - 1) / (e + domain_size - 1) * (1 - shortfall)

    def perturb(values, rng):
        x = np.asarray(values, dtype=np.int64)
        other = (x + rng.integers(1, domain_size, size=x.size)) % domain_size
        return np.where(rng.random(x.size) < flip, other, x)

    return perturb


def true_epsilon(epsilon: float, domain_size: int, shortfall: float = 0.1) -> float:
    """The buggy client's real ε: ln(P[x|x] / P[y|x]) with the shortened flip probability."""
    e = math.exp(epsilon)
    p, q = e / (e + domain_size - 1), 1 / (e + domain_size - 1)
    return math.log((1 - (1 - shortfall) * (1 - p)) / ((1 - shortfall) * q))


def buggy_blh(epsilon: float, domain_size: int, shortfall: float = 0.1):
    """A BLH client ``perturb(values, rng) -> OLHReports`` whose flip probability is ``shortfall`` too small."""
    hasher = BLH(epsilon, domain_size)
    flip = 1 / (math.exp(epsilon) + 1) * (1 - shortfall)

    def perturb(values, rng):
        x = np.asarray(values, dtype=np.int64)
        seed = rng.integers(0, 1 << 32, size=x.size, dtype=np.uint32)
        h = hasher.hash_items(seed, x).astype(np.int64)
        return OLHReports(seed, np.where(rng.random(x.size) < flip, 1 - h, h))

    return perturb


def redrawing_client(mech):
    """A device client ``perturb(values, keys, rng)`` of ``mech`` that forgets its key: every call draws
    a fresh one, so its "permanent" (memoized) response is redrawn on every report — the memoization bug
    the repeated audit exists for (:mod:`.repeated`; over T reports it composes to T·ε₁, not ε_∞)."""
    from ldpsim.evaluation.audit.repeated import device_client
    from ldpsim.mechanisms.memo import device_keys
    client = device_client(mech)

    def perturb(values, keys, rng):
        return client(values, device_keys(len(keys), rng), rng)
    return perturb


def memoized_grr(epsilon: float, domain_size: int):
    """The correct memoizing GRR device client ``perturb(values, keys, rng)`` (for ``ldpsim audit --client
    ... --client-arg epsilon=1 --client-arg domain_size=10 --mode repeated``)."""
    from ldpsim.evaluation.audit.repeated import device_client
    from ldpsim.mechanisms import GRR
    return device_client(GRR(epsilon, domain_size))


def redrawing_grr(epsilon: float, domain_size: int):
    """:func:`redrawing_client` of GRR(``epsilon``, ``domain_size``), built from plain arguments for the CLI."""
    from ldpsim.mechanisms import GRR
    return redrawing_client(GRR(epsilon, domain_size))


@dataclass(frozen=True)
class LowThresholdTrieHH(TrieHH):
    """TrieHH whose server keeps prefixes with θ − 1 votes (an off-by-one in ``advance``) while it claims
    the (ε, δ(ε)) of θ: caught by the "below-threshold" round audit (:mod:`.plans_interactive`)."""

    def advance(self, codes, votes, level):
        return TrieHH(self.gamma, self.theta - 1, self.length, self.alphabet).advance(codes, votes, level)


@dataclass(frozen=True)
class DoubledEpsilonLDPTrie(LDPTrie):
    """LDPTrie whose round randomizer runs GRR at 2ε (e^{2ε} where e^ε is meant) while it claims ε per round:
    caught by the local round audit (:mod:`.plans_interactive`)."""

    def oracle(self, candidates):
        return GRR(2 * self.epsilon, int(candidates.size) + 1)


@dataclass(frozen=True)
class DoubledEpsilonGboardTrie(DoubledEpsilonLDPTrie, GboardTrie):
    """GboardTrie whose devices report through GRR at 2ε₀ (after their sampler) while it claims ε₀ per round:
    caught by the local round audit (:mod:`.plans_interactive`)."""


@dataclass(frozen=True)
class DoubledEpsilonPrefixTree(PrefixTree):
    """PrefixTree whose OUE sets the other bits with q = 1/(e^{2ε} + 1) (p = ½): true ε of a round's report
    ln(p(1 − q)/(q(1 − p))) = 2ε while it claims ε: caught by the local round audit (:mod:`.plans_interactive`)."""

    def oracle(self, n_candidates):
        return OUE(2 * self.epsilon, int(n_candidates) + 1)
