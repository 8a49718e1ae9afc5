"""``ldpsim compare``: several designs on the same fleet at the same privacy budget, side by side.

Example: ``ldpsim compare --vocabulary emoji.csv --epsilon-device 8 --days 30`` runs Apple's CMS,
RAPPOR, dBitFlip, OLH and HR on the keyboard fleet, each at the ε that spends 8 per device over 30
days, prints the table and writes ``compare.csv``, ``spend.csv``, ``compare.png`` and
``report.html`` into ``--out``.
"""

from __future__ import annotations

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
    parser.add_argument("--designs", metavar="NAMES",
                        help="comma-separated design names to run (default: all)")
    parser.add_argument("--vocabulary", metavar="FILE", help="the items and their weights (default: the scenario's)")
    options.add_devices(parser, "4000; with --trust the scenario's")
    parser.add_argument("--days", type=options.positive_int, help="days of the run (default: the scenario's)")
    parser.add_argument("--delta", type=float, help="δ of the (ε, δ) per device and the central ε (default: 1e-06, "
                        "ldpsim.mechanisms.deltas.DELTA_SPEND)")
    parser.add_argument("--force", action="store_true", help="replace a finished comparison in --out")
    parser.add_argument("--trust", action="store_true",
                        help="compare the trust models instead (ldp, shuffle, secure aggregation, two servers, "
                             "thresholds) at --epsilon-device over --days (default 30) on the scenario's fleet "
                             "(its event use case, --vocabulary, --devices); writes comparison.csv and "
                             "plots/trust_models.png (default: off)")
    options.add_seed(parser)
    options.add_out(parser, "runs/compare-<scenario>")


def _run_trust(args) -> int:
    """``--trust``: :func:`~ldpsim.scenarios.studies.trust.trust_compare.compare_trust_models` at the budget."""
    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models
    from ldpsim.scenarios.studies.trust.trust_scenario import write_trust_results
    from ldpsim.runtime.errors import InputError
    from ldpsim.scenarios.catalog import resolve

    if args.epsilon_report is not None or args.own_epsilon:
        raise InputError("--trust compares at ε per device over the run: use --epsilon-device, not "
                         "--epsilon-report or --own-epsilon.")
    result = compare_trust_models(resolve(args.scenario), days=args.days or 30, delta=_delta(args),
                                  epsilons=(8.0 if args.epsilon_device is None else args.epsilon_device,),
                                  vocabulary=args.vocabulary, devices=args.devices,
                                  rng=args.seed if args.seed is not None else 2026)
    out = Path(args.out) if args.out else Path("runs") / "compare-trust"
    write_trust_results(out, comparison=result, force=args.force)
    cols = ["model", "epsilon_run", "epsilon_day", "mse_theory", "top_k_precision", "min_frequency",
            "discovery", "days_to_discovery", "bytes_per_device", "trusted", "if_misbehaving"]
    print(result.table[cols].to_string(index=False))
    options.say(args, f"\nrun folder: {out}")
    return 0



def _delta(args) -> float:
    from ldpsim.mechanisms.deltas import DELTA_SPEND
    return DELTA_SPEND if args.delta is None else args.delta


def run(args) -> int:
    if args.trust:
        return _run_trust(args)
    import ldpsim
    from ldpsim.scenarios.studies.deployment.compare import DEFAULT_DESIGNS, DEFAULT_DEVICES, designs_from_variants
    from ldpsim.runtime.errors import InputError
    from ldpsim.scenarios.catalog import resolve

    path = resolve(args.scenario)
    designs = designs_from_variants(path) or DEFAULT_DESIGNS
    if args.designs:
        wanted = args.designs.split(",")
        unknown = sorted(set(wanted) - {d.name for d in designs})
        if unknown:
            raise InputError(f"The --designs option names unknown designs {unknown}; choose from "
                             f"{[d.name for d in designs]}.")
        designs = tuple(d for d in designs if d.name in wanted)
    device = None if args.own_epsilon or args.epsilon_report is not None else \
        (8.0 if args.epsilon_device is None else args.epsilon_device)
    result = ldpsim.compare(path, designs, epsilon_device=device, epsilon_report=args.epsilon_report,
                            delta=_delta(args), devices=args.devices or DEFAULT_DEVICES, days=args.days, seed=args.seed,
                            vocabulary=args.vocabulary)
    out = Path(args.out) if args.out else Path("runs") / f"compare-{path.stem}"
    result.to_folder(out, force=args.force)
    print("\n".join(result.lines()))
    options.say(args, f"\nrun folder: {out}  (open report.html in a browser)")
    return 0
