"""The black-box ε auditor: neighbouring inputs, an output event, many trials, a lower bound on ε.

Three entry points, one result type (:class:`AuditResult`):

* :func:`audit_mechanism` — a mechanism of this package with its :func:`~.plans.plan_for` plan; mode
  ``"exact"`` draws the event counts from Binomial(N, P[S|·]) with the mechanism's own probabilities
  (checks the claimed math; any N in microseconds), mode ``"sample"`` runs the real client N times per
  input (checks the implementation);
* :func:`audit_client` — any callable ``perturb(values, rng) -> reports`` (another library's client,
  a planted bug), with events built from ``support(reports, item) -> bool`` (default: equality for 1-D
  integer reports, the item's column for 2-D 0/1 reports);
* :func:`audit_reports` — reports produced elsewhere for the two inputs.

External audits try K = 4 pre-registered events (supports x and not x′, supports x, and the same with
x, x′ swapped) and split α over them (Bonferroni), so the reported bound keeps its confidence.
FAIL when the lower bound exceeds the claimed ε (docs/math.md §7.5; Arcolezi & Gambs, PETS 2024).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import asdict, dataclass

import numpy as np

from ldpsim.evaluation.audit.bounds import epsilon_lower_bound
from ldpsim.evaluation.audit.plans import AuditPlan, plan_for
from ldpsim.mechanisms._validation import as_generator, check_int, check_real

#: trials per client call in the sample modes (bounds memory; OUE rows of D bits each)
CHUNK = 1 << 18


@dataclass(frozen=True)
class AuditResult:
    """One audit: the claim, the bound, the evidence and the verdict."""

    subject: str
    epsilon_claimed: float
    epsilon_lower_bound: float
    confidence: float
    x: object
    x_prime: object
    event: str
    trials: int
    count_x: int
    count_x_prime: int
    mode: str
    seconds: float
    epsilon_event: float = float("nan")  #: ln(P[S|x]/P[S|x′]) claimed by the mechanism (ours only)
    target: str = ""  #: what of the mechanism was audited (:func:`~.plans.plan_targets`; ours only)

    @property
    def passed(self) -> bool:
        return not self.epsilon_lower_bound > self.epsilon_claimed

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def as_row(self) -> dict:
        return {**asdict(self), "verdict": self.verdict}


def _check(trials, confidence) -> tuple[int, float]:
    return (check_int("audit", "trials", trials, low=1),
            check_real("audit", "confidence", confidence, 0.0, 1.0))


def _count(perturb, value, trials: int, rng, events) -> np.ndarray:
    """Counts of every event over ``trials`` reports of ``perturb`` on ``value`` (chunked)."""
    counts = np.zeros(len(events), dtype=np.int64)
    done = 0
    while done < trials:
        m = min(CHUNK, trials - done)
        reports = perturb(np.full(m, value) if not isinstance(value, str) else np.array([value] * m, object), rng)
        counts += [int(np.count_nonzero(e(reports))) for e in events]
        done += m
    return counts


def audit_mechanism(mech, trials: int, rng=None, mode: str = "exact", confidence: float = 0.95,
                    target: str | None = None) -> AuditResult:
    """Audit one of this package's mechanisms on its plan (see module docstring for the modes).

    Parameters
    ----------
    mech : Mechanism
        Any mechanism of the registry (:func:`~.plans.plan_for`).
    trials : int ≥ 1
        Reports per input.
    rng : int, Generator or None
        Randomness of the counts (exact) or of the client (sample).
    mode : {"exact", "sample"}
        Binomial counts from the mechanism's own probabilities, or the real client.
    confidence : float in (0, 1)
        Confidence of the lower bound (each Clopper–Pearson bound at (1 − confidence)/2).
    target : str, optional
        What to audit (:func:`~.plans.plan_targets`: RAPPOR's "report" or "permanent", a personalized
        mechanism's "group<g>"); default the first.

    Returns
    -------
    AuditResult
        ``epsilon_claimed`` is the plan's claim; ``epsilon_event`` its exact ln(P[S|x]/P[S|x′]) (= the
        claim on the boundary).
    """
    plan = plan_for(mech, target)
    return audit_plan(plan, trials, rng, mode, confidence, repr(mech), plan.client or mech.perturb)


def audit_plan(plan: AuditPlan, trials: int, rng=None, mode: str = "exact", confidence: float = 0.95,
               subject: str = "plan", perturb=None) -> AuditResult:
    """Audit a plan: in the sample mode, count its event on reports of ``perturb`` (default: the plan's
    client) — a different implementation of the same report format can be audited against the plan of
    the mechanism it claims to be (e.g. a planted bug, :mod:`.planted`).
    """
    trials, confidence = _check(trials, confidence)
    if mode not in ("exact", "sample"):
        raise ValueError(f"The 'mode' parameter of audit must be one of ('exact', 'sample'). Got {mode!r} instead.")
    rng = as_generator(rng)
    start = time.perf_counter()
    if mode == "exact":
        k_x, k_xp = (int(v) for v in rng.binomial(trials, [plan.p_x, plan.p_x_prime]))
    else:
        perturb = perturb or plan.client
        if perturb is None:
            raise ValueError("audit_plan: the sample mode needs a client (perturb) for this plan.")
        k_x = int(_count(perturb, plan.x, trials, rng, [plan.event])[0])
        k_xp = int(_count(perturb, plan.x_prime, trials, rng, [plan.event])[0])
    eps_lb = epsilon_lower_bound(k_x, trials, k_xp, trials, 1 - confidence)
    return AuditResult(subject, float(plan.claim), eps_lb, confidence, plan.x, plan.x_prime, plan.description,
                       trials, k_x, k_xp, mode, time.perf_counter() - start,
                       float(np.log(plan.p_x) - np.log(plan.p_x_prime)), plan.target)


def default_support(reports, item) -> np.ndarray:
    """Does each report support ``item``? 1-D integer reports: equality; 2-D 0/1 reports: column ``item``."""
    r = reports if isinstance(reports, np.ndarray) else None
    if r is not None and r.ndim == 1 and np.issubdtype(r.dtype, np.integer):
        return r == item
    if r is not None and r.ndim == 2 and (np.issubdtype(r.dtype, np.integer) or r.dtype == bool):
        return r[:, int(item)] != 0
    raise TypeError(f"Cannot tell which item a report of type {type(reports).__name__} supports: "
                    f"pass a support(reports, item) -> bool array function (--support MODULE:FUNC).")


def _events(x, x_prime, support):
    def sx(r):
        return np.asarray(support(r, x), dtype=bool)

    def sxp(r):
        return np.asarray(support(r, x_prime), dtype=bool)
    # (name, test, direction): direction +1 bounds P[S|x]/P[S|x'], −1 the reverse
    return [(f"supports {x!r} and not {x_prime!r}", lambda r: sx(r) & ~sxp(r), 1),
            (f"supports {x!r}", sx, 1),
            (f"supports {x_prime!r} and not {x!r}", lambda r: sxp(r) & ~sx(r), -1),
            (f"supports {x_prime!r}", sxp, -1)]


def _best(subject, claimed, confidence, x, xp, events, counts_x, counts_xp, n_x, n_xp, mode, start):
    alpha = (1 - confidence) / len(events)  # Bonferroni over the pre-registered events
    best = None
    for (name, _, direction), kx, kxp in zip(events, counts_x, counts_xp):
        if direction > 0:
            lb, pair, k = epsilon_lower_bound(kx, n_x, kxp, n_xp, alpha), (x, xp), (kx, kxp)
        else:
            lb, pair, k = epsilon_lower_bound(kxp, n_xp, kx, n_x, alpha), (xp, x), (kxp, kx)
        if best is None or lb > best[0]:
            best = (lb, pair, name, k)
    lb, (a, b), name, (ka, kb) = best
    return AuditResult(subject, claimed, lb, confidence, a, b, name, min(n_x, n_xp), int(ka), int(kb), mode,
                       time.perf_counter() - start)


def audit_client(perturb, epsilon: float, trials: int, x=0, x_prime=1, support=None, rng=None,
                 confidence: float = 0.95, subject: str | None = None) -> AuditResult:
    """Audit any client ``perturb(values, rng) -> reports`` claiming ``epsilon``-LDP on inputs x, x′.

    Parameters
    ----------
    perturb : callable
        ``perturb(values, rng) -> reports`` for an array of equal values (called in chunks of CHUNK).
    epsilon : float in (0, inf)
        The claimed ε.
    trials : int ≥ 1
        Reports per input.
    x, x_prime : hashable
        The neighbouring inputs (default 0 and 1).
    support : callable, optional
        ``support(reports, item) -> bool array``; default :func:`default_support`.
    rng : int, Generator or None
        Passed to ``perturb``.
    confidence : float in (0, 1)
        Family-wise over the four events (Bonferroni).
    subject : str, optional
        Name shown in the result.

    Returns
    -------
    AuditResult
        The event and direction with the largest lower bound.
    """
    trials, confidence = _check(trials, confidence)
    epsilon = check_real("audit", "epsilon", epsilon, 0.0, np.inf)
    rng = as_generator(rng)
    events = _events(x, x_prime, support or default_support)
    start = time.perf_counter()
    tests = [e[1] for e in events]
    c_x = _count(perturb, x, trials, rng, tests)
    c_xp = _count(perturb, x_prime, trials, rng, tests)
    return _best(subject or getattr(perturb, "__qualname__", repr(perturb)), epsilon, confidence, x, x_prime,
                 events, c_x, c_xp, trials, trials, "sample", start)


def audit_reports(reports_x, reports_x_prime, epsilon: float, x=0, x_prime=1, support=None,
                  confidence: float = 0.95, subject: str = "reports file") -> AuditResult:
    """Audit reports produced elsewhere: ``reports_x`` from input x, ``reports_x_prime`` from x′."""
    confidence = check_real("audit", "confidence", confidence, 0.0, 1.0)
    epsilon = check_real("audit", "epsilon", epsilon, 0.0, np.inf)
    events = _events(x, x_prime, support or default_support)
    start = time.perf_counter()
    c_x = [int(np.count_nonzero(e[1](reports_x))) for e in events]
    c_xp = [int(np.count_nonzero(e[1](reports_x_prime))) for e in events]
    n_x, n_xp = len(reports_x), len(reports_x_prime)
    return _best(subject, epsilon, confidence, x, x_prime, events, c_x, c_xp, n_x, n_xp, "reports", start)


def load_callable(spec: str, kwargs: dict | None = None):
    """``"package.module:function"`` → the function; with ``kwargs``, the function is a factory called with them."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"A client must be given as MODULE:FUNCTION. Got {spec!r} instead.")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj(**kwargs) if kwargs else obj
