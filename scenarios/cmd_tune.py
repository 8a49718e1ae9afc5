"""``ldpsim tune``: the cheapest CMS setting (bandwidth, then k·m memory) meeting an accuracy target.

Example: ``ldpsim tune --workload harmonic --domain-size 2000 --n 1000000 --epsilon 4
--target "rank_deviation<=1" --top 20``.
"""

from __future__ import annotations

import sys

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.evaluation.sweep.tune import DEFAULT_EPSILONS, DEFAULT_K, DEFAULT_M, tune
from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("--workload", default="harmonic", help="workload name (see ldpsim.evaluation.workloads.make)")
    parser.add_argument("--domain-size", type=options.positive_int, help="domain size D of synthetic workloads (default: the workload's own)")
    parser.add_argument("--words", type=options.positive_int, dest="top_words", help="number of tokens of the words/emoji workloads (default: the workload's own)")
    parser.add_argument("--n", type=options.positive_int, default=1_000_000, help="number of users")
    parser.add_argument("--mechanism", default="cms", help="a sketch taking k and m (cms, hcms)")
    parser.add_argument("--epsilon", type=options.positive_float, default=4.0, help="privacy budget (fixed unless --search-epsilon)")
    parser.add_argument("--target", required=True, help='e.g. "rank_deviation<=1" or "top_k_precision>=0.9"')
    parser.add_argument("--top", type=options.positive_int, default=20, help="metrics over the top-N items")
    parser.add_argument("--repeats", type=options.positive_int, default=20,
                        help="repeats per candidate setting (its mean and standard error)")
    parser.add_argument("--k", type=options.positive_int, nargs="+", default=list(DEFAULT_K), help="hash-function counts to try")
    parser.add_argument("--m", type=options.positive_int, nargs="+", default=list(DEFAULT_M), help="sketch widths to try")
    parser.add_argument("--search-epsilon", action="store_true", help="also try every ε of --epsilons")
    parser.add_argument("--epsilons", type=options.positive_float, nargs="+", default=list(DEFAULT_EPSILONS),
                        help="the ε values --search-epsilon tries")
    parser.add_argument("--over", choices=("max", "mean"), default="max",
                        help="every top-N item must meet the target (max) or their average (mean)")
    parser.add_argument("--confidence", type=options.fraction, default=0.95, help="one-sided confidence of the bound")
    parser.add_argument("--path", choices=("auto", "direct", "reports"), default="direct",
                        help="direct: draw each aggregate from its exact law; reports: build every user's report")
    options.add_seed(parser, "0")


def run(args) -> int:
    workload = {"name": args.workload, "n": args.n}
    seed = 0 if args.seed is None else args.seed
    if args.domain_size is not None:
        workload["domain_size"] = args.domain_size
    if args.top_words is not None:
        workload["top"] = args.top_words
    try:
        table, best = tune(workload, args.target, mechanism=args.mechanism, epsilon=args.epsilon, ks=args.k,
                           ms=args.m, epsilons=args.epsilons if args.search_epsilon else None, top=args.top,
                           repeats=args.repeats, path=args.path, seed=seed, confidence=args.confidence,
                           over=args.over, report=lambda line: print(line, flush=True))
    except (ScenarioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print()
    print(table.to_string(index=False))
    if best is None:
        print(f"\nno setting tried meets {args.target}")
        return 0
    print(f"\ncheapest setting meeting {args.target}: k={best['k']} m={best['m']} ε={best['epsilon']:g} "
          f"({best['report_bytes']} bytes per report, k·m = {best['memory_km']})")
    return 0
