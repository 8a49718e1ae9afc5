"""``ldpsim poison [SCENARIO]``: the poisoning sweep (default: the shipped ``poisoning`` scenario).

A scenario with a ``[poisoning_fleet]`` table (``scenarios/poisoning_fleet.toml``), or ``--deployment``
with a deployment scenario (default ``keyboard``), runs fake devices in the deployment instead: they push the
item of rank ``--target-rank`` into the daily top 10 (``--fakes`` counts × ``--epsilons`` of the event
use case × the gate's defenses); writes ``fakes.csv`` and ``plots/fakes_top10.png``.

Writes ``poisoning.csv`` (one row per oracle × attack × ε × β × defense: measured gain, its standard
error, the closed form, z of the undefended cells) and ``plots/poisoning_gain_eps<ε>.png`` into ``--out`` (default
``runs/poisoning``), and prints the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ldpsim.scenarios import options
from ldpsim.simulator.durable import make_dirs, write_file

FAKES, EPSILONS, TARGET_RANK = [0, 10, 20, 40, 80], [2.0, 4.0, 8.0], 80


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="poisoning",
                        help="a poisoning scenario: a TOML file or a shipped name (default: poisoning)")
    options.add_seed(parser, "the scenario's seed")
    parser.add_argument("--repeats", type=options.positive_int, help="override [poisoning] repeats (default: the scenario's)")
    parser.add_argument("--deployment", action="store_true",
                        help="fake devices in a deployment scenario (default: off; scenario then defaults to keyboard)")
    parser.add_argument("--devices", type=options.positive_int, help="--deployment: override [deployment] devices (default: the scenario's)")
    parser.add_argument("--days", type=options.positive_int, help="--deployment: override [deployment] days (default: the scenario's)")
    parser.add_argument("--fakes", type=options.non_negative_int, nargs="+", default=FAKES,
                        help="--deployment: numbers of fake devices (default: 0 10 20 40 80)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=EPSILONS,
                        help="--deployment: ε of the event use case (default: 2 4 8)")
    parser.add_argument("--target-rank", type=options.positive_int, default=TARGET_RANK,
                        help="--deployment: the pushed item's rank in the workload (default: 80)")
    options.add_out(parser, "runs/<name>")


def _run_deployment(args, fleet: dict | None = None) -> int:
    """Fake devices in a deployment: settings from a ``[poisoning_fleet]`` table, else from the flags."""
    from ldpsim.evaluation.poisoning.deployment_attack import fake_sweep, plot_fake_sweep
    from ldpsim.evaluation.scenario.deployment_file import load_deployment
    from ldpsim.evaluation.scenario.schema import ScenarioError
    from ldpsim.scenarios.catalog import resolve

    if fleet is not None:  # the table's values, unless a flag was given explicitly
        args.devices = args.devices or fleet["devices"]
        args.days = args.days or fleet["days"]
        args.seed = args.seed if args.seed is not None else fleet["seed"]
        args.fakes = fleet["fakes"] if args.fakes == FAKES else args.fakes
        args.epsilons = fleet["epsilon"] if args.epsilons == EPSILONS else args.epsilons
        args.target_rank = fleet["target_rank"] if args.target_rank == TARGET_RANK else args.target_rank
    defenses = tuple(fleet["defenses"]) if fleet is not None else None
    try:
        scenario = fleet["scenario"] if fleet is not None else (
            "keyboard" if args.scenario == "poisoning" else args.scenario)
        cfg, meta = load_deployment(resolve(scenario), args.devices, args.days, args.seed)
        if args.target_rank > len(cfg.items):
            raise ScenarioError(scenario, "--target-rank", f"must be <= {len(cfg.items)} items")
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("runs") / f"{meta['name']}-fakes")
    folder = _open_folder(out)
    if folder is None:
        return 2
    with folder:
        bar = options.Progress(1, "deployments", options.show_progress(args))

        def progress(done, total):
            bar.total = total
            bar.update_to(done)
        kwargs = {"defenses": defenses} if defenses else {}
        table = fake_sweep(cfg, args.target_rank - 1, args.fakes, args.epsilons, progress=progress, **kwargs)
        bar.close()
        write_file(out / "fakes.csv", lambda tmp: table.to_csv(tmp, index=False))
        make_dirs(out / "plots")
        plot_fake_sweep(table, out / "plots" / "fakes_top10.png")
        folder.finalize(adopt=True)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    options.say(args, f"\nresults: {out / 'fakes.csv'}, plot {out / 'plots' / 'fakes_top10.png'}")
    return 0


def _open_folder(out: Path):
    """Lock ``out`` as a poisoning folder (new, empty or an earlier one of ours); None after printing why not."""
    from ldpsim.evaluation.runfolder import RunFolder, RunFolderError
    try:
        return RunFolder.open(out, "poison", {"fingerprint": "poisoning"}, resume=False, replace=True)
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def run(args) -> int:
    if args.deployment:
        return _run_deployment(args)
    from ldpsim.evaluation.poisoning.sweep import closed_form_check, load_poisoning, plot_gains, run_poisoning
    from ldpsim.evaluation.scenario.schema import ScenarioError
    from ldpsim.scenarios.catalog import resolve

    try:
        path = resolve(args.scenario)
        cfg = load_poisoning(path)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if cfg["kind"] == "fleet":
        return _run_deployment(args, cfg)
    if args.seed is not None:
        cfg["seed"] = args.seed
    if args.repeats is not None:
        if args.repeats < 2:
            print("error: --repeats must be >= 2", file=sys.stderr)
            return 2
        cfg["repeats"] = args.repeats
    out = Path(args.out or Path("runs") / cfg["name"])
    folder = _open_folder(out)
    if folder is None:
        return 2
    with folder:
        bar = options.Progress(1, "cells", options.show_progress(args))

        def progress(done, total):
            bar.total = total
            bar.update_to(done)
        table = run_poisoning(cfg, progress)
        bar.close()
        write_file(out / "poisoning.csv", lambda tmp: table.to_csv(tmp, index=False))
        make_dirs(out / "plots")
        for eps in sorted(table["epsilon"].unique()):
            plot_gains(table[table["epsilon"] == eps], out / "plots" / f"poisoning_gain_eps{eps:g}.png")
        folder.finalize(adopt=True)
    cols = ["mechanism", "attack", "epsilon", "beta", "defense", "gain", "gain_se", "closed_form"]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    check = closed_form_check(table)
    options.say(args, f"\nundefended cells vs closed forms: largest |z| = {check['max_abs_z']:.2f} over "
                      f"{check['cells']} cells (bound {check['bound']:.2f} at family-wise α = {check['alpha']:g}: "
                      f"{'all agree' if check['agree'] else 'DISAGREE'})")
    options.say(args, f"results: {out / 'poisoning.csv'}, plots in {out / 'plots'}")
    return 0
