"""``ldpsim audit``: an empirical lower bound on ε for our mechanisms or any client (Arcolezi & Gambs 2024).

Four ways in (exactly one):

* ``--mechanism NAME [--param K=V ...] [--target T]`` — one of ours; ``--mode exact`` (default) draws
  the event counts from the mechanism's own probabilities, ``--mode sample`` runs its client;
* ``--all`` — every mechanism of the registry at each ``--epsilons`` (default 0.5 1 2 4 8), every
  target of it (RAPPOR: one report and ε_∞; personalized: each group), each audit at confidence
  1 − (1 − c)/K for K audits, so a correct battery FAILS with probability ≤ 1 − c;
* ``--client MODULE:FUNC [--client-arg K=V ...] --domain-size D --epsilon E`` — any Python callable
  ``perturb(values, rng) -> reports`` (with ``--client-arg`` the callable is a factory returning it);
  ``--support MODULE:FUNC`` tells which item a report supports when it is not an id or a 0/1 row;
* ``--reports FILE.npz --epsilon E`` — reports made elsewhere: arrays ``reports_x``, ``reports_x_prime``
  (and optionally scalars ``x``, ``x_prime``).

``--pure-ldp`` audits pure-ldp's clients in the benchmark's peers venv (one ``privatise`` call per
report, so keep ``--trials`` near 1e5). ``--detection-table`` prints the trials needed to detect an ε larger than claimed instead.
Output: ε claimed, ε lower bound, confidence, the pair and event, PASS/FAIL; ``--out DIR`` also writes
``audit.csv``. Exit code 1 when an audit FAILS (a finding, like ``check``'s regression), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ldpsim.scenarios import options

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)

#: parameters of every mechanism of the registry besides ε (small domains and sketches: an audit's cost
#: is its trials; the plans sit on the privacy boundary whatever the size)
DEFAULTS = {
    "grr": {"domain_size": 10}, "rr": {}, "urr": {"domain_size": 10, "sensitive": [0, 1, 2]},
    "sdgrr": {"domain_size": 10, "high": [0, 1, 2, 3, 4]},
    "personalized-sdgrr": {"domain_size": 10, "partitions": [[0, 1, 2, 3, 4], [0, 1]]},
    "oue": {"domain_size": 10}, "olh": {"domain_size": 10}, "cms": {"k": 64, "m": 256}, "hcms": {"k": 64, "m": 256},
    "pm": {}, "sdpm": {"low": [-0.5, 0.5]},
    "personalized-sdpm": {"ranges": [[-0.5, 0.5], [-0.25, 0.25]], "bins": 64},
    "rappor": {"num_bits": 16, "num_hashes": 2, "cohorts": 8},
    "hr": {"domain_size": 6}, "sue": {"domain_size": 6}, "she": {"domain_size": 6}, "the": {"domain_size": 6},
    "blh": {"domain_size": 10}, "flh": {"domain_size": 6}, "dbitflip": {"domain_size": 6, "d": 2},
    "onebitmean": {"m": 10.0},
    "sfp": {"length": 4, "alphabet": "abcd", "hash_bits": 4, "word_k": 16, "word_m": 64, "fragment_k": 16,
            "fragment_m": 64},
    "pem": {"length": 4, "alphabet": "abcd", "start": 1, "pool": 64},
    "treehist": {"length": 4, "alphabet": "abcd", "k": 16, "m": 64},
}


def _trials(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of trials >= 1 (e.g. 1e6); got {text!r}") from None
    if not value >= 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"must be a whole number of trials >= 1; got {text!r}")
    return int(value)


def add_arguments(parser):
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--mechanism", metavar="NAME", help=f"audit one of ours ({', '.join(DEFAULTS)}) (default: none)")
    what.add_argument("--all", action="store_true", help="audit every mechanism with a plan at each --epsilons (default: off)")
    what.add_argument("--client", metavar="MODULE:FUNC", help="audit any perturb(values, rng) -> reports callable (default: none)")
    what.add_argument("--reports", metavar="FILE", help="audit reports made elsewhere (.npz: reports_x, reports_x_prime) (default: none)")
    what.add_argument("--detection-table", action="store_true", help="print the trials needed to detect excess ε (default: off)")
    what.add_argument("--pure-ldp", action="store_true",
                      help="audit pure-ldp's GRR, OUE, OLH, CMS, HCMS clients at each --epsilons, in the peers' venv (default: off)")
    parser.add_argument("--target", metavar="NAME",
                        help="what to audit of --mechanism: rappor 'report' (ε₁) or 'permanent' (ε_∞), "
                             "personalized 'group0', 'group1', ... (default: the first; --all audits every target)")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="a mechanism parameter (JSON value), repeatable (default: the DEFAULTS of the module)")
    parser.add_argument("--client-arg", action="append", default=[], metavar="K=V",
                        help="keyword argument of a client factory (JSON value), repeatable (default: none)")
    parser.add_argument("--support", metavar="MODULE:FUNC",
                        help="support(reports, item) -> bool array for external reports (default: ids or 0/1 rows)")
    parser.add_argument("--epsilon", type=options.positive_float, help="the claimed ε (required for --client, --reports; --mechanism default: 1)")
    parser.add_argument("--epsilons", type=options.positive_float, nargs="+", default=list(EPSILONS),
                        help=f"ε values for --all and --detection-table (default: {' '.join(map(str, EPSILONS))})")
    parser.add_argument("--domain-size", type=options.positive_int, help="the client's domain size (for --client; default: none)")
    parser.add_argument("--pair", nargs=2, type=int, default=[0, 1], metavar=("X", "X_PRIME"),
                        help="neighbouring inputs for --client/--reports (default: 0 1)")
    parser.add_argument("--trials", type=_trials, default=1_000_000, help="trials per input (default: 1e6)")
    parser.add_argument("--mode", choices=("exact", "sample"), default="exact",
                        help="ours: exact event probabilities or the real client (default: exact)")
    parser.add_argument("--confidence", type=options.fraction, default=0.95, help="confidence of the bound (default: 0.95)")
    options.add_seed(parser, "0")
    options.add_out(parser, "none: print only")


def _kv(pairs: list[str], flag: str) -> dict:
    out = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} takes K=V; got {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _make(name: str, epsilon: float, params: dict):
    from ldpsim.mechanisms import make

    merged = {**DEFAULTS.get(name.lower(), {}), **params, "epsilon": epsilon}
    for key in ("sensitive", "high", "low", "partitions", "ranges"):
        if isinstance(merged.get(key), list):
            merged[key] = tuple(tuple(v) if isinstance(v, list) else v for v in merged[key])
    return make(name, **merged)


def _results(args) -> list:
    import numpy as np

    from ldpsim.evaluation.audit import audit_client, audit_mechanism, audit_reports, load_callable, plan_targets

    rng = np.random.default_rng(args.seed if args.seed is not None else 0)
    if args.pure_ldp:
        from ldpsim.evaluation.audit.peers_audit import audit_pure_ldp
        results = audit_pure_ldp(args.epsilons, args.trials, seed=args.seed or 0, confidence=args.confidence,
                                 log=lambda msg: options.say(args, msg))
        return results
    if args.mechanism or args.all:
        params = _kv(args.param, "--param")
        if args.mechanism and args.mechanism.lower() not in DEFAULTS:
            raise ValueError(f"no audit plan for mechanism {args.mechanism!r}; auditable: {', '.join(DEFAULTS)}")
        if args.target and not args.mechanism:
            raise ValueError("--target goes with --mechanism (--all audits every target)")
        if args.mechanism:
            eps = params.pop("epsilon", args.epsilon if args.epsilon is not None else 1.0)
            jobs = [(_make(args.mechanism, eps, params), args.target)]
        else:
            mechs = [_make(name, e, {}) for name in DEFAULTS for e in args.epsilons]
            jobs = [(mech, target) for mech in mechs for target in plan_targets(mech)]
        # a battery splits the false-FAIL rate over its audits (Bonferroni): family-wise 1 − confidence
        each = 1 - (1 - args.confidence) / len(jobs)
        return [audit_mechanism(mech, args.trials, rng, args.mode, each, target) for mech, target in jobs]
    if args.epsilon is None:
        raise ValueError("--epsilon (the claimed ε) is required for --client and --reports")
    support = load_callable(args.support) if args.support else None
    x, xp = args.pair
    if args.client:
        if args.domain_size is None:
            raise ValueError("--domain-size is required for --client")
        if not (0 <= x < args.domain_size and 0 <= xp < args.domain_size) or x == xp:
            raise ValueError(f"--pair must be two different inputs in [0, {args.domain_size}); got {x} {xp}")
        perturb = load_callable(args.client, _kv(args.client_arg, "--client-arg"))
        return [audit_client(perturb, args.epsilon, args.trials, x, xp, support, rng, args.confidence, args.client)]
    with np.load(args.reports, allow_pickle=False) as data:
        x = data["x"].item() if "x" in data else x
        xp = data["x_prime"].item() if "x_prime" in data else xp
        return [audit_reports(data["reports_x"], data["reports_x_prime"], args.epsilon, x, xp, support,
                              args.confidence, Path(args.reports).name)]


def detection_table(epsilons, excesses=(0.05, 0.1, 0.25, 0.5, 1.0), domain_size: int = 10,
                    confidence: float = 0.95):
    """Median trials per input to flag GRR(domain_size) whose true ε is claimed·(1 + excess), and the
    planted bug (flip probability 10 % too small), on the audit's own event (report == x)."""
    import math

    import pandas as pd

    from ldpsim.evaluation.audit import trials_to_detect
    from ldpsim.evaluation.audit.planted import true_epsilon

    def grr_probs(eps):
        e = math.exp(eps)
        return e / (e + domain_size - 1), 1 / (e + domain_size - 1)

    rows = []
    for eps in epsilons:
        row = {"epsilon_claimed": eps}
        for x in excesses:
            row[f"+{100 * x:g}%"] = trials_to_detect(*grr_probs(eps * (1 + x)), eps, 1 - confidence)
        e = math.exp(eps)
        p, q = e / (e + domain_size - 1), 1 / (e + domain_size - 1)
        row["planted bug: true ε"] = true_epsilon(eps, domain_size)
        row["planted bug: trials"] = trials_to_detect(1 - 0.9 * (1 - p), 0.9 * q, eps, 1 - confidence)
        rows.append(row)
    return pd.DataFrame(rows)


def _print(results, args) -> None:
    head = f"{'subject':<44}{'ε claimed':>10}{'ε lower':>10}{'conf':>8}  {'pair':<12}{'trials':>12}  verdict  event"
    print(head)
    for r in results:
        suffix = f" [{r.target}]" if r.target else ""
        subject = r.subject + suffix if len(r.subject + suffix) <= 43 else r.subject[:40 - len(suffix)] + "..." + suffix
        print(f"{subject:<44}{r.epsilon_claimed:>10g}{r.epsilon_lower_bound:>10.4f}{r.confidence:>8.5g}  "
              f"{f'{r.x!r},{r.x_prime!r}':<12}{r.trials:>12,}  {r.verdict:<7}  {r.event}")
    total = sum(r.seconds for r in results)
    mode = args.mode if (args.mechanism or args.all) else "sample"
    options.say(args, f"{len(results)} audit(s) in {total:.2f} s ({mode} "
                      f"mode); FAIL = the lower bound exceeds the claimed ε at the stated confidence")


def run(args) -> int:
    try:
        if not 0 < args.confidence < 1:
            raise ValueError(f"--confidence must be in (0, 1); got {args.confidence}")
        if args.detection_table:
            table = detection_table(args.epsilons, confidence=args.confidence)
            print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            if args.out:
                _write_table(Path(args.out), "detection.csv", table)
            return 0
        results = _results(args)
    except (ValueError, TypeError, ImportError, AttributeError, KeyError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print(results, args)
    if args.out:
        import pandas as pd

        try:
            _write_table(Path(args.out), "audit.csv", pd.DataFrame([r.as_row() for r in results]))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0 if all(r.passed for r in results) else 1


def _write_table(out: Path, name: str, table) -> None:
    """Write ``table`` durably as ``out/name`` in a locked audit folder (new, empty or an earlier audit's)."""
    from ldpsim.runtime.runfolder import RunFolder
    from ldpsim.runtime.durable import write_file
    with RunFolder.open(out, "audit", {"fingerprint": "audit"}, resume=False, replace=True) as folder:
        write_file(out / name, lambda tmp: table.to_csv(tmp, index=False))
        folder.finalize(adopt=True)
