"""``ldpsim trust [SCENARIO]``: a trust-model scenario (default: the shipped ``trust_models``), one simulated
day per use case under its ``aggregation`` setting, with each device's (ε, δ) per report, per day and over
the run; ``--compare`` adds every model side by side at equal ε per device over ``--days`` (30) days on
``--fleet`` (the keyboard scenario's emoji by default, ``--vocabulary`` for your own items; table and figure).
``ldpsim trust --compare`` is the one spelling of that comparison (``ldpsim compare --trust`` runs it too).
``--dry-run`` prints the comparison's plan and its cost estimate; one that cannot fit is refused before
any work (:func:`ldpsim.evaluation.cost.trust_comparison_plan`).

Writes ``trust.csv``, ``collectors.csv`` (and with ``--compare`` ``comparison.csv``, ``discovery.csv``: each
model's new-word design at that ε per person over the run, and ``plots/trust_models.png``) into ``--out`` (default ``runs/<name>``); a finished folder is replaced only with
``--force``.
"""

from __future__ import annotations

import sys

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="trust_models",
                        help="a trust-model scenario: a TOML file or a shipped name (default: trust_models)")
    options.add_seed(parser, "the scenario's seed")
    parser.add_argument("--compare", action="store_true",
                        help="also compare every model at equal ε per device over --days on --fleet (default: off)")
    parser.add_argument("--epsilons", type=options.positive_float, nargs="+",
                        help="--compare: ε per device over the run (default: 0.5 1 2 4 8)")
    parser.add_argument("--days", type=options.positive_int,
                        help="--compare: the days of the run the ε is spent over (default: 30)")
    options.add_devices(parser, "--compare: the fleet's")
    parser.add_argument("--delta", type=options.delta,
                        help="--compare: δ of every central guarantee, at most 1e-3 (default: 1e-9)")
    parser.add_argument("--fleet",
                        help="--compare: the deployment scenario whose event use case is compared, or 'zipf' for a "
                             "synthetic Zipf(1.1) day of 10⁶ devices and 2 000 items (default: keyboard)")
    parser.add_argument("--vocabulary", metavar="FILE",
                        help="--compare: the items and their weights instead of the fleet's (default: the fleet's)")
    parser.add_argument("--force", action="store_true", help="replace a finished result in --out (default: off)")
    parser.add_argument("--gboard", action="store_true",
                        help="print the central ε per report, word and person that named assumptions about Gboard "
                             "2024's discovery imply at δ = 1e-10, and which assumptions reach its stated 0.315 "
                             "(default: off)")
    parser.add_argument("--assume", action="append", default=[], metavar="K=V",
                        help="--gboard: an assumption (eps0, devices_per_round, layers, passes, collections); the "
                             "others keep their documented defaults")
    options.add_out(parser, "runs/<name>")
    options.add_dry_run(parser)
    options.only_with(parser, "--assume", "--gboard")
    for option in ("--compare", "--out", "--seed", "--force"):
        options.not_with(parser, option, "--gboard", why="--gboard computes from its assumptions alone")
    for option in ("--fleet", "--vocabulary", "--epsilons", "--days", "--devices", "--delta", "--dry-run"):
        options.only_with(parser, option, "--compare")


def run(args) -> int:
    if args.gboard:
        from ldpsim.evaluation.privacy.gboard_assumptions import implied, parse_assumptions, reaching_grid
        print("\n".join(implied(parse_assumptions(args.assume)).lines()))
        print("\nwhich assumptions reach 0.315 at delta = 1e-10:")
        print(reaching_grid().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        return 0
    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models, comparison_plan
    from ldpsim.scenarios.studies.trust.trust_scenario import run_trust_scenario, write_trust_results
    from ldpsim.evaluation.privacy.trust_tables import comparison_lines, scenario_lines
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.catalog import resolve

    if args.out:
        make_out_folder(args.out, create=False)  # a bad --out is refused before the work
    path = resolve(args.scenario)
    fleet = args.fleet or "keyboard"
    fleet = fleet if fleet == "zipf" else resolve(fleet)  # refused before the work, like --out
    study = dict(epsilons=tuple(args.epsilons or (0.5, 1.0, 2.0, 4.0, 8.0)), vocabulary=args.vocabulary,
                 devices=args.devices, **{k: v for k, v in (("days", args.days), ("delta", args.delta)) if v is not None})
    if args.compare:  # refused before any work when it cannot fit; --dry-run prints the plan
        plan = comparison_plan(fleet, **study)
        if args.dry_run:
            print(f"{plan.describe()}\noutput: {args.out or 'runs/<name>'}\n(dry run: nothing was run or written)")
            return 0
    result = run_trust_scenario(path, seed=args.seed)
    for note in result.notices:
        options.say(args, f"note: {note}", file=sys.stderr)
    comparison = None
    if args.compare:
        comparison = compare_trust_models(fleet, **study, rng=result.settings["seed"])
    out = write_trust_results(args.out or f"runs/{result.settings['name']}", result, comparison, force=args.force)
    print("\n".join(scenario_lines(result, full=str(out / "trust.csv"))))
    if comparison is not None:
        print()
        print("\n".join(comparison_lines(comparison, full=str(out / "comparison.csv"),
                                         discovery_full=str(out / "discovery.csv"))))
    print(f"\nwrote {out}")
    return 0
