"""``ldpsim compare``: several designs on the same fleet at the same privacy budget, side by side.

Example: ``ldpsim compare --vocabulary emoji.csv --epsilon-device 8 --days 30`` runs Apple's CMS,
RAPPOR, dBitFlip, OLH and HR on the keyboard fleet, each at the ε that spends 8 per device over 30
days, prints the table and writes ``compare.csv``, ``spend.csv``, ``compare.png`` and
``report.html`` into ``--out``. ``--dry-run`` prints the plan and its memory estimate; a comparison
that cannot fit this machine is refused before any design runs.

The trust models are compared by ``ldpsim trust --compare``; ``ldpsim compare --trust`` is another
spelling of it, kept working: it says so and runs that command with the same settings.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="keyboard",
                        help="deployment scenario file or shipped name; its [variants.*] are the designs if it has any")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--epsilon-device", type=float, metavar="EPS",
                        help="budget: ε per device over the run (δ = 0); the default budget is 8")
    budget.add_argument("--epsilon-report", type=float, metavar="EPS",
                        help="budget: ε of one report (default: the per-device budget)")
    budget.add_argument("--own-epsilon", action="store_true",
                        help="no common budget: every design at the epsilon its [variants.*] table states "
                             "(default: off)")
    parser.add_argument("--designs", metavar="NAMES", type=options.name_list,
                        help="comma-separated design names to run, each once (default: all)")
    parser.add_argument("--vocabulary", metavar="FILE", help="the items and their weights (default: the scenario's)")
    options.add_devices(parser, "4000; with --trust the scenario's")
    parser.add_argument("--days", type=options.positive_int, help="days of the run (default: the scenario's; with --trust 30)")
    parser.add_argument("--delta", type=options.delta,
                        help="δ of the (ε, δ) per device and the central ε, at most 1e-3 (default: 1e-6; "
                             "with --trust that of `ldpsim trust --compare`)")
    parser.add_argument("--force", action="store_true", help="replace a finished comparison in --out")
    parser.add_argument("--trust", action="store_true",
                        help="another spelling of `ldpsim trust --compare --fleet SCENARIO` (the trust models side "
                             "by side at --epsilon-device over --days); it runs that command (default: off)")
    parser.add_argument("--query", metavar="Q",
                        help="rank the numeric designs (local, distributed, central) for one question at "
                             "--epsilon-device per person (default there: 1) instead of running a fleet: quantile:ALPHA, "
                             "range:LO,HI (words/min, HI may be inf) or heatmap:KEY (e.g. heatmap:space); or rank "
                             "the continual-release designs for a rising word: trend:GROWTH,START,DAYS[,WORD] "
                             "(logistic rate a day, emergence day, days of the run; at --epsilon-device per person "
                             "over the run, default there 2, and --devices, default there 10000000)")
    parser.add_argument("--epsilons", type=options.positive_float, nargs="+", metavar="EPS",
                        help="with --query: rank the designs at each of these ε per person, on the same devices "
                             "(default: one ε, --epsilon-device)")
    options.add_seed(parser)
    options.add_out(parser, "runs/compare-<scenario>")
    options.add_dry_run(parser)
    for option in ("--designs", "--epsilon-report", "--own-epsilon"):
        options.not_with(parser, option, "--trust", "the trust models are compared at ε per device over the run")
    for option in ("--designs", "--epsilon-report", "--own-epsilon", "--trust", "--vocabulary", "--days", "--out",
                   "--force", "--dry-run"):
        options.not_with(parser, option, "--query", "the numeric designs are ranked in memory at ε per person")
    options.only_with(parser, "--epsilons", "--query", why="it ranks the numeric designs at each ε")


def trust_argv(args) -> list[str]:
    """``compare --trust``'s settings as the command line of ``ldpsim trust --compare``, the study's one spelling."""
    argv = ["trust", "--compare", "--fleet", args.scenario,
            "--epsilons", f"{8.0 if args.epsilon_device is None else args.epsilon_device:g}"]
    for flag, value in (("--days", args.days), ("--devices", args.devices), ("--delta", args.delta),
                        ("--vocabulary", args.vocabulary), ("--seed", args.seed), ("--out", args.out)):
        if value is not None:
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return argv + [flag for flag, on in (("--force", args.force), ("--dry-run", args.dry_run), ("-q", args.quiet),
                                         ("-v", args.verbose)) if on]


def run(args) -> int:
    if args.trust:
        from ldpsim.scenarios.cli import main
        argv = trust_argv(args)
        print(f"note: `ldpsim compare --trust` is another spelling of `ldpsim trust --compare`; running "
              f"`ldpsim {shlex.join(argv)}`", file=sys.stderr)
        return main(argv)
    if args.query is not None:
        return _rank(args)
    import ldpsim
    from ldpsim.scenarios.studies.deployment.compare import (DEFAULT_DESIGNS, DEFAULT_DEVICES, compare_plan,
                                                             designs_from_variants)
    from ldpsim.runtime.errors import InputError
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.catalog import resolve

    path = resolve(args.scenario)
    designs = designs_from_variants(path) or DEFAULT_DESIGNS
    if args.designs:
        unknown = sorted(set(args.designs) - {d.name for d in designs})
        if unknown:
            raise InputError(f"The --designs option names unknown designs {unknown}; choose from "
                             f"{[d.name for d in designs]}.")
        designs = tuple(d for d in designs if d.name in args.designs)
    device = None if args.own_epsilon or args.epsilon_report is not None else \
        (8.0 if args.epsilon_device is None else args.epsilon_device)
    fleet = dict(devices=args.devices or DEFAULT_DEVICES, days=args.days, seed=args.seed, vocabulary=args.vocabulary)
    out = Path(args.out) if args.out else Path("runs") / f"compare-{path.stem}"
    make_out_folder(out, create=False)  # a bad --out is refused before the work
    if args.dry_run:
        budget = f"ε = {device:g} per device over the run" if device is not None else \
            f"ε = {args.epsilon_report:g} a report" if args.epsilon_report is not None else "each design's own ε"
        print(f"{compare_plan(path, designs, **fleet).describe()}\nbudget: {budget}; output: {out}\n"
              "(dry run: nothing was run or written)")
        return 0
    result = ldpsim.compare(path, designs, epsilon_device=device, epsilon_report=args.epsilon_report,
                            **fleet, **({} if args.delta is None else {"delta": args.delta}))
    result.to_folder(out, force=args.force)
    print("\n".join(result.lines()))
    options.say(args, f"\nrun folder: {out}  (open report.html in a browser)")
    return 0


def _rank(args) -> int:
    """``--query``: :func:`~ldpsim.evaluation.numeric_designs.rank_designs`, its table printed."""
    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.evaluation.numeric_designs import rank_designs, rank_sweep
    from ldpsim.runtime.errors import InputError

    if args.query.startswith("trend:"):
        return _rank_trend(args)
    if args.epsilons and args.epsilon_device is not None:
        raise InputError(f"--epsilon-device does not apply with --epsilons (--epsilons gives every ε of the sweep); "
                         f"got --epsilon-device {args.epsilon_device:g} with --epsilons "
                         f"{' '.join(f'{e:g}' for e in args.epsilons)}.")
    if args.epsilons:
        table = rank_sweep(args.query, args.epsilons, devices=args.devices or 100_000,
                           rng=0 if args.seed is None else args.seed,
                           **({} if args.delta is None else {"delta": args.delta}))
        print("\n".join(console_lines(table, ["epsilon", "rank", "design", "rmse", "note", "trusts"], head=None,
                                       title=f"{args.query}: designs by RMSE at each ε per person (local: ε-LDP, "
                                             "one report; secagg: (ε, δ); central: ε-DP)")))
        return 0
    r = rank_designs(args.query, epsilon=1.0 if args.epsilon_device is None else args.epsilon_device,
                     devices=args.devices or 100_000, rng=args.seed,
                     **({} if args.delta is None else {"delta": args.delta}))
    truth = f"{r.truth:,.0f} devices on the key" if r.query.startswith("heatmap") else f"true answer {r.truth:.4g}"
    print("\n".join(console_lines(r.table, title=f"{r.query}: designs by RMSE ({r.unit}; {truth}), ε = {r.epsilon:g} "
                                                   f"per person, {r.devices:,} devices, {r.repeats} runs each")))
    return 0


def _rank_trend(args) -> int:
    """``--query trend:…``: :func:`~ldpsim.evaluation.trends.ranking.rank_trend_designs` at each ε, its table printed."""
    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.evaluation.trends.ranking import rank_trend_designs
    from ldpsim.evaluation.trends.skellam_counter_design import BOUND_NOTE
    from ldpsim.evaluation.trends.thresh_delay import THEORY_NOTE
    from ldpsim.runtime.errors import InputError

    if args.epsilons and args.epsilon_device is not None:
        raise InputError(f"--epsilon-device does not apply with --epsilons (--epsilons gives every ε of the sweep); "
                         f"got --epsilon-device {args.epsilon_device:g} with --epsilons "
                         f"{' '.join(f'{e:g}' for e in args.epsilons)}.")
    shown = {"rank": "rank", "design": "design", "delay_median": "delay", "delay_theory": "theory",
             "false_alarms_month": "false/month", "false_alarms_theory": "theory ", "tracking_rmse": "tracking",
             "tracking_theory": "theory  "}
    more = {"rank": "rank", "detected": "detected", "smallest_growth": "smallest growth", "guarantee": "guarantee"}
    for epsilon in args.epsilons or [2.0 if args.epsilon_device is None else args.epsilon_device]:
        r = rank_trend_designs(args.query, epsilon=epsilon, devices=args.devices or 10_000_000,
                               rng=0 if args.seed is None else args.seed,
                               **({} if args.delta is None else {"delta": args.delta}))
        print("\n".join(console_lines(r.table[list(shown)].rename(columns=shown), head=None, title=r.title)))
        print("\n".join(console_lines(r.table[list(more)].rename(columns=more), head=None, notes=(
            f"delay: days after emergence, median over runs (nan when half the runs or more see no alarm); "
            f"false/month: false alarms a month for a word nobody uses; tracking: RMSE of the daily count, "
            f"devices; detected: share of runs with an alarm after emergence; smallest growth: devices a day per "
            f"day alarmed with probability ½ {r.growth_after} days after day {r.query.start}.", THEORY_NOTE, BOUND_NOTE))))
    return 0
