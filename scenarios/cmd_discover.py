"""``ldpsim discover SCENARIO``: days until a new slang word is found, interactive against one-shot
discovery, every protocol at the same ε per device over the run.

A thin layer over :func:`ldpsim.scenarios.studies.discovery.days.discovery_days_from_file`: prints the
per-protocol summary and writes its tables and figure into ``--out``.
"""

from __future__ import annotations

from pathlib import Path

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?",
                        help="a [discovery_days] scenario: a TOML file or a shipped name (default: discovery_days)")
    parser.add_argument("--seeds", type=options.seed, nargs="+",
                        help="the seeds to run, each in 0 … 2⁶³ − 1; a study beyond an hour of CPU time is refused "
                             "before it starts (default: the scenario's)")
    options.add_out(parser, "runs/discovery-days; --trust: runs/word-discovery")
    parser.add_argument("--force", action="store_true",
                        help="replace the results already in --out (default: refuse)")
    parser.add_argument("--trust", action="store_true",
                        help="instead: new words on the keyboard fleet under four trust models at equal ε per person "
                             "over the run — LDP trie, secure-aggregation trie, TrieHH, the TEE open-domain histogram "
                             "(default: off)")
    parser.add_argument("--epsilon", type=options.positive_float,
                        help="--trust: ε per person over the run (default: 4)")
    parser.add_argument("--days", type=options.positive_int, help="--trust: nights of the run (default: 30)")
    parser.add_argument("--typed", type=options.positive_int,
                        help="--trust: words an online device types a night (default: 8)")
    parser.add_argument("--l0", type=options.positive_int,
                        help="--trust: distinct words a device contributes a night, the bound's L0 (default: 2)")
    parser.add_argument("--linf", type=options.positive_int,
                        help="--trust: the most a device adds to one word a night, L∞ (default: 1)")
    parser.add_argument("--sampler", choices=("uniform", "occurrence", "top", "events"),
                        help="--trust: which words a device keeps (default: uniform over its distinct words)")
    parser.add_argument("--run-l0", type=options.positive_int,
                        help="--trust: also a bound over the run: distinct words a device ever contributes "
                             "(default: none)")
    parser.add_argument("--run-linf", type=options.positive_int,
                        help="--trust: with --run-l0, the most a device adds to one word over the run (default: none)")
    for option in ("--epsilon", "--days", "--typed", "--l0", "--linf", "--sampler", "--run-l0"):
        options.only_with(parser, option, "--trust")
    options.only_with(parser, "--run-linf", "--run-l0")


def run(args) -> int:
    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.api import discover
    if args.trust:
        return _trust(args)
    make_out_folder(args.out or "runs/discovery-days", create=False)  # a bad --out is refused before the work
    result = discover(args.scenario or "discovery_days", seeds=args.seeds)
    out = args.out or "runs/discovery-days"
    paths = result.to_folder(out, force=args.force)
    first = ["protocol", "days_to_discovery_median", "found_share", "f1_last_day",  # the answers, the privacy
             "epsilon", "epsilon_item", "epsilon_person", "first_day_found_median"]
    cols = first + [c for c in result.summary.columns if c not in first]
    notes = ["epsilon: ε per device over the run (its kind and δ in the kind and delta columns); epsilon_item, "
             "epsilon_person: one word of one person, one person over the run — the same here: a device holds one "
             "word a day, which may fill every report of the run"]
    print("\n".join(console_lines(result.summary, cols, title="Days until the new word is found, by protocol",
                                   full=str(Path(out) / "discovery_days_summary.csv"), notes=notes)))
    for path in paths:
        options.say(args, path)
    return 0


def _trust(args) -> int:
    """``--trust``: :func:`ldpsim.scenarios.studies.trust.word_discovery.compare_word_discovery`."""
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.studies.trust.word_discovery import compare_word_discovery

    if args.scenario is not None:
        from ldpsim.runtime.errors import InputError
        raise InputError(f"The SCENARIO argument does not apply with --trust (it runs the keyboard fleet). "
                         f"Got {args.scenario!r}.")
    out = args.out or "runs/word-discovery"
    make_out_folder(out, create=False)  # a bad --out is refused before the work
    from ldpsim.mechanisms.bounding import ContributionBound
    from ldpsim.scenarios.studies.trust.trust_fleet import BOUND, TYPED

    bound = ContributionBound(args.l0 or BOUND.l0, args.linf or BOUND.linf, args.sampler or BOUND.sampler)
    per_run = None if args.run_l0 is None else ContributionBound(args.run_l0, args.run_linf, bound.sampler)
    result = compare_word_discovery(args.epsilon or 4.0, args.days or 30, seeds=args.seeds or (0, 1, 2),
                                    typed=args.typed or TYPED, bound=bound, per_run=per_run)
    print("\n".join(result.lines(full=str(Path(out) / "word_discovery.csv"))))
    for path in result.to_folder(out, force=args.force):
        options.say(args, path)
    return 0
