"""The Bayesian adversary against sketch and unary/hash oracles (CMS, HCMS, OUE, OLH) — docs/math.md §3.

For these oracles the likelihood of a report given a candidate item d takes only two values: the
report either *supports* d or not, and P[report | supported d] / P[report | unsupported d] = e^λ:

* CMS (docs/math.md §3): (ṽ, j) supports d iff ṽ[h_j(d)] = +1 (only that coordinate differs between
  candidates); λ = 2·log((1−f)/f) = ε, f = 1/(1+e^{ε/2}).
* HCMS: (w̃, j, l) supports d iff w̃ = H_m[l, h_j(d)]; λ = log((1−f')/f') = ε, f' = 1/(1+e^ε).
* OUE: the bit vector B supports d iff B_d = 1; λ = log(p(1−q)/((1−p)q)) = ε.
* OLH: (s, y) supports d iff H_s(d) = y; λ = log(p/q) = ε.

So the MAP guess is argmax_d log π(d) + λ·𝟙[report supports d] over the candidate items, ties
uniformly at random: with a uniform prior, a uniformly random supported item (any item if none is).
Computed for a block of users × all candidates at once (memory bounded by ``_CELLS``).
"""

from __future__ import annotations

import math

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_item_ids
from ldpsim.mechanisms.sketches.cms import CMS
from ldpsim.mechanisms.sketches.hcms import HCMS, hadamard_sign
from ldpsim.mechanisms.frequency.olh import OLH
from ldpsim.mechanisms.frequency.oue import OUE

from ldpsim.evaluation.adversary.bayes import TIE_RTOL, binomial_rate, normalized_prior

_CELLS = 4_000_000  # users × candidates per block


def _tokens(items) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items.tolist() if isinstance(items, np.ndarray) else items)
    return arr


def support(mechanism, reports, items) -> tuple[np.ndarray, float]:
    """(S, λ): S[u, d] True when report u supports candidate ``items[d]``; λ the log-likelihood gap."""
    if isinstance(mechanism, CMS):
        bits, row = reports
        pos = mechanism.family.evaluate(np.asarray(row)[:, None], mechanism.family.keys(_tokens(items))[None, :])
        byte = np.take_along_axis(np.asarray(bits), pos >> 3, axis=1)
        s = ((byte >> (7 - (pos & 7)).astype(np.uint8)) & 1).astype(bool)
        return s, 2 * math.log((1 - mechanism.flip) / mechanism.flip)
    if isinstance(mechanism, HCMS):
        bit, row, col = (np.asarray(r) for r in reports)
        pos = mechanism.family.evaluate(row[:, None], mechanism.family.keys(_tokens(items))[None, :])
        s = (hadamard_sign(col[:, None], pos) > 0) == (bit[:, None] == 1)
        return s, math.log((1 - mechanism.flip) / mechanism.flip)
    if isinstance(mechanism, OUE):
        ids = check_item_ids("support", items, mechanism.domain_size, "items")
        s = np.unpackbits(np.asarray(reports), axis=1, count=mechanism.domain_size)[:, ids].astype(bool)
        p, q = mechanism.p, mechanism.q
        return s, math.log(p * (1 - q) / ((1 - p) * q))
    if isinstance(mechanism, OLH):
        seed, y = (np.asarray(r) for r in reports)
        ids = check_item_ids("support", items, mechanism.domain_size, "items")
        s = mechanism.hash_items(seed[:, None], ids[None, :]).astype(np.int64) == y[:, None]
        return s, math.log(mechanism.p / mechanism.q)
    raise TypeError(f"No support rule for {type(mechanism).__name__} reports; "
                    "supported: CMS, HCMS, OUE, OLH (discrete oracles: ldpsim.evaluation.adversary.bayes).")


def _n_reports(reports) -> int:
    first = reports[0] if isinstance(reports, tuple) else reports
    return int(np.shape(first)[0])


def _block(reports, sl: slice):
    if isinstance(reports, tuple):
        return type(reports)(*(np.asarray(r)[sl] for r in reports))
    return np.asarray(reports)[sl]


def sketch_guesses(mechanism, reports, items, prior=None, rng=None) -> np.ndarray:
    """The MAP guess (a position in ``items``) for every report; ties broken per report."""
    rng = as_generator(rng)
    pi = normalized_prior(prior, len(items), "prior")
    log_pi = np.log(pi, out=np.full(pi.size, -np.inf), where=pi > 0)
    n = _n_reports(reports)
    step = max(1, _CELLS // max(len(items), 1))
    out = np.empty(n, dtype=np.int64)
    for s in range(0, n, step):
        sup, lam = support(mechanism, _block(reports, slice(s, s + step)), items)
        score = log_pi[None, :] + lam * sup
        best = score.max(axis=1, keepdims=True)
        tied = score >= best - TIE_RTOL * np.abs(best)
        out[s:s + step] = np.where(tied, rng.random(tied.shape), -1.0).argmax(axis=1)
    return out


def empirical_sketch_accuracy(mechanism, values, reports, items, prior=None, rng=None) -> dict:
    """Share of users whose item is guessed (``values`` are positions in ``items``), with its se."""
    x = check_item_ids("empirical_sketch_accuracy", values, len(items))
    guess = sketch_guesses(mechanism, reports, items, prior, rng)
    if guess.size != x.size:
        raise ValueError(f"empirical_sketch_accuracy: 'values' and 'reports' differ in length "
                         f"({x.size} vs {guess.size}).")
    acc, se = binomial_rate(guess == x)
    return {"n": int(x.size), "overall": acc, "overall_se": se}
