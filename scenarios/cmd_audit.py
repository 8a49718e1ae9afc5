"""``ldpsim audit``: an empirical lower bound on ε for our mechanisms or any client (Arcolezi & Gambs 2024).

A thin layer over :func:`ldpsim.scenarios.studies.audit.gate.audit` (``ldpsim.audit`` in a notebook: the same
numbers and messages). Four ways in (exactly one):

* ``--mechanism NAME [--param K=V ...] [--target T]`` — one of ours; ``--mode sample`` (default) runs
  its client, ``--mode declared`` only draws counts from its declared probabilities (its code does not
  run), ``--mode repeated [--days T]`` audits the T reports of one device jointly (memoizing clients);
* ``--all`` — every mechanism of the registry at each ``--epsilons``, every target, family-wise
  confidence (Bonferroni);
* ``--client MODULE:FUNC [--client-arg K=V ...] --domain-size D --epsilon E`` — any Python callable
  ``perturb(values, rng) -> reports`` (``--mode repeated``: ``perturb(values, keys, rng)``); this
  imports MODULE and calls FUNC in this process: it runs that code as ``python -c`` would;
* ``--reports FILE.npz --epsilon E`` — reports made elsewhere: arrays ``reports_x``, ``reports_x_prime``;
* ``--run [--design NAME ...] [--planted BUG]`` — a whole run: one canary person through every round of
  every day of each design (frequency oracles, tries, secure aggregation, two servers, shuffling, the
  confidential enclave, TrieHH, sample-and-threshold, PEM, TreeHist, SFP, the prefix tree), judged against the accountant's ε per person over
  the run.

``--pure-ldp`` audits pure-ldp's clients in the benchmark's peers venv. ``--detection-table`` prints the
trials needed to detect an ε larger than claimed instead. Output: the table, what was done (mode) and
the verdicts; ``--out DIR`` also writes ``audit.csv`` and ``audit.json``. Exit code 0 when every audit
PASSES, 1 when one FAILS or is INCONCLUSIVE (too few trials for any outcome to exceed the claim: a gate
without evidence never passes), 2 on bad input or a refused cost (a run audit is estimated and refused before
its first run: :mod:`ldpsim.scenarios.studies.audit.run_cost`).
"""

from __future__ import annotations

import argparse
import json
import math

from ldpsim.scenarios import options

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)


def _trials(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of trials >= 1 (e.g. 1e6); got {text!r}") from None
    if not math.isfinite(value) or value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"must be a finite whole number of trials >= 1 (e.g. 1e6); got {text!r}")
    return int(value)


def _epsilon(text: str) -> float:
    from ldpsim.mechanisms._validation import EPSILON_MAX, EPSILON_MIN
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not EPSILON_MIN <= value <= EPSILON_MAX:
        raise argparse.ArgumentTypeError(f"must be an ε in [{EPSILON_MIN:g}, {EPSILON_MAX:g}]; got {text!r}")
    return value


def add_arguments(parser):
    from ldpsim.scenarios.studies.audit.run_catalog import ALL_BUGS, ALL_DESIGNS
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--mechanism", metavar="NAME", help="audit one of ours by registry name, e.g. grr, oue, "
                                                           "cms, rappor, dbitflip, onebitmean (default: none)")
    what.add_argument("--all", action="store_true", help="audit every mechanism with a plan at each --epsilons (default: off)")
    what.add_argument("--client", metavar="MODULE:FUNC",
                      help="audit any perturb(values, rng) -> reports callable; imports MODULE and runs FUNC in "
                           "this process, as `python -c` would: only name code you trust (default: none)")
    what.add_argument("--reports", metavar="FILE", help="audit reports made elsewhere (.npz: reports_x, reports_x_prime) (default: none)")
    what.add_argument("--run", action="store_true",
                      help="audit a whole run: a canary person through every round of every day of each design "
                           "(--design), its user-level ε lower bound beside the accountant's ε per person over the run "
                           "(default: off)")
    what.add_argument("--detection-table", action="store_true", help="print the trials needed to detect excess ε (default: off)")
    what.add_argument("--pure-ldp", action="store_true",
                      help="audit pure-ldp's GRR, OUE, OLH, CMS, HCMS clients at each --epsilons, in the peers' venv (default: off)")
    parser.add_argument("--design", action="append", metavar="NAME",
                        help=f"--run: a design to audit, repeatable: {', '.join(ALL_DESIGNS)} (default: every design)")
    parser.add_argument("--planted", metavar="BUG",
                        help="--run: plant a bug in every audited design that can carry it, to see the audit FAIL it: "
                             f"{', '.join(ALL_BUGS)} (default: none)")
    parser.add_argument("--rounds-per-day", type=options.positive_int, metavar="R",
                        help="--run: rounds (reports) a day of the audited run (default: each design's)")
    parser.add_argument("--delta", type=options.delta,
                        help="--run: δ of the (ε, δ) claims of the central, amplified, threshold and enclave designs "
                             "(default: 1e-3)")
    parser.add_argument("--target", metavar="NAME",
                        help="what to audit of --mechanism: rappor 'report' (ε₁) or 'permanent' (ε_∞), "
                             "personalized 'group0', 'group1', ... (default: the first; --all audits every target)")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="a mechanism parameter (JSON value), repeatable (default: small domains and sketches)")
    parser.add_argument("--client-arg", action="append", default=[], metavar="K=V",
                        help="keyword argument of a client factory (JSON value), repeatable; the factory is "
                             "called with them and must return the client (default: none)")
    parser.add_argument("--support", metavar="MODULE:FUNC",
                        help="support(reports, item) -> bool array for external reports; runs that code "
                             "(default: ids or 0/1 rows)")
    parser.add_argument("--epsilon", type=_epsilon, help="the claimed ε (required for --client, --reports; "
                                                         "--mechanism default: 1; --mode repeated: ε of a device's reports together)")
    parser.add_argument("--epsilons", type=_epsilon, nargs="+", default=list(EPSILONS),
                        help=f"ε values for --all and --detection-table (default: {' '.join(map(str, EPSILONS))})")
    parser.add_argument("--domain-size", type=options.positive_int, help="the client's domain size (for --client; default: none)")
    parser.add_argument("--pair", nargs=2, type=int, default=[0, 1], metavar=("X", "X_PRIME"),
                        help="neighbouring inputs for --client/--reports (default: 0 1)")
    parser.add_argument("--trials", type=_trials,
                        help="trials per input: reports (default: 1e6; --pure-ldp: 1e5, one call per report), "
                             "or devices in --mode repeated (default: 1e5), or runs per world with --run (default: "
                             "the runs at which every planted bug FAILS with probability 0.95; at most an hour of "
                             "estimated CPU)")
    parser.add_argument("--mode", choices=("sample", "declared", "repeated"), default="sample",
                        help="sample: run the client; declared: counts from the declared probabilities only "
                             "(the code does not run); repeated: --days reports of one device jointly (default: sample)")
    parser.add_argument("--days", type=options.positive_int,
                        help="--mode repeated: reports per device, same key and value (default: 7); --run: days "
                             "of the audited run (default: each design's)")
    parser.add_argument("--confidence", type=options.fraction, default=0.95, help="confidence of the bound (default: 0.95)")
    parser.add_argument("--force", action="store_true",
                        help="replace another audit's results in --out (default: off)")
    options.add_seed(parser, "0")
    options.add_out(parser, "none: print only")
    options.only_with(parser, "--client-arg", "--client")
    options.only_with(parser, "--design", "--run")
    options.only_with(parser, "--planted", "--run")
    options.only_with(parser, "--rounds-per-day", "--run")
    options.only_with(parser, "--delta", "--run")
    options.only_with(parser, "--support", "--client", "--reports")


def _kv(pairs: list[str], flag: str) -> dict:
    from ldpsim.runtime.errors import InputError
    out = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{flag} takes K=V; got {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run(args) -> int:
    from ldpsim.scenarios.studies.audit.gate import AuditReport, audit, detection_table
    if args.detection_table:
        table = detection_table(args.epsilons, confidence=args.confidence)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if args.out:
            from ldpsim.scenarios.studies.audit.gate import write_audit_folder
            write_audit_folder(args.out, {"detection.csv": lambda tmp: table.to_csv(tmp, index=False)},
                               table.to_csv(index=False), args.force)
        return 0
    if args.run:
        from ldpsim.scenarios.studies.audit.gate import audit_whole_run
        from ldpsim.mechanisms.deltas import DELTA_AUDIT
        report = audit_whole_run(args.design, bug=args.planted, trials=args.trials, confidence=args.confidence,
                                 seed=args.seed or 0, days=args.days, rounds_per_day=args.rounds_per_day,
                                 delta=args.delta or DELTA_AUDIT)
    elif args.pure_ldp:
        from ldpsim.scenarios.studies.audit.peers_audit import audit_pure_ldp
        results = audit_pure_ldp(args.epsilons, args.trials or 100_000, seed=args.seed or 0, confidence=args.confidence,
                                 log=lambda msg: options.say(args, msg))
        report = AuditReport(results, "sample")
    else:
        common = dict(epsilon=args.epsilon, mode=args.mode, days=args.days, trials=args.trials,
                      confidence=args.confidence, seed=args.seed or 0)
        if args.mechanism or args.all:
            report = audit("all" if args.all else args.mechanism, params=_kv(args.param, "--param"),
                           target=args.target, epsilons=args.epsilons, **common)
        elif args.client:
            report = audit(client=args.client, client_args=_kv(args.client_arg, "--client-arg"),
                           domain_size=args.domain_size, pair=tuple(args.pair), support=args.support, **common)
        else:
            report = audit(reports=args.reports, pair=tuple(args.pair), support=args.support, **common)
    print("\n".join(report.table_lines()))
    for note in report.notes:
        options.say(args, note)
    if args.out:
        report.to_folder(args.out, force=args.force)
    return report.exit_code
