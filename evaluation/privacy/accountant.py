"""The accountant: what one device spends over a run, per use case and in total, on one scale — docs/math.md §8.

Every report, plot and comparison asks this module for a composed ε; nothing else composes.

**Per use case** (one device, the worst case over devices: the guarantee every device has).
R = n_days × daily_limit reports at most. Fresh reports cost ε of one report each
(``guarantee.epsilon_report``). A memoized use case re-sends the report of a value it has already
reported: r reports of one memo class cost ``mechanism.memoized_loss(r)`` (ε of one report for
re-sent reports; RAPPOR's exact loss of r instantaneous responses to one permanent response, at
most ε_∞); a device with C memo classes (the items, dBitFlip's d + 1 responses, 1BitMean's s + 1
levels) spends at most the costliest spread of its R reports over C classes (docs/math.md §8.2).

**Several attributes.** Under ``spl`` the use cases compose; under ``smp`` and ``rsfd``
(``simulator/attributes.py``) a device-day is one report of the whole record at the policy's ε.

**Caps.** The ledger never lets a device spend more than ``budget_total``, nor more than
``budget_daily`` a day (basic composition), so the run's basic ε is at most
min(Σ, budget_total, n_days × budget_daily).

**Tighter at a δ.** The same losses composed by their privacy-loss distributions
(:func:`~ldpsim.evaluation.privacy.composition.compose`) give ε at δ, per device over the run; never
above the pure (δ = 0) basic ε. Only guarantees of one kind compose: the totals are per kind.

**Interactive rounds.** An interactive words protocol (docs/math.md §10.8) charges one day of rounds
per day a device answers (ε/D of its ε per device over the run); its PLD composes its R rounds'
(ε_r, δ_r), and its kind is the protocol's (pure ε-LDP, or central (ε, δ) after the threshold).

**Central.** With ``shuffled_among`` n, each day's report of a use case is shuffled with n − 1 others
(FMT21, :mod:`~ldpsim.evaluation.privacy.amplification`), at δ/(2·n_days) each, and the days compose
at δ.

**Numeric use cases** (``cfg.numeric``, docs/math.md §9.14). A device sends at most one report (or is in
at most one release) of each numeric use case a night: R = n_days steps at the design's (ε, δ) of one report
or release (:func:`numeric_row`). They bypass the ledger, so its caps do not bound them: a kind's total is its
ledger use cases' capped basic ε plus the numeric use cases' Σ ε (at δ = their Σ δ, ``delta_device``), and at
a δ all of the kind's steps compose together (:func:`~ldpsim.evaluation.privacy.composition.compose`).

Trust models (a shuffler, secure aggregation, two servers, trusted hardware) are accounted in
:mod:`ldpsim.evaluation.privacy.trust_accounting`, with the same shuffle step (:func:`shuffle_step`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.evaluation.privacy.composition import basic_composition, compose
from ldpsim.evaluation.privacy.person_level import SAME_PATTERN, person_level
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.deltas import DELTA_SPEND


def memo_classes(cfg, uc) -> int | None:
    """Memo classes a device can report from in a memoized use case (None when not memoized): the
    d + 1 responses of dBitFlip, 1BitMean's s + 1 levels, or the items of an event use case."""
    if not uc.memoize:
        return None
    mech = uc.make_mechanism()
    if hasattr(mech, "d"):
        return mech.d + 1
    if hasattr(mech, "granularity"):
        return mech.granularity + 1
    return len(cfg.items)


def losses(mech, reports: int, classes: int | None = None) -> dict[float, int]:
    """The worst device's losses, ε → how many times it is spent (docs/math.md §8.2).

    Parameters
    ----------
    mech : Mechanism
        The use case's mechanism (its ``guarantee`` and ``memoized_loss``).
    reports : int
        Reports a device sends at most (≥ 0).
    classes : int, optional
        Memo classes (memoized use cases only). r reports of one class cost
        ``mech.memoized_loss(r)``; the reports are spread over the classes in the costliest way
        (an exact knapsack over r = 1 … R with at most C classes).

    Returns
    -------
    dict
        ε → count, whose sum Σ ε·count is the basic composition over the run.
    """
    reports = check_int("losses", "reports", reports, low=0)
    if classes is None:
        return {mech.guarantee.epsilon_report: reports} if reports else {}
    classes = check_int("losses", "classes", classes, low=1)
    cost = np.array([mech.memoized_loss(r) for r in range(reports + 1)])
    # best[t]: the costliest spread of t reports over the classes used so far; take[j][t]: the r
    # reports the j-th class received in it
    best, take = np.zeros(reports + 1), []
    for _ in range(min(classes, reports)):
        cand = np.full((reports + 1, reports + 1), -np.inf)  # [t, r]: r reports to this class
        for r in range(reports + 1):
            cand[r:, r] = best[: reports + 1 - r] + cost[r]
        take.append(cand.argmax(axis=1))
        best = cand.max(axis=1)
    spent: dict[float, int] = {}
    t = reports
    for pick in reversed(take):
        r = int(pick[t])
        if r:
            spent[float(cost[r])] = spent.get(float(cost[r]), 0) + 1
        t -= r
    return spent


def _pld_epsilon(spent: dict[float, int], delta: float) -> tuple[float, str]:
    if not spent:
        return 0.0, "none"
    got = compose([(e, 0.0) for e, n in spent.items() for _ in range(n)], delta)
    return got.epsilon, got.method


def _steps_epsilon(steps, delta: float) -> tuple[float, str]:
    """(ε, δ) steps — an interactive protocol's R rounds (docs/math.md §10.8) and pure reports — composed
    at ``delta``; NaN when their δ already sum past it."""
    try:
        got = compose(steps, delta)
    except ValueError:
        return math.nan, "none"
    return got.epsilon, got.method


def _merge(into: dict, more: dict) -> dict:
    for e, n in more.items():
        into[e] = into.get(e, 0) + n
    return into


def _person_total(rows, kind: str, basic: float) -> float:
    """ε per person over the run of a kind's total row: the basic total without memoized use cases,
    else the sum of the use cases' person-level ε (docs/math.md §8.6)."""
    own = [r for r in rows if r["kind"] == kind and r["use_case"] != "total"]
    return sum(r["epsilon_person"] for r in own) if any(r["memoize"] for r in own) else basic


def numeric_row(uc, n_days: int, delta: float = DELTA_SPEND) -> dict:
    """The accountant's row of numeric use case ``uc`` (:class:`~ldpsim.evaluation.numeric_use.NumericUseCase`)
    over ``n_days`` nights: its n_days steps at (ε, δ_r) of one report or release composed basically
    (``epsilon_device`` = n_days · ε at ``delta_device`` = n_days · δ_r) and, at ``delta``, by PLD
    (docs/math.md §8.2, §9.14); ε per item and per person are the basic ε (every report may carry any value)."""
    g = uc.design.guarantee
    n_days = check_int("numeric_row", "n_days", n_days, low=1)
    steps = [(g.epsilon_report, g.delta)] * n_days
    basic = basic_composition(e for e, _ in steps)
    eps_at = _steps_epsilon(steps, delta)[0]
    return {"use_case": uc.name, "mechanism": uc.design.name, "kind": g.label, "memoize": False,
            "epsilon": g.epsilon_report, "epsilon_report": g.epsilon_report, "epsilon_permanent": math.nan,
            "reports": n_days, "memo_classes": math.nan, "epsilon_device": basic, "delta_device": g.delta * n_days,
            "epsilon_device_at_delta": min(eps_at, basic), "epsilon_central": math.nan, "epsilon_item": basic,
            "epsilon_person": basic, "steps": steps}  # steps: for the kind's total (device_spend)


def _item_epsilon(uc, reports: int, spent: dict, joint: bool, cap: float) -> float:
    """ε of one item (memo class) of one device over the run (docs/math.md §8.7): memoized, the loss of all
    R reports in one class, ε(R); fresh, every report may carry the item (the daily limit samples typed
    events, so L∞ = the limit): the device's whole spend."""
    if uc.memoize and not joint:
        return min(basic_composition(e * n for e, n in losses(uc.make_mechanism(), reports, 1).items()), cap)
    return min(basic_composition(e * n for e, n in spent.items()), cap)


@dataclass(frozen=True)
class DeviceSpend:
    """What one device spends over a run (:func:`device_spend`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per use case (``use_case`` its name) and one total row per guarantee kind
        (``use_case`` = "total"): ``kind`` (the guarantee's label), ``epsilon_report`` (ε of one
        report), ``epsilon_permanent`` (ε_∞, memoized use cases), ``reports`` (per device over the
        run, at most), ``memo_classes``, ``epsilon_device`` (basic composition, δ = 0, capped by the
        budgets), ``epsilon_device_at_delta`` (PLD at ``delta``), ``epsilon_central`` (after the
        shuffle, at ``delta``; NaN unless ``shuffled_among`` was given), ``epsilon_item`` (ε of one item
        of one device over the run, δ = 0, docs/math.md §8.7; the total row: the largest of its kind),
        ``epsilon_person`` (ε per
        person over the run between arbitrary histories, docs/math.md §8.6: for a memoized use case
        ``epsilon_device`` holds only per value between histories of one repetition pattern, and
        ``epsilon_person`` is ∞ under pure memoization; else ``epsilon_device``), ``delta_device`` (δ of
        the basic ε columns: 0 but for numeric designs whose release carries a δ, composed by summing).
    delta : float
        δ of the (ε, δ) columns.
    method : str
        How the (ε, δ) columns were composed.
    """

    table: pd.DataFrame
    delta: float
    method: str

    def total(self, kind: str = "ε-LDP", column: str = "epsilon_device") -> float:
        """The total row's ``column`` for guarantees of ``kind`` (NaN when no use case is of that kind)."""
        rows = self.table[(self.table["use_case"] == "total") & (self.table["kind"] == kind)]
        return float(rows[column].iloc[0]) if len(rows) else math.nan

    def lines(self) -> list[str]:
        """The spend as text: one line per use case and per total."""
        out = []
        for r in self.table.itertuples():
            central = "" if not np.isfinite(r.epsilon_central) else f", central {r.epsilon_central:.3g}"
            perm = "" if not np.isfinite(r.epsilon_permanent) else f", ε_∞ {r.epsilon_permanent:.3g}"
            per_report = "" if not np.isfinite(r.epsilon_report) else f"ε a report {r.epsilon_report:.3g}{perm}; "
            person = (f"; {SAME_PATTERN}; per person over the run "
                      + ("∞ (memoization reveals a change of value)" if math.isinf(r.epsilon_person)
                         else f"≤ {r.epsilon_person:.3g}")
                      if r.memoize or r.epsilon_person != r.epsilon_device else "")
            item = f"per item over the run {r.epsilon_item:.3g}; "
            out.append(f"{r.use_case:>16}  {r.kind:<8} {per_report}{item}per device over the run {r.epsilon_device:.3g} "
                       f"(δ = {r.delta_device:.3g}), {r.epsilon_device_at_delta:.3g} at δ = {self.delta:g}{central}{person}")
        return out


def device_spend(cfg, delta: float = DELTA_SPEND, shuffled_among: int | None = None) -> DeviceSpend:
    """What one device spends over the run of the deployment ``cfg``, per use case and in total.

    Parameters
    ----------
    cfg : ldpsim.simulator.config.DeploymentConfig
        The deployment: use cases (their mechanisms, daily limits, memoization), numeric use cases, policy,
        days, caps.
    delta : float in (0, 1)
        δ of the (ε, δ) per device (PLD composition) and of the central ε.
    shuffled_among : int, optional
        Reports each report is shuffled among (per use case and day): adds the central ε, with the
        ⌈n / daily_limit⌉ devices those reports come from at least as the shuffle's users.

    Returns
    -------
    DeviceSpend
        The table of the module docstring's quantities (docs/math.md §8.2–§8.4).
    """
    delta = check_real("device_spend", "delta", delta, 0.0, 1.0)
    if shuffled_among is not None:
        shuffled_among = check_int("device_spend", "shuffled_among", shuffled_among, low=1)
    cap = min(cfg.budget_total, cfg.n_days * cfg.budget_daily)
    rows, spent_by_kind, central_by_kind, pure_by_kind, rounds_by_kind = [], {}, {}, {}, {}
    joint = cfg.policy != "spl"
    for uc in cfg.use_cases:
        if uc.collected:  # a trust model's guarantee is the trust accountant's (evaluation/deployment/trust_estimates.py)
            continue
        g = uc.guarantee
        reports = cfg.n_days * (1 if joint else uc.daily_limit)
        classes = memo_classes(cfg, uc)
        if joint:  # one report of the whole record per device-day, at the policy's cost
            spent = {uc.ledger_cost: cfg.n_days}
        else:
            spent = losses(uc.make_mechanism(), reports, classes)
        rounds = uc.make_mechanism().steps if uc.interactive else []
        eps_at, method = _steps_epsilon(rounds, delta) if rounds else _pld_epsilon(spent, delta)
        basic = min(basic_composition(e * n for e, n in spent.items()), cap)
        central = math.nan
        if shuffled_among is not None:
            # a device's day of reports is one randomizer at the day's ε; the n reports it is shuffled among
            # come from at least ⌈n / L⌉ devices, the users of the shuffle bound (docs/math.md §8.4)
            per_device = 1 if joint else uc.daily_limit
            per_day = shuffle_step(uc.ledger_cost * per_device, -(-shuffled_among // per_device),
                                   delta / (2 * cfg.n_days))
            central = min(compose([(per_day, delta / (2 * cfg.n_days))] * cfg.n_days, delta).epsilon, basic)
            central_by_kind.setdefault(g.label, []).append((per_day, cfg.n_days))
        rows.append({"use_case": uc.name, "mechanism": uc.mechanism, "kind": g.label, "memoize": uc.memoize,
                     "epsilon": float(dict(uc.params)["epsilon"]), "epsilon_report": g.epsilon_report,
                     "epsilon_permanent": g.epsilon_permanent if uc.memoize else math.nan,
                     "reports": reports, "memo_classes": classes if classes is not None else math.nan,
                     "epsilon_device": basic, "delta_device": 0.0, "epsilon_device_at_delta": min(eps_at, basic),
                     "epsilon_central": central,
                     "epsilon_item": _item_epsilon(uc, reports, spent, joint, cap),
                     "epsilon_person": person_level(uc.make_mechanism(), reports).epsilon if uc.memoize else basic})
        # under smp/rsfd the device-day is charged once for all use cases: count it once per kind
        if not (joint and g.label in spent_by_kind):
            _merge(spent_by_kind.setdefault(g.label, {}), spent)
            _merge(pure_by_kind.setdefault(g.label, {}), {} if rounds else spent)
            rounds_by_kind.setdefault(g.label, []).extend(rounds)
    numeric_by_kind = {}
    for uc in cfg.numeric:
        row = numeric_row(uc, cfg.n_days, delta)
        numeric_by_kind.setdefault(row["kind"], []).extend(row.pop("steps"))
        rows.append(row)
    for kind in {**spent_by_kind, **numeric_by_kind}:
        spent, numeric = spent_by_kind.get(kind, {}), numeric_by_kind.get(kind, [])
        basic = (min(basic_composition(e * n for e, n in spent.items()), cap) if spent else 0.0) \
            + basic_composition(e for e, _ in numeric)
        if rounds_by_kind.get(kind) or numeric:
            eps_at, method = _steps_epsilon([(e, 0.0) for e, n in pure_by_kind.get(kind, {}).items() for _ in range(n)]
                                            + rounds_by_kind.get(kind, []) + numeric, delta)
        else:
            eps_at, method = _pld_epsilon(spent, delta)
        central = math.nan
        if kind in central_by_kind:
            parts = central_by_kind[kind][:1] if joint else central_by_kind[kind]
            n_parts = sum(n for _, n in parts)
            central = min(_steps_epsilon([(e, delta / (2 * n_parts)) for e, n in parts for _ in range(n)] + numeric,
                                         delta)[0], basic)
        rows.append({"use_case": "total", "mechanism": "", "kind": kind, "memoize": False, "epsilon": math.nan,
                     "epsilon_report": math.nan, "epsilon_permanent": math.nan,
                     "reports": int(sum(r["reports"] for r in rows if r["kind"] == kind and r["use_case"] != "total")),
                     "memo_classes": math.nan, "epsilon_device": basic, "delta_device": sum(d for _, d in numeric),
                     "epsilon_device_at_delta": min(eps_at, basic), "epsilon_central": central,
                     "epsilon_item": max(r["epsilon_item"] for r in rows if r["kind"] == kind),
                     "epsilon_person": _person_total(rows, kind, basic)})
    return DeviceSpend(pd.DataFrame(rows), delta, method if rows else "none")


def solve_epsilon(make, target: float, reports: int, classes: int | None = None, per: str = "device",
                  delta: float | None = None, tol: float = 1e-6) -> float:
    """The mechanism parameter ε at which a design spends exactly ``target`` (docs/math.md §8.5).

    Parameters
    ----------
    make : callable
        ε → the mechanism (its ``guarantee`` is read).
    target : float
        The budget: ε of one report (``per="report"``) or ε per device over the run (``per="device"``).
    reports : int
        Reports per device over the run.
    classes : int, optional
        Memo classes when the design memoizes (None: fresh reports).
    per : {"device", "report"}
        Which ε the target is.
    delta : float, optional
        With ``per="device"``: meet the target at this δ (PLD) instead of δ = 0 (basic composition).
    tol : float
        Relative width of the final bisection bracket; the returned ε never exceeds the target. An ε
        at which ``make`` raises ``ValueError`` counts as over the target.

    Returns
    -------
    float
        The mechanism's ``epsilon`` parameter.
    """
    target = check_real("solve_epsilon", "target", target, 0.0, math.inf)
    if per not in ("device", "report"):
        raise ValueError(f"The 'per' parameter of solve_epsilon must be 'device' or 'report'. Got {per!r} instead.")

    def spend(eps: float) -> float:
        try:
            mech = make(eps)
        except ValueError:  # a parameter derived from ε out of range (PEM's g = e^ε + 1): unusable
            return math.inf
        if per == "report":
            return mech.guarantee.epsilon_report
        spent = losses(mech, reports, classes)
        if delta is None:
            return basic_composition(e * n for e, n in spent.items())
        return _pld_epsilon(spent, delta)[0]

    low, high = 1e-6, 50.0
    if spend(high) <= target:
        return high
    if spend(low) > target:
        raise ValueError(f"The 'target' parameter of solve_epsilon ({target:g}) is below what the design spends "
                         f"at the smallest supported ε ({spend(low):.3g}).")
    while high - low > tol * low:
        mid = math.sqrt(low * high)
        if spend(mid) <= target:
            low = mid
        else:
            high = mid
    return low


def spend_summary(cfg, delta: float = DELTA_SPEND) -> dict:
    """The run's bound on one device's spend, flat for a run's ``summary.json``: per guarantee kind k
    (``ldp``, ``sdldp``, ``uldp``, and ``central`` for numeric use cases trusting the server or secure
    aggregation), ``epsilon_device_<k>`` (at δ = ``delta_device_<k>`` when that is not 0) and
    ``epsilon_device_<k>_at_delta``, with ``epsilon_device_delta``, and under ``person`` each use case's
    (numeric use cases included) ε per report, item and person (:func:`person_summary`)."""
    from ldpsim.mechanisms import GUARANTEE_KINDS

    spend = device_spend(cfg, delta)
    out = {"epsilon_device_delta": delta, "person": person_summary(spend)}
    for key, label in GUARANTEE_KINDS.items():
        if np.isfinite(spend.total(label)):
            out[f"epsilon_device_{key}"] = spend.total(label)
            out[f"epsilon_device_{key}_at_delta"] = spend.total(label, "epsilon_device_at_delta")
            if spend.total(label, "delta_device") > 0:
                out[f"delta_device_{key}"] = spend.total(label, "delta_device")
    return out


def person_summary(spend: DeviceSpend) -> dict:
    """``summary.json``'s ``person`` key: per use case (and ``total <kind>``) what one report, one item and one
    person over the run get (``epsilon_report``, ``epsilon_item``, ``epsilon_person``, δ = 0; docs/math.md §8.7;
    with ``delta_person``, their δ, for numeric designs whose release carries a δ)."""
    out = {}
    for r in spend.table.itertuples():
        name = r.use_case if r.use_case != "total" else f"total {r.kind}"
        out[name] = {"epsilon_report": float(r.epsilon_report), "epsilon_item": float(r.epsilon_item),
                     "epsilon_person": float(r.epsilon_person)} | (
            {"delta_person": float(r.delta_device)} if r.delta_device > 0 else {})
    return out


def shuffle_step(eps0: float, n: int, delta_step: float) -> float:
    """Central ε of one ε₀-LDP step (a report, or a device's day of reports) shuffled among n, at
    ``delta_step`` (FMT21's numerical bound, never above ε₀): the one shuffle step of the accountant."""
    return min(eps0, numerical_epsilon(eps0, n, delta_step, tol=1e-4))


