"""``ldpsim check SCENARIO --baseline FILE``: rerun a small scenario and compare it with a stored baseline.

Exit codes: 0 every (cell, metric) within its statistical tolerance (see :mod:`ldpsim.scenarios.studies.sweep.regression`),
1 a regression (a metric moved beyond tolerance, or a cell or metric missing or new), 2 a usage or
scenario error. ``--update-baseline`` (re)writes the baseline from this run instead and exits 0. A thin
layer over :func:`ldpsim.scenarios.api.check` (``ldpsim.check``).
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", help="a sweep scenario: a TOML file or a shipped name; keep it small: "
                                         "it runs in this process")
    parser.add_argument("--baseline", required=True, metavar="FILE",
                        help="baseline JSON to compare with (or write); a shipped name such as `check` means "
                             "the shipped scenarios/baselines/check.json")
    parser.add_argument("--update-baseline", action="store_true",
                        help="write FILE from this run instead of comparing (default: compare)")
    parser.add_argument("--alpha", type=options.fraction, default=0.001,
                        help="family-wise false-alarm rate, Bonferroni over the compared metrics (default: 0.001)")
    options.add_seed(parser, "[scenario] seed; a changed random stream must still pass, and sketches then "
                             "draw another hash family")
    options.add_out(parser, "a temporary folder; an --out folder must be empty or new")


def run(args) -> int:
    from ldpsim.scenarios.api import check
    result = check(args.scenario, args.baseline, update=args.update_baseline, alpha=args.alpha, seed=args.seed,
                   out=args.out)
    print(result.describe())
    return 0 if result.passed else 1
