"""Optimized unary encoding (OUE) — Wang et al., USENIX Security 2017 ("Unary Encoding" section).

Formulas and the exact variance: docs/math.md §7.1 (unary encoding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms._validation import check_domain_size, check_epsilon, check_item_ids
from ldpsim.mechanisms.frequency.unary import UnaryEncoding
from ldpsim.mechanisms.memo import check_keys, keyed_bits


@dataclass(frozen=True)
class OUE(UnaryEncoding):
    """Optimized unary encoding over item ids ``0 … D−1`` (Wang, Blocki, Li, Jha 2017, OUE).

    Math: docs/math.md §7.1 (unary encoding).

    Client: one-hot encode x into D bits; keep the true bit as 1 w.p. p = 1/2; set every other bit
    to 1 w.p. q = 1/(e^ε+1), all bits independently.
    Privacy: ε-LDP. For neighbours x ≠ x' the likelihood ratio of a whole report is
    P[B|x]/P[B|x'] ≤ p(1−q) / (q(1−p)) = e^ε, with equality when B_x = 1 and B_x' = 0.
    Server: per-bit counts of ones c (length D, mergeable by addition); unbiased count estimate
    (c_x − n·q)/(p − q). For a fixed population with true counts f_x,
    c_x = Bin(f_x, p) + Bin(n − f_x, q), so the exact variance of the count estimate is
    [f_x·p(1−p) + (n − f_x)·q(1−q)] / (p − q)² = n·q(1−q)/(p−q)² + f_x(1−p−q)/(p−q), the paper's
    pure-protocol variance; its headline n·4e^ε/(e^ε−1)² drops the f_x term.

    Client, server, theory and wire form are :class:`~ldpsim.mechanisms.frequency.unary.UnaryEncoding`'s: bit-packed
    rows (``np.packbits`` order, padding bits zero), bits drawn sixteen at a time from their exact
    product distribution (:mod:`ldpsim.mechanisms.bitsampling`, docs/math.md §1.7).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of values D ≥ 2 (one report bit per value); users hold ids 0 … D−1.

    Attributes
    ----------
    p : float
        P[bit = 1] for the user's own item, 1/2.
    q : float
        P[bit = 1] for every other item, 1/(e^ε+1).

    Examples
    --------
    >>> m = OUE(epsilon=1.0, domain_size=4)
    >>> m.bit_probabilities()
    (0.5, 0.2689414213699951)
    >>> m.perturb([2, 0], rng=1).shape, m.report_bytes
    ((2, 1), 1)
    """

    epsilon: float
    domain_size: int
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon("OUE", self.epsilon)
        d = check_domain_size("OUE", self.domain_size)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "domain_size", d)
        object.__setattr__(self, "p", 0.5)
        object.__setattr__(self, "q", 1.0 / (math.exp(eps) + 1.0))

    def perturb_keyed(self, values, keys) -> np.ndarray:
        """Memoized client: report i a deterministic function of ``keys[i]`` with the law of ``perturb``.

        Bit j of report i is 1 iff uniform j of the key's stream is below p (j the user's item) or q
        (every other item): the independent bits of docs/math.md §7.1, drawn from the keyed hash
        (§7.5, "Memoization in the ledger").

        Parameters
        ----------
        values : array_like of int, shape (n,)
            One item id in [0, D) per report.
        keys : array_like of uint64, shape (n,)
            One key per report (a memo: one per device and value).

        Returns
        -------
        numpy.ndarray of uint8, shape (n, ⌈D/8⌉)
            Bit-packed rows, as ``perturb`` returns them.
        """
        x = check_item_ids(self.name, values, self.domain_size)
        keys = check_keys(f"{self.name}.perturb_keyed", keys, x.size)
        return keyed_bits(keys, self.domain_size, self.q, own=x, p=self.p)
