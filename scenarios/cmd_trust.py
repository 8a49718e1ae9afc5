"""``ldpsim trust [SCENARIO]``: a trust-model scenario (default: the shipped ``trust_models``), one simulated
day per use case under its ``aggregation`` setting, with each device's (ε, δ) per report, per day and over
the run; ``--compare`` adds every model side by side at equal ε per device over 30 days on ``--fleet`` (the
keyboard scenario's emoji by default, ``--vocabulary`` for your own items; table and figure).

Writes ``trust.csv``, ``collectors.csv`` (and with ``--compare`` ``comparison.csv`` and
``plots/trust_models.png``) into ``--out`` (default ``runs/<name>``); a finished folder is replaced only with
``--force``.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="trust_models",
                        help="a trust-model scenario: a TOML file or a shipped name (default: trust_models)")
    options.add_seed(parser, "the scenario's seed")
    parser.add_argument("--compare", action="store_true",
                        help="also compare every model at equal ε per device over 30 days on --fleet (default: off)")
    parser.add_argument("--epsilons", type=float, nargs="+",
                        help="--compare: ε per device over the run (default: 0.5 1 2 4 8)")
    parser.add_argument("--fleet",
                        help="--compare: the deployment scenario whose event use case is compared, or 'zipf' for a "
                             "synthetic Zipf(1.1) day of 10⁶ devices and 2 000 items (default: keyboard)")
    parser.add_argument("--vocabulary", metavar="FILE",
                        help="--compare: the items and their weights instead of the fleet's (default: the fleet's)")
    parser.add_argument("--force", action="store_true", help="replace a finished result in --out (default: off)")
    options.add_out(parser, "runs/<name>")


def run(args) -> int:
    import pandas as pd

    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models
    from ldpsim.scenarios.studies.trust.trust_scenario import run_trust_scenario, write_trust_results
    from ldpsim.runtime.errors import InputError
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.catalog import resolve

    for flag, value in (("--fleet", args.fleet), ("--vocabulary", args.vocabulary), ("--epsilons", args.epsilons)):
        if value is not None and not args.compare:
            raise InputError(f"{flag} applies only with --compare; got {flag} {value!r}")
    if args.out:
        make_out_folder(args.out, create=False)  # a bad --out is refused before the work
    path = resolve(args.scenario)
    fleet = args.fleet or "keyboard"
    fleet = fleet if fleet == "zipf" else resolve(fleet)  # refused before the work, like --out
    result = run_trust_scenario(path, seed=args.seed)
    comparison = None
    if args.compare:
        comparison = compare_trust_models(fleet, epsilons=tuple(args.epsilons or (0.5, 1.0, 2.0, 4.0, 8.0)),
                                          vocabulary=args.vocabulary, rng=result.settings["seed"])
    out = write_trust_results(args.out or f"runs/{result.settings['name']}", result, comparison, force=args.force)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(result.table.drop(columns=["trusted"]).to_string(index=False))
        if comparison is not None:
            cols = ["model", "epsilon_run", "epsilon_day", "mse_theory", "top_k_precision", "min_frequency",
                    "discovery", "days_to_discovery", "bytes_per_device", "if_misbehaving"]
            print()
            print(comparison.table[cols].to_string(index=False))
    print(f"\nwrote {out}")
    return 0
