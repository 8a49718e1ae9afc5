"""Symmetric unary encoding (SUE, basic one-time RAPPOR) — docs/math.md §7.1.

Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (§4.1, "Symmetric Unary Encoding"); it is RAPPOR's permanent response with
f chosen for one report (Erlingsson, Pihur, Korolova, CCS 2014).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ldpsim.mechanisms._validation import check_domain_size, check_epsilon
from ldpsim.mechanisms.frequency.unary import UnaryEncoding


@dataclass(frozen=True)
class SUE(UnaryEncoding):
    """Symmetric unary encoding over item ids ``0 .. domain_size-1`` (docs/math.md §7.1).

    Client: one-hot encode x into D bits and keep each bit w.p. p = e^{ε/2}/(e^{ε/2}+1), flip it
    w.p. q = 1/(e^{ε/2}+1) (so P[own bit = 1] = p, P[other bit = 1] = q = 1 − p).
    Privacy: ε-LDP with equality: p(1−q)/(q(1−p)) = (p/q)² = e^ε (docs/math.md §7.1).
    Server and theory: :class:`~ldpsim.mechanisms.frequency.unary.UnaryEncoding` (estimate (c_x − nq)/(p − q),
    Var = n·q(1−q)/(p−q)² + f_x(1−p−q)/(p−q) with 1 − p − q = 0 here: Var = n·e^{ε/2}/(e^{ε/2}−1)²).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, in (0, inf).
    domain_size : int
        Number of items D ≥ 2.

    Examples
    --------
    >>> m = SUE(epsilon=2.0, domain_size=4)
    >>> [round(v, 4) for v in m.bit_probabilities()], round(m.epsilon_report, 12)
    ([0.7311, 0.2689], 2.0)
    """

    epsilon: float
    domain_size: int
    p: float = field(init=False, repr=False)
    q: float = field(init=False, repr=False)

    def __post_init__(self):
        eps = check_epsilon("SUE", self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "domain_size", check_domain_size("SUE", self.domain_size))
        half = math.exp(eps / 2)
        object.__setattr__(self, "p", half / (half + 1.0))
        object.__setattr__(self, "q", 1.0 / (half + 1.0))
