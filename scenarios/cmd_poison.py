"""``ldpsim poison [SCENARIO]``: the poisoning sweep (default: the shipped ``poisoning`` scenario).

Writes ``poisoning.csv`` (one row per oracle × attack × ε × β × defense: measured gain, its standard
error, the closed form) and ``plots/poisoning_gain_eps<ε>.png`` into ``--out`` (default
``runs/poisoning``), and prints the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="poisoning",
                        help="a poisoning scenario: a TOML file or a shipped name (default: poisoning)")
    options.add_seed(parser, "the scenario's seed")
    parser.add_argument("--repeats", type=options.positive_int, help="override [poisoning] repeats")
    options.add_out(parser, "runs/<name>")


def run(args) -> int:
    from ldpsim.evaluation.poisoning.sweep import load_poisoning, plot_gains, run_poisoning
    from ldpsim.evaluation.scenario.schema import ScenarioError
    from ldpsim.scenarios.catalog import resolve

    try:
        path = resolve(args.scenario)
        cfg = load_poisoning(path)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.seed is not None:
        cfg["seed"] = args.seed
    if args.repeats is not None:
        if args.repeats < 2:
            print("error: --repeats must be >= 2", file=sys.stderr)
            return 2
        cfg["repeats"] = args.repeats
    out = Path(args.out or Path("runs") / cfg["name"])
    (out / "plots").mkdir(parents=True, exist_ok=True)
    bar = options.Progress(1, "cells", options.show_progress(args))

    def progress(done, total):
        bar.total = total
        bar.update_to(done)
    table = run_poisoning(cfg, progress)
    bar.close()
    table.to_csv(out / "poisoning.csv", index=False)
    for eps in sorted(table["epsilon"].unique()):
        plot_gains(table[table["epsilon"] == eps], out / "plots" / f"poisoning_gain_eps{eps:g}.png")
    cols = ["mechanism", "attack", "epsilon", "beta", "defense", "gain", "gain_se", "closed_form"]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    options.say(args, f"\nresults: {out / 'poisoning.csv'}, plots in {out / 'plots'}")
    return 0
