"""``ldpsim.audit(...)``: the audit as a library call with a verdict a gate can trust (docs/math.md §11).

One function for every way in — a mechanism of ours (by name or object), every mechanism (``"all"``),
any client callable, or reports made elsewhere — and one result, :class:`AuditReport`: the table (one
row per audit), the verdict, the lines the command line prints, and :meth:`AuditReport.to_folder`.
``ldpsim audit`` is a thin layer over it: same numbers, same messages.

Modes (for our mechanisms; a client is always sampled, reports are what they are):

* ``"sample"`` (default) — run the mechanism's real client ``trials`` times per input: checks the code;
* ``"declared"`` — draw the two event counts from Binomial(N, P[S|·]) with the mechanism's *declared*
  probabilities: checks only the math the mechanism states, never its code (any N, no time);
* ``"repeated"`` — audit the ``days`` reports of one device jointly (memoizing clients; :mod:`.repeated`).

Verdicts: FAIL (ε_lb > claimed ε at the stated confidence), INCONCLUSIVE (the trials were too few for
any outcome to exceed the claim: :func:`~.bounds.largest_lower_bound`), PASS. The gate passes only when
every audit PASSES (exit code 0); FAIL or INCONCLUSIVE give 1. A PASS means: at this confidence, these
trials found no event whose frequency ratio exceeds e^ε; a client whose true ε is larger may still pass
with too few trials (``ldpsim audit --detection-table`` says how many are needed).

Cost before spending: the sample and repeated modes run at most :data:`MAX_SAMPLE_REPORTS` client
reports per audit call (reports in chunks of :data:`~.auditor.CHUNK`, so memory stays bounded), and
the declared mode at most :data:`MAX_DECLARED_TRIALS` trials; beyond, the call is refused
(:class:`~ldpsim.evaluation.cost.CostError`) with the trials that fit.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ldpsim.evaluation.audit.auditor import (AuditResult, audit_client, audit_mechanism, audit_plan, audit_reports,
                                             load_callable)
from ldpsim.evaluation.audit.bounds import trials_for_power, trials_to_detect
from ldpsim.evaluation.audit.plans import plan_targets
from ldpsim.evaluation.audit import run_audit as ra
from ldpsim.scenarios.studies.audit import run_cost
from ldpsim.scenarios.studies.audit import run_designs as rd
from ldpsim.evaluation.audit.repeated import memoizes, repeated_plan
from ldpsim.evaluation.audit.run_audit import RunPlan, audit_run, event_epsilon, run_plan
from ldpsim.evaluation.console_table import CELL_CHARS, console_lines, cut, terminal_width
from ldpsim.evaluation.privacy.accountant import device_spend, losses
from ldpsim.evaluation.privacy.composition import basic_composition
from ldpsim.evaluation.privacy.level_columns import COLUMNS as LEVEL_COLUMNS, one_report
from ldpsim.evaluation.privacy.person_level import SAME_PATTERN
from ldpsim.evaluation.privacy.trust_accounting import run_epsilon
from ldpsim.evaluation.privacy.trust_models import trust_model
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.evaluation.cost import CostError
from ldpsim.mechanisms._validation import check_epsilon, check_int, check_real
from ldpsim.mechanisms.deltas import DELTA_AUDIT
from ldpsim.mechanisms.registry import PARAMETERS, did_you_mean
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout
from ldpsim.simulator.config import DeploymentConfig, UseCase

#: ``ldpsim audit --out``: the verdicts and the detection table
LAYOUT = Layout("audit", ("audit.csv", "detection.csv"))

MODES = ("sample", "declared", "repeated")  # and "run": :func:`audit_whole_run`
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
#: most client reports one audit call may draw (sample and repeated modes): at the ~10⁷ reports/s of the
#: fastest clients a few minutes; the slowest (discovery protocols, Python clients) take far longer
MAX_SAMPLE_REPORTS = 4 * 10**9
#: most trials of the declared mode: counts stay exact in float64 (2⁵³ ≈ 9·10¹⁵)
MAX_DECLARED_TRIALS = 10**15
DEFAULT_TRIALS = 1_000_000
#: devices per input of the repeated mode (each sends ``days`` reports; memoized CMS draws its m bits from
#: keyed hashes, about 15 s for 10⁵ devices × 7 reports × 2 inputs)
DEFAULT_DEVICES = 100_000
DEFAULT_DAYS = 7
#: the run audit's reading use cases (:func:`run_claim`) estimate their mean by EM over this many bins
READING_BINS = 64

COLUMNS = ("subject", "target", "mode", "epsilon_claimed", "scope", *LEVEL_COLUMNS, "delta", "epsilon_lower_bound",
           "confidence", "x", "x_prime", "trials", "days", "count_x", "count_x_prime", "largest_bound", "verdict",
           "event", "seconds")
#: the columns ``ldpsim audit`` prints, in order of importance (the rest are in ``audit.csv``)
SHOWN = {"subject": "subject", "verdict": "verdict", "epsilon_claimed": "ε claimed", "epsilon_lower_bound": "ε lower",
         "epsilon_item": "epsilon_item", "epsilon_person": "epsilon_person", "trials": "trials", "confidence": "conf",
         "pair": "pair", "event": "event"}


def scopes(result: AuditResult) -> dict:
    """What the claim's ε covers (``scope``) and what one item of one person and one person get
    (``epsilon_item``, ``epsilon_person``: NaN where this audit does not define it) — docs/math.md §8.7.

    One report (or one round's central release): a device sending it once gives both the claim
    (:func:`~ldpsim.evaluation.privacy.level_columns.one_report`). A whole run of a memoized design is judged
    against the accountant's number for histories of one repetition pattern: not the person's. A memoized target (RAPPOR's ε_∞, the
    repeated mode) covers every report of one value: the item's, not the person's (histories with
    other repeats are told apart more: :mod:`ldpsim.evaluation.privacy.person_level`). A whole run
    (:func:`audit_whole_run`) is judged against ε per person over the run."""
    claim = result.epsilon_claimed
    if result.mode == "run" and SAME_PATTERN in result.target:   # a memoized design's accountant (§11.9)
        return {"scope": f"one person over the run, {SAME_PATTERN}", "epsilon_item": math.nan,
                "epsilon_person": math.nan}
    if result.mode == "run":
        return {"scope": "one person over the run", "epsilon_item": math.nan, "epsilon_person": claim}
    if result.mode == "repeated" or result.target == "permanent":
        what = f"{result.days} reports of one value" if result.mode == "repeated" else "every report of one value"
        return {"scope": what, "epsilon_item": claim, "epsilon_person": math.nan}
    return {"scope": "one round's release" if result.delta > 0 else "one report", **one_report(claim)}


#: the subject's characters in a table narrower than 100 columns (so the verdict, both ε and both levels fit 80)
SUBJECT_NARROW = 20


def _cut(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters (≥ 4), ending in … when cut."""
    return cut(text, max(chars, 4))


#: under the table, when a row's user-level column is undefined (NaN)
UNDEFINED = ("nan in epsilon_item/epsilon_person: not defined by this audit; a memoized claim covers the reports "
             "of one value, not a person whose values repeat differently; a whole-run claim is the person's "
             "(audit.csv: scope)")


@dataclass(frozen=True)
class AuditReport:
    """What :func:`audit` returns.

    Attributes
    ----------
    results : list of AuditResult
        One per audit (a battery has many).
    mode : str
        What was done: ``"sample"`` (the client ran), ``"declared"`` (declared probabilities only),
        ``"repeated"`` (T reports of one device jointly) or ``"reports"`` (given reports).
    notes : list of str
        What the numbers mean (printed by the command line after the table).
    """

    results: list
    mode: str
    notes: list = field(default_factory=list)

    @property
    def table(self):
        """One row per audit (pandas.DataFrame, columns :data:`COLUMNS`)."""
        import pandas as pd
        rows = [{**r.as_row(), **scopes(r), "x": repr(r.x), "x_prime": repr(r.x_prime)} for r in self.results]
        return pd.DataFrame(rows, columns=list(COLUMNS))

    @property
    def verdict(self) -> str:
        """FAIL if any audit FAILS, else INCONCLUSIVE if any is, else PASS."""
        verdicts = {r.verdict for r in self.results}
        return next(v for v in ("FAIL", "INCONCLUSIVE", "PASS") if v in verdicts or v == "PASS")

    @property
    def exit_code(self) -> int:
        """0 when every audit PASSES; 1 for a FAIL or an INCONCLUSIVE audit (no evidence never passes)."""
        return 0 if self.verdict == "PASS" else 1

    def lines(self) -> list[str]:
        """The table and the notes, as ``ldpsim audit`` prints them."""
        return self.table_lines() + self.notes

    def table_lines(self, width: int | None = None) -> list[str]:
        """The table: one line per audit under a header, the columns of :data:`SHOWN` that fit ``width``
        (default: the terminal's; the rest are in ``audit.csv``), and what its ε columns cover."""
        table = self.table
        if table.empty:
            return []
        width = terminal_width() if width is None else int(width)
        cut = CELL_CHARS if width >= 100 else SUBJECT_NARROW   # below 100 columns the verdict and levels come first
        labels = [f" [{_cut(r.target, cut - 7)}]" if r.target else "" for r in self.results]
        shown = table.assign(subject=[_cut(r.subject, cut - len(label)) + label
                                      for r, label in zip(self.results, labels)],
                             pair=[f"{r.x!r},{r.x_prime!r}" for r in self.results]).rename(columns=SHOWN)
        kinds = dict.fromkeys(table["scope"])
        notes = [f"ε claimed: of {', '.join(kinds)}" + ("; a device sending it once: epsilon_item = epsilon_person"
                                                         if {"one report", "one round's release"} & set(kinds) else "")]
        notes += [UNDEFINED] if table[list(LEVEL_COLUMNS)].isna().any(axis=None) else []
        return console_lines(shown, list(SHOWN.values()), head=None, width=width, full="audit.csv (--out)",
                             notes=notes)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_folder(self, out, force: bool = False) -> Path:
        """Write ``audit.csv`` and ``audit.json`` (verdict, mode, notes) into the audit folder ``out``
        (new, empty or an earlier audit's; another audit's results are replaced only with ``force``)."""
        table = self.table
        summary = json.dumps({"verdict": self.verdict, "mode": self.mode, "notes": self.notes}, indent=1,
                             ensure_ascii=False)
        identity = table.drop(columns="seconds").to_csv(index=False)  # the same audit again is the same results
        return write_audit_folder(out, {"audit.csv": lambda tmp: table.to_csv(tmp, index=False),
                                        "audit.json": summary}, identity, force)


def write_audit_folder(out, files: dict, fingerprint_text: str, force: bool) -> Path:
    """Write ``files`` (name → text or ``writer(tmp_path)``) durably into the locked audit folder ``out``."""
    import hashlib

    from ldpsim.runtime.durable import write_file, write_text
    from ldpsim.runtime.runfolder import RunFolder
    out = Path(out)
    identity = {"fingerprint": hashlib.sha256(fingerprint_text.encode()).hexdigest()[:16]}
    with RunFolder.open(out, LAYOUT, identity, resume=False, replace=force) as folder:
        for name, content in files.items():
            if callable(content):
                write_file(out / name, content)
            else:
                write_text(out / name, content)
        folder.finalize(adopt=True)
    return out


def check_epsilons(epsilons, name: str = "epsilons") -> tuple:
    """A non-empty list of ε in [EPSILON_MIN, EPSILON_MAX], each checked (InputError naming ``name``)."""
    values = tuple(epsilons) if isinstance(epsilons, (list, tuple)) else (epsilons,)
    if not values:
        raise InputError(f"The '{name}' parameter of audit must list at least one ε. Got none.")
    return tuple(check_epsilon("audit", e, name) for e in values)


def check_trials(trials, high: int = MAX_DECLARED_TRIALS) -> int:
    """Trials: a whole number in [1, ``high``] (floats such as 1e6 accepted when whole and finite)."""
    if isinstance(trials, float) and math.isfinite(trials) and trials == int(trials):
        trials = int(trials)
    if isinstance(trials, float):
        raise InputError(f"The 'trials' parameter of audit must be a whole number in [1, {high:.0e}]. "
                         f"Got {trials!r} instead.")
    return check_int("audit", "trials", trials, low=1, high=high)


def make_mechanism(name: str, epsilon: float, params: dict | None = None):
    """One of ours by registry name (or an interactive protocol's): its typical parameters
    (:data:`ldpsim.mechanisms.registry.PARAMETERS`) under ``params`` (lists become tuples); ``epsilon`` goes
    to the constructor of those that take one (a threshold round's ε is the claim's, not a parameter)."""
    from ldpsim.mechanisms.registry import make, takes

    params = dict(params or {})
    for k in ("sensitive", "high", "low", "partitions", "ranges"):
        if isinstance(params.get(k), list):
            params[k] = tuple(tuple(v) if isinstance(v, list) else v for v in params[k])
    return make(name, epsilon=epsilon if takes(name, "epsilon") else None, shape="typical", **params)


def _guard_samples(trials: int, audits: int, days: int, devices: int = 0) -> None:
    """Refuse more than MAX_SAMPLE_REPORTS client reports; ``devices``: the reports of whole fleets (one
    interactive round's trial is a fleet, :mod:`.plans_interactive`) counted beyond one per trial."""
    reports = 2 * trials * (audits + devices) * days
    if reports > MAX_SAMPLE_REPORTS:
        fit = MAX_SAMPLE_REPORTS // (2 * (audits + devices) * days)
        fleets = f" + {devices} device(s) of the audited fleets" if devices else ""
        raise CostError(f"audit: trials = {trials:,} × 2 inputs × ({audits} audit(s){fleets}) × {days} report(s) "
                        f"per device = {reports:,} client reports, more than the {MAX_SAMPLE_REPORTS:,} an audit "
                        f"may draw (memory stays bounded, time does not); at most trials = {fit:,} fit, or use "
                        f"mode='declared' to check the declared probabilities only")


def _fleet_devices(mech, target, epsilon) -> int:
    """Devices beyond the first in one trial of an interactive round's audit (the larger of its two fleets)."""
    from ldpsim.evaluation.audit.plans_interactive import is_threshold_round
    from ldpsim.mechanisms.discovery.threshold_privacy import worst_holders
    if not is_threshold_round(mech):
        return 0
    if target == "below-threshold":
        return max(0, mech.theta - 2)
    return worst_holders(1.0 if epsilon is None else epsilon, mech.gamma, mech.theta, mech.counts_released)


def audit(mechanism=None, *, client=None, reports=None, epsilon=None, params=None, target=None,
          mode: str = "sample", days: int | None = None, trials=None, confidence: float = 0.95,
          seed: int = 0, epsilons=EPSILONS, domain_size: int | None = None, pair=(0, 1), support=None,
          client_args: dict | None = None) -> AuditReport:
    """Audit a mechanism of ours, every one of them, any client, or reports made elsewhere.

    Exactly one of ``mechanism``, ``client``, ``reports``.

    Parameters
    ----------
    mechanism : str or Mechanism, optional
        A registry name (with ``params`` over its typical ones, :data:`ldpsim.mechanisms.registry.PARAMETERS`),
        a mechanism object, or ``"all"``: every
        mechanism at each of ``epsilons``, every target, each audit at confidence 1 − (1 − c)/K for K
        audits (family-wise: a correct battery FAILS with probability ≤ 1 − c).
    client : callable or str, optional
        ``perturb(values, rng) -> reports`` (``mode="repeated"``: ``perturb(values, keys, rng)``, called
        ``days`` times with the same device keys), or ``"MODULE:FUNC"``: imported and called — it runs
        the user's code, as ``python -c`` would; with ``client_args`` it is a factory called with them.
    reports : str, Path or (array, array), optional
        Reports of x and of x′: a ``.npz`` with ``reports_x``, ``reports_x_prime`` (optional ``x``,
        ``x_prime``) or the two arrays.
    epsilon : float, optional
        The claimed ε (required for ``client`` and ``reports``; a mechanism's default 1). Repeated mode:
        the ε of a device's ``days`` reports together (ε_∞ of a memoizing client).
    params, target
        Mechanism parameters; what of it to audit (:func:`~.plans.plan_targets`).
    mode : {"sample", "declared", "repeated"}
        Module docstring. ``client`` accepts "sample" and "repeated"; ``reports`` ignores it.
    days : int, optional
        Reports per device of the repeated mode (default 7).
    trials : int, optional
        Trials per input: reports (default 10⁶), or devices in the repeated mode (default 10⁵).
    confidence : float in (0, 1)
    seed : int
        One seed reproduces the audit.
    epsilons : sequence of float
        ε of the ``"all"`` battery.
    domain_size, pair, support
        A client's domain, the neighbouring inputs, ``support(reports, item) -> bool`` (or "MODULE:FUNC").

    Returns
    -------
    AuditReport

    Raises
    ------
    InputError
        Anything outside what is allowed, named with the allowed values.
    CostError
        An audit too large to run (module docstring), with the trials that would fit.
    """
    given = [n for n, v in (("mechanism", mechanism), ("client", client), ("reports", reports)) if v is not None]
    if len(given) != 1:
        raise InputError(f"audit takes exactly one of mechanism, client, reports; got {given or 'none'}")
    if mode not in MODES:
        raise InputError(f"The 'mode' parameter of audit must be one of {MODES}. Got {mode!r} instead.")
    confidence = check_real("audit", "confidence", confidence, 0.0, 1.0)
    trials = check_trials((DEFAULT_DEVICES if mode == "repeated" else DEFAULT_TRIALS) if trials is None else trials)
    seed = check_int("audit", "seed", seed, low=0)
    if days is not None and mode != "repeated":
        raise InputError(f"The 'days' parameter of audit goes with mode='repeated'. Got mode={mode!r}.")
    days = check_int("audit", "days", DEFAULT_DAYS if days is None else days, low=2, high=10_000) \
        if mode == "repeated" else None
    if epsilon is not None:
        epsilon = check_epsilon("audit", epsilon)
    rng = np.random.default_rng(seed)
    if isinstance(support, str):
        support = load_callable(support)
    if mechanism is not None:
        return _audit_ours(mechanism, epsilon, params, target, mode, days, trials, confidence, rng, epsilons)
    if epsilon is None:
        raise InputError(f"The 'epsilon' parameter (the claimed ε) is required to audit {given[0]}.")
    x, xp = pair
    if reports is not None and mode != "sample":
        raise InputError(f"The 'mode' parameter does not apply to given reports (they are what they are). "
                         f"Got mode={mode!r}.")
    if client is not None:
        return _audit_client(client, client_args, epsilon, mode, days, trials, confidence, rng, domain_size,
                             x, xp, support)
    return _audit_reports(reports, epsilon, x, xp, support, confidence)


def _jobs(mechanism, epsilon, params, target, epsilons) -> list:
    if isinstance(mechanism, str) and mechanism.lower() == "all":
        if target is not None or params:
            raise InputError("audit('all') audits every target with the default parameters; "
                             "'target' and 'params' go with one mechanism")
        mechs = [(make_mechanism(name, e), e) for name in PARAMETERS for e in check_epsilons(epsilons)]
        return [(m, t, e) for m, e in mechs for t in plan_targets(m)]
    if isinstance(mechanism, str):
        if mechanism.lower() not in PARAMETERS:
            raise InputError(f"No audit plan for mechanism {mechanism!r}; auditable: {', '.join(PARAMETERS)}"
                             f"{did_you_mean(mechanism.lower(), PARAMETERS)}")
        params = dict(params or {})
        epsilon = params.pop("epsilon", epsilon if epsilon is not None else 1.0)
        mechanism = make_mechanism(mechanism, epsilon, params)
    elif params:
        raise InputError("'params' goes with a mechanism given by name")
    return [(mechanism, target, epsilon)]


def _audit_ours(mechanism, epsilon, params, target, mode, days, trials, confidence, rng, epsilons) -> AuditReport:
    jobs = _jobs(mechanism, epsilon, params, target, epsilons)
    each = 1 - (1 - confidence) / len(jobs)  # Bonferroni over the battery: family-wise confidence
    notes = []
    if mode == "repeated":
        if target is not None:
            raise InputError("mode='repeated' audits a device's reports against the mechanism's ε_∞; "
                             "'target' does not apply")
        mechs = list({id(m): m for m, _, _ in jobs if len(jobs) == 1 or memoizes(m)}.values())  # "all": memoizing ones
        each = 1 - (1 - confidence) / len(mechs)
        _guard_samples(trials, len(mechs), days)
        results = []
        for mech in mechs:
            plan = repeated_plan(mech, days)
            results.append(audit_plan(plan, trials, rng, "sample", each, repr(mech), days=days))
            notes.append(_redraw_note(mech, plan, days, each))
    else:
        if mode == "sample":
            _guard_samples(trials, len(jobs), 1, sum(_fleet_devices(m, t, e) for m, t, e in jobs))
        results = [audit_mechanism(mech, trials, rng, mode, each, target, eps) for mech, target, eps in jobs]
    return AuditReport(results, mode, notes + _notes(results, mode, confidence, len(jobs)))


def _redraw_note(mech, plan, days: int, confidence: float) -> str:
    from ldpsim.evaluation.audit.repeated import redraw_probabilities
    need = trials_to_detect(*redraw_probabilities(mech, days), float(mech.epsilon), 1 - confidence)
    shown = f"{need:,}" if need <= 10**13 else "more than 10^13"
    return (f"{mech.name}: a client that redraws its memoized response on each of the {days} reports is "
            f"flagged by about half of the audits of {shown} devices per input (event: {plan.description})")


def _audit_client(client, client_args, epsilon, mode, days, trials, confidence, rng, domain_size, x, xp,
                  support) -> AuditReport:
    if mode == "declared":
        raise InputError("mode='declared' needs a mechanism's declared probabilities; a client can only be "
                         "sampled (mode='sample' or 'repeated')")
    if domain_size is None:
        raise InputError("The 'domain_size' parameter is required to audit a client.")
    domain_size = check_int("audit", "domain_size", domain_size, low=2)
    if not (0 <= x < domain_size and 0 <= xp < domain_size) or x == xp:
        raise InputError(f"The 'pair' parameter must be two different inputs in [0, {domain_size}); got {x} {xp}")
    name = client if isinstance(client, str) else getattr(client, "__qualname__", repr(client))
    if isinstance(client, str):
        client = load_callable(client, client_args)
    _guard_samples(trials, 4 if days else 1, days or 1)  # repeated: 4 events counted at k = 2 and k = T
    result = audit_client(client, epsilon, trials, x, xp, support, rng, confidence, name, days)
    return AuditReport([result], mode, _notes([result], mode, confidence, 1))


def _audit_reports(reports, epsilon, x, xp, support, confidence) -> AuditReport:
    if isinstance(reports, (str, Path)):
        path = Path(reports)
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise InputError(f"reports file {str(path)!r}: cannot read it as .npz ({exc})") from None
        with data:
            missing = [k for k in ("reports_x", "reports_x_prime") if k not in data]
            if missing:
                raise InputError(f"reports file {str(path)!r} has no array {missing[0]!r} (it holds "
                                 f"{sorted(data.files)}); it needs reports_x and reports_x_prime")
            x = data["x"].item() if "x" in data else x
            xp = data["x_prime"].item() if "x_prime" in data else xp
            rx, rxp, subject = data["reports_x"], data["reports_x_prime"], path.name
    else:
        rx, rxp = reports
        subject = "reports"
    result = audit_reports(rx, rxp, epsilon, x, xp, support, confidence, subject)
    return AuditReport([result], "reports", _notes([result], "reports", confidence, 1))


def _notes(results, mode: str, confidence: float, n: int) -> list[str]:
    what = {"sample": "the client's code ran for every trial",
            "declared": "counts drawn from the mechanism's declared probabilities: its code did NOT run; "
                        "this checks the stated math only",
            "repeated": "each trial is one device whose client ran for all its reports (same key, same value)",
            "reports": "the reports given"}[mode]
    total = sum(r.seconds for r in results)
    notes = [f"{len(results)} audit(s) in {total:.2f} s, {mode} mode: {what}; confidence {confidence:g}"
             + (" family-wise (Bonferroni over the audits)" if n > 1 else "")
             + "; FAIL = the lower bound exceeds the claimed ε (a correct client FAILs with probability "
             f"≤ {1 - confidence:.2g})"]
    for r in results:
        if r.delta > 0:
            notes.append(f"{r.subject} [{r.target}]: central (ε, δ) of one round at ε = {r.epsilon_claimed:g}, "
                         f"δ = {r.delta:.4g} (exact, docs/math.md §10.2); neighbouring fleets: {r.x} and "
                         f"{r.x_prime} holders of the device's prefix; bound ln((P[S|x] − δ)/P[S|x′])")
        if r.verdict == "INCONCLUSIVE":
            need = trials_for_power(r.epsilon_claimed, 1 - r.confidence)
            notes.append(f"INCONCLUSIVE {r.subject}: {r.trials:,} trial(s) per input can show at most "
                         f"ε ≥ {r.largest_bound:.3g}, not more than the claimed {r.epsilon_claimed:g}: no "
                         f"evidence either way (at least {need:,} trials per input are needed to test it)")
    return notes


def detection_table(epsilons=EPSILONS, excesses=(0.05, 0.1, 0.25, 0.5, 1.0), domain_size: int = 10,
                    confidence: float = 0.95):
    """Median trials per input to flag GRR(domain_size) whose true ε is claimed·(1 + excess), and the
    planted bug (flip probability 10 % too small), on the audit's own event (report == x)."""
    import pandas as pd

    from ldpsim.evaluation.audit.planted import true_epsilon

    epsilons = check_epsilons(epsilons)
    confidence = check_real("audit", "confidence", confidence, 0.0, 1.0)

    def grr_probs(eps):
        e = math.exp(eps)
        return e / (e + domain_size - 1), 1 / (e + domain_size - 1)

    rows = []
    for eps in epsilons:
        row = {"epsilon_claimed": eps}
        for x in excesses:
            row[f"+{100 * x:g}%"] = trials_to_detect(*grr_probs(eps * (1 + x)), eps, 1 - confidence)
        p, q = grr_probs(eps)
        row["planted bug: true ε"] = true_epsilon(eps, domain_size)
        row["planted bug: trials"] = trials_to_detect(1 - 0.9 * (1 - p), 0.9 * q, eps, 1 - confidence)
        rows.append(row)
    return pd.DataFrame(rows)



def audit_whole_run(designs=None, *, bug: str | None = None, trials=None, confidence: float = 0.95,
                    seed: int = 0, days: int | None = None, rounds_per_day: int | None = None,
                    delta: float = DELTA_AUDIT) -> AuditReport:
    """The audit of a whole run (mode ``"run"``, :mod:`ldpsim.evaluation.audit.run_audit`, docs/math.md §11.7):
    per design, one canary person through D days × R rounds, its user-level ε_lb beside the accountant's
    ε per person over the run.

    Parameters
    ----------
    designs : sequence of str, optional
        Of :data:`~ldpsim.scenarios.studies.audit.run_designs.ALL_DESIGNS` (default: all).
    bug : str, optional
        A planted bug (:data:`~ldpsim.scenarios.studies.audit.run_designs.ALL_BUGS`) every audited design carries
        (designs that cannot carry it are skipped, and said so).
    trials : int, optional
        Runs per world (default: per design, the most its planted bugs need to FAIL with probability ≥ 0.95,
        :func:`run_trials`, and at least the runs at which some outcome exceeds the audited claim).
    confidence : float in (0, 1)
    seed : int
    days, rounds_per_day : int, optional
        The run's length (default: each design's, :func:`plan_run`).
    delta : float
        δ of the (ε, δ) claims (central, amplified, thresholded and enclave designs; default
        :data:`~ldpsim.mechanisms.deltas.DELTA_AUDIT`).

    Raises
    ------
    InputError
        An unknown design or bug, a length or δ out of range.
    CostError
        Before any run, when the runs given or needed exceed what the run audit starts
        (:mod:`~ldpsim.scenarios.studies.audit.run_cost`): the message names the runs, the cap and what to change.
    """
    lengths = {"days": days, "rounds_per_day": rounds_per_day, "delta": delta}
    designs = tuple(rd.check_design(d) for d in (rd.ALL_DESIGNS if designs is None else designs))
    if bug is not None and bug not in rd.ALL_BUGS:
        raise InputError(f"The 'bug' parameter of the run audit must be one of {', '.join(rd.ALL_BUGS)} or None. "
                         f"Got {bug!r} instead.")
    confidence = check_real("audit", "confidence", confidence, 0.0, 1.0)
    seed = check_int("audit", "seed", seed, low=0)
    if trials is not None:
        trials = check_trials(trials)
    skipped = [d for d in designs if bug is not None and bug not in rd.design_bugs(d)]
    if len(skipped) == len(designs):      # nothing to audit: no evidence, never a PASS
        carriers = [d for d in rd.ALL_DESIGNS if bug in rd.design_bugs(d)]
        raise InputError(f"The run audit has no design to audit: 'designs' is {list(designs)}"
                         + (f" and none carries the planted {bug!r} (designs that do: {', '.join(carriers)})"
                            if designs else "") + ".")
    plans = [plan_run(d, bug, **lengths) for d in designs if d not in skipped]
    for p in plans if trials is not None else ():
        run_cost.check_runs(p, trials)
    counts = [trials or run_cost.refutable_runs(p, confidence, run_trials(p.design, confidence, **lengths))
              for p in plans]
    run_cost.check_total(plans, counts)
    streams = np.random.SeedSequence(seed).spawn(len(rd.STREAMS))   # one stream a design (rd.STREAMS)
    rngs = [np.random.default_rng(streams[rd.STREAMS.index(p.design)]) for p in plans]
    results = [audit_run(p, t, r, confidence) for p, t, r in zip(plans, counts, rngs)]
    notes = [f"{p.design}: claim = {p.claim_source}, {p.claim:.4g} over {p.days} days × {p.rounds_per_day} rounds; "
             f"event {p.description}; P[S|A] = {p.p_a:.4g}, P[S|B] = {p.p_b:.4g} (ln((P[S|A] − δ)/P[S|B]) {event_epsilon(p):.4g}, δ = {p.delta:g})"
             for p in plans]
    notes += [f"{d}: skipped, the planted {bug!r} does not apply (it carries {', '.join(rd.design_bugs(d))})"
              for d in skipped]
    return AuditReport(results, "run", notes + [f"{len(results)} run audit(s): each trial one complete run of the canary; confidence "
                          f"{confidence:g} per audit; FAIL = ε_lb above the claimed ε per person over the run "
                          f"(a memoized design's: per value, same repetition pattern; audit.csv: scope)"])


def run_claim(design: str, days: int | None = None, rounds_per_day: int | None = None,
              epsilon_round: float | None = None, delta: float = DELTA_AUDIT) -> float:
    """The accountant's ε per person over the run (δ = 0; :func:`~ldpsim.evaluation.privacy.accountant.device_spend`,
    the number a run summary prints) of a deployment of ``design`` over ``days`` days, ``rounds_per_day``
    reports (a trie: rounds) a day at ``epsilon_round`` each (defaults: the run audit's) — a numeric mechanism's as a
    reading use case, the personalized SDPM's (which no use case carries) the same accountant's losses of its
    fresh reports composed; a central design's at ``delta``; for the designs of
    :data:`~ldpsim.scenarios.studies.audit.run_designs.PLANS`, their own accountant's claim (:func:`plan_run`)."""
    if rd.check_design(design) in rd.PLANS:
        return plan_run(design, days=days, rounds_per_day=rounds_per_day, delta=delta).claim
    days, rounds, eps = days or ra.DAYS, rounds_per_day or ra.ROUNDS_PER_DAY, epsilon_round or ra.EPSILON_ROUND
    if design in ra.CENTRAL:   # the trust accountant's ε per device over the run, add/remove, at the audit's δ
        model = trust_model(design, noise=IntegerNoise(*ra.CENTRAL[design]))
        return run_epsilon(model, 2, days, delta, rounds, "add-remove")
    params = tuple(ra.oracle_params(design, eps).items()) if design in ra.ORACLES + ra.NUMERIC else ()
    if design == "personalized-sdpm":   # no use case carries it (its client takes each user's group): the same
        # accountant's losses of the run's fresh reports, composed as device_spend composes a fresh use case's
        spent = losses(ra.run_mechanism(design, days, rounds, eps), days * rounds)
        return basic_composition(e * n for e, n in spent.items())
    if design in ("ldp_trie", "gboard"):
        uc = UseCase("words", "word", design, (("epsilon", eps * days * rounds), ("length", rounds), ("alphabet", "ab")))
        cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=days,
                               words=("ab", "ba"), word_weights=(1, 1))
    elif design in ra.NUMERIC:         # a reading (typing speed) reported ``rounds`` times a day; the ε does not
        # depend on how its mean is estimated (EM over READING_BINS bins; 1BitMean: its unbiased bit average)
        uc = UseCase("typing_speed", "reading", design, params, daily_limit=rounds, value_range=(0.0, 1.0),
                     em_bins=None if design == "onebitmean" else READING_BINS)
        cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=days)
    else:
        uc = UseCase("planted", "event", design, params, daily_limit=rounds)
        cfg = DeploymentConfig(items=("x", "y"), item_weights=(1, 1), use_cases=(uc,), n_days=days)
    return device_spend(cfg).total(cfg.use_cases[0].guarantee.label, "epsilon_person")


def plan_run(design: str, bug: str | None = None, days: int | None = None, rounds_per_day: int | None = None,
             epsilon_round: float | None = None, delta: float = DELTA_AUDIT) -> RunPlan:
    """The run audit's plan of ``design`` judged against :func:`run_claim`: at its defaults, or over ``days`` ×
    ``rounds_per_day`` rounds (the frequency oracles and tries at ``epsilon_round`` a round) with a central
    claim at ``delta``."""
    if rd.check_design(design) in rd.PLANS:
        sizes = {k: v for k, v in (("days", days), ("rounds_per_day", rounds_per_day)) if v is not None}
        return rd.design_plan(design, bug, delta, **sizes)
    lengths = {"days": days or ra.DAYS, "rounds_per_day": rounds_per_day or ra.ROUNDS_PER_DAY,
               "epsilon_round": epsilon_round or ra.EPSILON_ROUND, "delta": delta}
    return run_plan(design, run_claim(design, **lengths), bug=bug, claim_short=_claim_short(design, **lengths),
                    **lengths)


def run_trials(design: str, confidence: float = 0.95, **lengths) -> int:
    """Runs per world of ``design``'s audit: the most any of its planted bugs needs to FAIL with probability
    ≥ 0.95 (:func:`~ldpsim.scenarios.studies.audit.run_cost.needed_runs`: a bug that needs more runs than the
    audit starts is refused, :class:`~ldpsim.evaluation.cost.CostError`); ``lengths`` as :func:`plan_run`'s."""
    plans = {b: plan_run(design, b, **lengths) for b in rd.design_bugs(design)}
    return run_cost.needed_runs(plans, design, confidence)


def _claim_short(design: str, days: int, rounds_per_day: int, epsilon_round: float, delta: float) -> float | None:
    """The accountant over one round fewer, for the central designs (the local ones: claim − ε₀)."""
    if design not in ra.CENTRAL:
        return None
    return run_epsilon(trust_model(design, noise=IntegerNoise(*ra.CENTRAL[design])), 2, 1, delta,
                       days * rounds_per_day - 1, "add-remove")
