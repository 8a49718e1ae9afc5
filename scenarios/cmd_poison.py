"""``ldpsim poison [SCENARIO]``: the poisoning sweep (default: the shipped ``poisoning`` scenario).

A scenario with a ``[poisoning_fleet]`` table (``scenarios/poisoning_fleet.toml``,
``poisoning_words.toml``), or ``--deployment`` with a deployment scenario (default ``keyboard``), runs fake
devices in the deployment instead: they push the item of rank ``--target-rank`` into the daily top 10, or
with ``--word WORD`` (``use_case = "word"``) a made-up word into the nightly discovered top-k (``--fakes``
counts × ``--epsilons`` of the attacked use case × the gate's defenses); writes ``fakes.csv`` and
``plots/fakes_top10.png`` (words: ``plots/fakes_words.png``). Each deployment is sharded over
``--workers`` (a local Dask cluster; ``--scheduler``: an existing one); the folder journals each finished
deployment, so a killed sweep rerun with the same settings resumes.

Writes ``poisoning.csv`` (one row per oracle × attack × ε × β × defense: measured gain, its standard
error, the closed form, z of the undefended cells) and ``plots/poisoning_gain_eps<ε>.png`` into ``--out`` (default
``runs/poisoning``), and prints the table.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

from ldpsim.scenarios import options


FAKES, EPSILONS, TARGET_RANK = [0, 10, 20, 40, 80], [2.0, 4.0, 8.0], 80


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="poisoning",
                        help="a poisoning scenario: a TOML file or a shipped name (default: poisoning)")
    options.add_seed(parser, "the scenario's seed")
    parser.add_argument("--repeats", type=options.positive_int, help="override [poisoning] repeats (default: the scenario's)")
    parser.add_argument("--deployment", action="store_true",
                        help="fake devices in a deployment scenario (default: off; scenario then defaults to keyboard)")
    options.add_devices(parser, "with --deployment, the scenario's [deployment] devices")
    parser.add_argument("--days", type=options.positive_int, help="--deployment: override [deployment] days (default: the scenario's)")
    parser.add_argument("--fakes", type=options.non_negative_int, nargs="+", default=FAKES,
                        help="--deployment: numbers of fake devices (default: 0 10 20 40 80)")
    parser.add_argument("--epsilons", type=options.positive_float, nargs="+", default=EPSILONS,
                        help="--deployment: ε of the attacked use case (default: 2 4 8)")
    parser.add_argument("--target-rank", type=options.positive_int, default=TARGET_RANK,
                        help="--deployment: the pushed item's rank in the workload (default: 80)")
    parser.add_argument("--word", help="--deployment: push this made-up word into the words use case's nightly "
                                       "discovered top-k instead of an emoji (default: off)")
    options.add_workers(parser, "1; each deployment is sharded over the workers")
    options.add_out(parser, "runs/<name>")


def _run_deployment(args, fleet: dict | None = None) -> int:
    """Fake devices in a deployment: settings from a ``[poisoning_fleet]`` table, else from the flags."""
    from ldpsim.evaluation.cost import CostError, deployment_plan
    from ldpsim.evaluation.poisoning.deployment_attack import DEFENSES, fake_sweep, plot_fake_sweep
    from ldpsim.evaluation.scenario.deployment_file import load_deployment
    from ldpsim.evaluation.scenario.schema import ScenarioError
    from ldpsim.scenarios.catalog import resolve
    from ldpsim.runtime.cluster import ClusterError
    from ldpsim.runtime.durable import make_dirs, write_file

    if fleet is not None:  # the table's values, unless a flag was given explicitly
        args.devices = args.devices or fleet["devices"]
        args.days = args.days or fleet["days"]
        args.seed = args.seed if args.seed is not None else fleet["seed"]
        args.fakes = fleet["fakes"] if args.fakes == FAKES else args.fakes
        args.epsilons = fleet["epsilon"] if args.epsilons == EPSILONS else args.epsilons
        args.target_rank = fleet["target_rank"] if args.target_rank == TARGET_RANK else args.target_rank
        if fleet["use_case"] == "word" and args.word is None:
            args.word = fleet["word"]
    defenses = tuple(fleet["defenses"]) if fleet is not None else tuple(DEFENSES)
    try:
        scenario = fleet["scenario"] if fleet is not None else (
            "keyboard" if args.scenario == "poisoning" else args.scenario)
        cfg, meta = load_deployment(resolve(scenario), args.devices, args.days, args.seed)
        deployment_plan(cfg, args.workers or 1, scenario)  # refuses a fleet that cannot fit, before anything runs
        target = _target(cfg, scenario, args)
    except (ScenarioError, CostError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    use_case = "event" if args.word is None else "word"
    shards = min(args.workers or 1, cfg.n_blocks)
    scheduler = args.scheduler or ("local" if shards > 1 else None)
    settings = json.dumps([dataclasses.asdict(cfg), args.fakes, args.epsilons, defenses, use_case, target],
                          default=str, ensure_ascii=False)
    out = Path(args.out or Path("runs") / f"{meta['name']}-fakes{'-words' if args.word else ''}")
    folder = _open_folder(out, hashlib.sha256(settings.encode()).hexdigest()[:16], cfg.seed, resume=True)
    if folder is None:
        return 2
    plot = out / "plots" / ("fakes_words.png" if args.word else "fakes_top10.png")
    with folder:
        for note in folder.notes:
            options.say(args, note)
        if folder.finished("cells/"):
            options.say(args, f"resuming: {len(folder.finished('cells/'))} deployment(s) already done in {out}")
        bar = options.Progress(1, "deployments", options.show_progress(args))

        def progress(done, total):
            bar.total = total
            bar.update_to(done)
        try:
            table = fake_sweep(cfg, target, args.fakes, args.epsilons, defenses, use_case, progress, folder, shards,
                               scheduler, args.workers)
        except ClusterError as exc:
            print(f"error: {exc}\n({out} is marked incomplete)", file=sys.stderr)
            return 2
        bar.close()
        write_file(out / "fakes.csv", lambda tmp: table.to_csv(tmp, index=False))
        make_dirs(out / "plots")
        plot_fake_sweep(table, plot)
        folder.finalize(adopt=True)
    cols = [c for c in table.columns if c not in ("use_case", "devices", "days", "shards", "fake_sent",
                                                   "fake_refused_attestation", "fake_refused_rate_limit")]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    options.say(args, f"\nresults: {out / 'fakes.csv'}, plot {plot}")
    return 0


def _target(cfg, scenario, args):
    """The index of the pushed item, or the made-up word (checked: in the alphabet, typed by no one)."""
    from ldpsim.evaluation.scenario.schema import ScenarioError
    if args.word is None:
        if args.target_rank > len(cfg.items):
            raise ScenarioError(scenario, "--target-rank", f"must be <= {len(cfg.items)} items")
        return args.target_rank - 1
    uc = cfg.use_case("word")
    if uc is None:
        raise ScenarioError(scenario, "--word", "the deployment has no words use case ([use_case.words])")
    try:
        uc.make_mechanism().codec.check_word(args.word)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(scenario, "--word", str(exc)) from None
    if args.word in cfg.words:
        raise ScenarioError(scenario, "--word", f"{args.word!r} is typed by the fleet; choose a made-up word")
    return args.word


def _open_folder(out: Path, fingerprint: str = "poisoning", seed: int | None = None, resume: bool = False):
    """Lock ``out`` as a poisoning folder (new, empty or an earlier one of ours; with ``resume``, the journaled
    cells of the same settings are kept); None after printing why not."""
    from ldpsim.runtime.runfolder import RunFolder, RunFolderError
    identity = {"fingerprint": fingerprint} if seed is None else {"fingerprint": fingerprint, "seed": seed}
    try:
        return RunFolder.open(out, "poison", identity, resume=resume, replace=True)
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def run(args) -> int:
    if args.deployment:
        return _run_deployment(args)
    from ldpsim.evaluation.poisoning.sweep import closed_form_check, load_poisoning, plot_gains, run_poisoning
    from ldpsim.evaluation.scenario.schema import ScenarioError
    from ldpsim.scenarios.catalog import resolve
    from ldpsim.runtime.durable import make_dirs, write_file

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
