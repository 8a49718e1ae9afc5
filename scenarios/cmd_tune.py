"""``ldpsim tune``: the cheapest CMS setting (bandwidth, then k·m memory) meeting an accuracy target.

Example: ``ldpsim tune --workload harmonic --domain-size 2000 --devices 1000000 --epsilon 4
--target "rank_deviation<=1" --top 20``. A thin layer over :func:`ldpsim.scenarios.studies.sweep.tune.tune`
(``ldpsim.tune`` in a notebook).
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("--workload", default="harmonic", help="workload name (see ldpsim.evaluation.workloads.make)")
    parser.add_argument("--domain-size", type=int, help="domain size D of synthetic workloads, >= 2 (default: the workload's own)")
    parser.add_argument("--words", type=int, dest="top_words", help="number of tokens of the words/emoji workloads (default: the workload's own)")
    options.add_devices(parser, "10⁶", default=1_000_000)
    parser.add_argument("--mechanism", default="cms", help="a sketch taking k and m (cms, hcms)")
    parser.add_argument("--epsilon", type=float, default=4.0, help="privacy budget of one report (fixed unless --search-epsilon)")
    parser.add_argument("--target", required=True, help='e.g. "rank_deviation<=1" or "top_k_precision>=0.9"')
    parser.add_argument("--top", type=int, default=20, help="metrics over the top-N items")
    parser.add_argument("--repeats", type=int, default=20,
                        help="repeats per candidate setting, >= 2 (its mean and standard error)")
    parser.add_argument("--k", type=int, nargs="+",
                        help="hash-function counts to try (default: 256 1024 4096 16384 65535)")
    parser.add_argument("--m", type=int, nargs="+", help="sketch widths to try (default: 32 64 128 256 512 1024)")
    parser.add_argument("--search-epsilon", action="store_true", help="also try every ε of --epsilons")
    parser.add_argument("--epsilons", type=float, nargs="+",
                        help="the ε values --search-epsilon tries (default: 0.5 1 2 4 8)")
    parser.add_argument("--over", choices=("max", "mean"), default="max",
                        help="every top-N item must meet the target (max) or their average (mean)")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="one-sided confidence of the bound, strictly between 0 and 1")
    parser.add_argument("--path", choices=("auto", "direct", "reports"), default="direct",
                        help="direct: draw each aggregate from its exact law; reports: build every user's report")
    options.add_seed(parser, "0")


def run(args) -> int:
    from ldpsim.scenarios.studies.sweep.tune import DEFAULT_EPSILONS, DEFAULT_K, DEFAULT_M, tune
    result = tune(args.target, workload=args.workload, devices=args.devices, domain_size=args.domain_size,
                  words=args.top_words, mechanism=args.mechanism, epsilon=args.epsilon, ks=args.k or DEFAULT_K,
                  ms=args.m or DEFAULT_M, epsilons=(args.epsilons or DEFAULT_EPSILONS) if args.search_epsilon else None, top=args.top, repeats=args.repeats,
                  path=args.path, seed=0 if args.seed is None else args.seed, confidence=args.confidence,
                  over=args.over, report=None if args.quiet else lambda line: print(line, flush=True))
    print()
    print(result.describe())
    return 0
