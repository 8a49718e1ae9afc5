"""The black-box ε auditor: neighbouring inputs, an output event, many trials, a lower bound on ε.

Three entry points, one result type (:class:`AuditResult`):

* :func:`audit_mechanism` — a mechanism of this package with its :func:`~.plans.plan_for` plan; mode
  ``"sample"`` (the default) runs the real client N times per input (checks the implementation), mode
  ``"declared"`` draws the event counts from Binomial(N, P[S|·]) with the mechanism's own declared
  probabilities (checks the claimed math only, never the code; any N in microseconds);
* :func:`audit_client` — any callable ``perturb(values, rng) -> reports`` (another library's client,
  a planted bug), with events built from ``support(reports, item) -> bool`` (default: equality for 1-D
  integer reports, the item's column for 2-D 0/1 reports);
* :func:`audit_reports` — reports produced elsewhere for the two inputs.

External audits try K = 4 pre-registered events (supports x and not x′, supports x, and the same with
x, x′ swapped) and split α over them (Bonferroni), so the reported bound keeps its confidence.
FAIL when the lower bound exceeds the claimed ε (docs/math.md §7.5; Arcolezi & Gambs, PETS 2024);
INCONCLUSIVE when the trials could not have shown it even with the most extreme counts (every report of
x in S, none of x′: :func:`~.bounds.largest_lower_bound`), so a gate without evidence never passes.

With ``days`` = T, a client is a *device* ``perturb(values, keys, rng)`` called T times with the same
device keys and values, and S is the joint event "all T reports in S" (:mod:`.repeated`, docs/math.md §11).
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

from ldpsim.evaluation.audit.bounds import epsilon_lower_bound, largest_lower_bound
from ldpsim.evaluation.audit.plans import AuditPlan, plan_for
from ldpsim.mechanisms._validation import as_generator, check_int, check_real
from ldpsim.mechanisms.memo import device_keys
from ldpsim.runtime.errors import InputError

#: modes of :func:`audit_plan`: the real client, or counts drawn from the declared probabilities
MODES = ("sample", "declared")

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
    epsilon_event: float = float("nan")  #: ln((P[S|x] − δ)/P[S|x′]) claimed by the mechanism (ours only)
    target: str = ""  #: what of the mechanism was audited (:func:`~.plans.plan_targets`; ours only)
    largest_bound: float = float("inf")  #: the largest ε_lb these trials could give (:func:`largest_lower_bound`)
    days: int = 1  #: reports per device audited jointly (1: one report)
    delta: float = 0.0  #: δ of the claim (central (ε, δ) guarantees; 0: pure ε)

    @property
    def verdict(self) -> str:
        """FAIL (the bound exceeds the claim), INCONCLUSIVE (these trials could never show that), else PASS."""
        if self.epsilon_lower_bound > self.epsilon_claimed:
            return "FAIL"
        return "INCONCLUSIVE" if not self.largest_bound > self.epsilon_claimed else "PASS"

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    def as_row(self) -> dict:
        return {**asdict(self), "verdict": self.verdict}


def _check(trials, confidence) -> tuple[int, float]:
    return (check_int("audit", "trials", trials, low=1),
            check_real("audit", "confidence", confidence, 0.0, 1.0))


def _count(perturb, value, trials: int, rng, events, days: int | None = None, at_least: int = 1) -> np.ndarray:
    """Counts of every event over ``trials`` reports of ``perturb(values, rng)`` on ``value`` (chunked);
    with ``days`` = T, over ``trials`` devices of ``perturb(values, keys, rng)``, each called T times with
    the same fresh device keys, a device counting when at least ``at_least`` of its T reports are in the
    event."""
    counts = np.zeros(len(events), dtype=np.int64)
    done = 0
    while done < trials:
        m = min(CHUNK, trials - done)
        values = np.full(m, value) if not isinstance(value, str) else np.array([value] * m, object)
        if days is None:
            reports = perturb(values, rng)
            hits = [np.asarray(e(reports), dtype=bool) for e in events]
        else:
            keys = device_keys(m, rng)
            seen = [np.zeros(m, dtype=np.int64) for _ in events]
            for _ in range(days):
                reports = perturb(values, keys, rng)
                seen = [h + np.asarray(e(reports), dtype=bool) for h, e in zip(seen, events)]
            hits = [h >= at_least for h in seen]
        counts += [int(np.count_nonzero(h)) for h in hits]
        done += m
    return counts


def audit_mechanism(mech, trials: int, rng=None, mode: str = "sample", confidence: float = 0.95,
                    target: str | None = None, epsilon: float | None = None) -> AuditResult:
    """Audit one of this package's mechanisms on its plan (see module docstring for the modes).

    Parameters
    ----------
    mech : Mechanism
        Any mechanism of the registry (:func:`~.plans.plan_for`).
    trials : int ≥ 1
        Reports per input.
    rng : int, Generator or None
        Randomness of the client (sample) or of the counts (declared).
    mode : {"sample", "declared"}
        The real client, or binomial counts from the mechanism's own declared probabilities (which
        checks the math the mechanism declares, not its code).
    confidence : float in (0, 1)
        Confidence of the lower bound (each Clopper–Pearson bound at (1 − confidence)/2).
    target : str, optional
        What to audit (:func:`~.plans.plan_targets`: RAPPOR's "report" or "permanent", a personalized
        mechanism's "group<g>"); default the first.
    epsilon : float, optional
        ε of a sample-and-threshold round's (ε, δ(ε)) claim (:func:`~.plans.plan_for`).

    Returns
    -------
    AuditResult
        ``epsilon_claimed`` is the plan's claim; ``epsilon_event`` its exact ln(P[S|x]/P[S|x′]) (= the
        claim on the boundary).
    """
    plan = plan_for(mech, target, epsilon)
    return audit_plan(plan, trials, rng, mode, confidence, repr(mech), plan.client or mech.perturb)


def audit_plan(plan: AuditPlan, trials: int, rng=None, mode: str = "sample", confidence: float = 0.95,
               subject: str = "plan", perturb=None, days: int | None = None) -> AuditResult:
    """Audit a plan: in the sample mode, count its event on reports of ``perturb`` (default: the plan's
    client) — a different implementation of the same report format can be audited against the plan of
    the mechanism it claims to be (e.g. a planted bug, :mod:`.planted`). With ``days`` = T the client is
    a device client ``perturb(values, keys, rng)`` and the plan's probabilities are those of the joint
    event (:func:`.repeated.repeated_plan`); the result's mode is then ``"repeated"``.
    """
    trials, confidence = _check(trials, confidence)
    if mode not in MODES:
        raise InputError(f"The 'mode' parameter of audit must be one of {MODES}. Got {mode!r} instead.")
    rng = as_generator(rng)
    start = time.perf_counter()
    if mode == "declared":
        k_x, k_xp = (int(v) for v in rng.binomial(trials, [plan.p_x, plan.p_x_prime]))
    else:
        perturb = perturb or plan.client
        if perturb is None:
            raise InputError("audit_plan: the sample mode needs a client (perturb) for this plan.")
        k_x = int(_count(perturb, plan.x, trials, rng, [plan.event], days, plan.at_least)[0])
        k_xp = int(_count(perturb, plan.x_prime, trials, rng, [plan.event], days, plan.at_least)[0])
    alpha = 1 - confidence
    eps_lb = epsilon_lower_bound(k_x, trials, k_xp, trials, alpha, plan.delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps_event = float(np.log(max(plan.p_x - plan.delta, 0.0)) - np.log(plan.p_x_prime))
    return AuditResult(subject, float(plan.claim), eps_lb, confidence, plan.x, plan.x_prime, plan.description,
                       trials, k_x, k_xp, "repeated" if days else mode, time.perf_counter() - start,
                       eps_event, plan.target, largest_lower_bound(trials, trials, alpha, plan.delta), days or 1,
                       plan.delta)


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


def _best(subject, claimed, confidence, x, xp, events, counts_x, counts_xp, n_x, n_xp, mode, start, days=1):
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
                       time.perf_counter() - start, largest_bound=largest_lower_bound(n_x, n_xp, alpha), days=days)


def audit_client(perturb, epsilon: float, trials: int, x=0, x_prime=1, support=None, rng=None,
                 confidence: float = 0.95, subject: str | None = None, days: int | None = None) -> AuditResult:
    """Audit any client ``perturb(values, rng) -> reports`` claiming ``epsilon``-LDP on inputs x, x′.

    Parameters
    ----------
    perturb : callable
        ``perturb(values, rng) -> reports`` for an array of equal values (called in chunks of CHUNK);
        with ``days``, a device client ``perturb(values, keys, rng)`` (``keys``: one uint64 per device).
    epsilon : float in (0, inf)
        The claimed ε (with ``days``: of the device's ``days`` reports together, e.g. a memoizing
        client's ε_∞).
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
    days : int ≥ 1, optional
        Audit the ``days`` reports of one device jointly: each event becomes "at least k of its reports
        in the event" for k = 2 and k = ``days`` (eight events; docs/math.md §11).

    Returns
    -------
    AuditResult
        The event and direction with the largest lower bound.
    """
    trials, confidence = _check(trials, confidence)
    epsilon = check_real("audit", "epsilon", epsilon, 0.0, np.inf)
    days = None if days is None else check_int("audit", "days", days, low=1)
    rng = as_generator(rng)
    events = _events(x, x_prime, support or default_support)
    start = time.perf_counter()
    if days:  # k = 2 and k = T of each event: the ratio of a redrawing client compounds (docs/math.md §11.1)
        ks = sorted({min(2, days), days})
        events = [(f"at least {k} of {days} reports: {name}", test, direction)
                  for k in ks for name, test, direction in events]
        tests = [e[1] for e in events[:4]]
        c_x = np.concatenate([_count(perturb, x, trials, rng, tests, days, k) for k in ks])
        c_xp = np.concatenate([_count(perturb, x_prime, trials, rng, tests, days, k) for k in ks])
    else:
        tests = [e[1] for e in events]
        c_x = _count(perturb, x, trials, rng, tests)
        c_xp = _count(perturb, x_prime, trials, rng, tests)
    return _best(subject or getattr(perturb, "__qualname__", repr(perturb)), epsilon, confidence, x, x_prime,
                 events, c_x, c_xp, trials, trials, "repeated" if days else "sample", start, days or 1)


def audit_reports(reports_x, reports_x_prime, epsilon: float, x=0, x_prime=1, support=None,
                  confidence: float = 0.95, subject: str = "reports file") -> AuditResult:
    """Audit reports produced elsewhere: ``reports_x`` from input x, ``reports_x_prime`` from x′.

    An empty side is invalid input (:class:`~ldpsim.runtime.errors.InputError`): with no report there is
    no evidence at all, and a gate must not read "no evidence" as PASS.
    """
    confidence = check_real("audit", "confidence", confidence, 0.0, 1.0)
    epsilon = check_real("audit", "epsilon", epsilon, 0.0, np.inf)
    for name, reports in (("reports_x", reports_x), ("reports_x_prime", reports_x_prime)):
        if len(reports) == 0:
            raise InputError(f"{subject}: {name} holds 0 reports; an audit needs reports of both inputs "
                             "(with none there is no evidence, and no verdict)")
    events = _events(x, x_prime, support or default_support)
    start = time.perf_counter()
    c_x = [int(np.count_nonzero(e[1](reports_x))) for e in events]
    c_xp = [int(np.count_nonzero(e[1](reports_x_prime))) for e in events]
    n_x, n_xp = len(reports_x), len(reports_x_prime)
    return _best(subject, epsilon, confidence, x, x_prime, events, c_x, c_xp, n_x, n_xp, "reports", start)


def _import_from_cwd(module: str):
    """Import ``module`` as ``python -c`` would: the current folder is searched first (it is put on
    ``sys.path`` for this import only, unless it is there already)."""
    cwd = os.getcwd()
    on_path = {os.path.abspath(p or os.curdir) for p in sys.path}
    if cwd in on_path:
        return importlib.import_module(module)
    sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module)
    finally:
        sys.path.remove(cwd)


def load_callable(spec: str, kwargs: dict | None = None):
    """``"package.module:function"`` → the function; with ``kwargs``, the function is a factory called with
    them. The module is imported as ``python -c`` would: a module in the current folder is found."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise InputError(f"A client must be given as MODULE:FUNCTION. Got {spec!r} instead.")
    try:
        obj = _import_from_cwd(module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"cannot load {spec!r}: {exc}") from None
    if not callable(obj):
        raise InputError(f"{spec!r} is not callable")
    return obj(**kwargs) if kwargs else obj
