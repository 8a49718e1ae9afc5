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
    for option in ("--epsilon", "--days"):
        options.only_with(parser, option, "--trust")


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
    first = ["protocol", "days_to_discovery_median", "found_share", "first_day_found_median", "f1_last_day"]
    cols = first + [c for c in result.summary.columns if c not in first]   # the answers, then the privacy
    print("\n".join(console_lines(result.summary, cols, title="Days until the new word is found, by protocol",
                                   full=str(Path(out) / "discovery_days_summary.csv"))))
    for path in paths:
        options.say(args, path)
    return 0


def _trust(args) -> int:
    """``--trust``: :func:`ldpsim.scenarios.studies.trust.word_discovery.compare_word_discovery`."""
    from ldpsim.evaluation.console_table import console_lines
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.studies.trust.word_discovery import compare_word_discovery

    if args.scenario is not None:
        from ldpsim.runtime.errors import InputError
        raise InputError(f"The SCENARIO argument does not apply with --trust (it runs the keyboard fleet). "
                         f"Got {args.scenario!r}.")
    out = args.out or "runs/word-discovery"
    make_out_folder(out, create=False)  # a bad --out is refused before the work
    result = compare_word_discovery(args.epsilon or 4.0, args.days or 30, seeds=args.seeds or (0, 1, 2))
    p = result.params
    title = (f"New words on the {p['fleet']} fleet ({p['word_devices']:,} devices typing words), ε = {p['epsilon']:g} "
             f"per person over {p['days']} nights (δ ≤ {p['delta']:g}), {len(p['seeds'])} seeds")
    notes = ["columns:", "  found_share: share of seeds whose published top 20 keeps the new word",
             "  days_to_discovery_median: days from the new word's first day until it stays listed (nan: never)",
             "  f1_last_day: F1 of the last night's top 20 against the true top 20",
             "  slang_error: |estimated − true share| of the new word on the nights it is listed (nan: no estimate)",
             "  invented_mean / invented_expected: listed words nobody typed, measured / as the design states "
             "(tee_histogram: the expected words of a single holder a night; it invents none)"]
    cols = ["design", "days_to_discovery_median", "found_share", "f1_last_day", "slang_error", "invented_mean",
            "invented_expected", "epsilon_device", "delta", "trust_model", "trusted"]   # the answers, then the privacy
    print("\n".join(console_lines(result.table, cols, title=title,
                                   full=str(Path(out) / "word_discovery.csv"), notes=notes)))
    for path in result.to_folder(out, force=args.force):
        options.say(args, path)
    return 0
