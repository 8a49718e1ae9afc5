"""``ldpsim poison [SCENARIO]``: the poisoning sweep (default: the shipped ``poisoning`` scenario).

A thin layer over :func:`ldpsim.scenarios.studies.poisoning.experiment.poison` (``ldpsim.poison`` in a notebook:
the same numbers and messages).

A scenario with a ``[poisoning_fleet]`` table (``scenarios/poisoning_fleet.toml``,
``poisoning_words.toml``), or ``--deployment`` with a deployment scenario (default ``keyboard``), runs fake
devices in the deployment instead: they push the item of rank ``--target-rank`` into the daily top 10, or
with ``--word WORD`` (``use_case = "word"``) a made-up word into the nightly discovered top-k (``--fakes``
counts × ``--epsilons`` of the attacked use case × the gate's defenses); writes ``fakes.csv`` and
``plots/fakes_top10.png`` (words: ``plots/fakes_words.png``). Each deployment is sharded over
``--workers`` (a local Dask cluster; ``--scheduler``: an existing one); the folder journals each finished
deployment, so a killed sweep rerun with the same settings resumes.

Writes ``poisoning.csv`` (one row per oracle × attack × ε × β × defense: measured gain, its standard
error, the closed form, z of the undefended cells) and ``plots/poisoning_gain_eps<ε>.png`` into ``--out``
(default ``runs/<[poisoning] name>``), prints the table and the closed-form check — or "not checked" when
the repeats are too few for the check to see a disagreement. The folder is owned like ``ldpsim run``'s:
another experiment's results there are replaced only with ``--force``.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", nargs="?", default="poisoning",
                        help="a poisoning scenario: a TOML file or a shipped name (default: poisoning)")
    options.add_seed(parser, "the scenario's seed")
    parser.add_argument("--repeats", type=options.positive_int, help="override [poisoning] repeats (default: the scenario's)")
    parser.add_argument("--deployment", action="store_true",
                        help="fake devices in a deployment scenario (default: off; scenario then defaults to keyboard)")
    options.add_devices(parser, "with --deployment, the scenario's [deployment] devices")
    parser.add_argument("--days", type=options.positive_int, help="--deployment: override [deployment] days (default: the scenario's)")
    parser.add_argument("--fakes", type=options.non_negative_int, nargs="+",
                        help="--deployment: numbers of fake devices (default: 0 10 20 40 80, or the scenario's)")
    parser.add_argument("--epsilons", type=options.positive_float, nargs="+",
                        help="--deployment: ε of the attacked use case (default: 2 4 8, or the scenario's)")
    parser.add_argument("--target-rank", type=options.positive_int,
                        help="--deployment: the pushed item's rank in the workload (default: 80, or the scenario's)")
    parser.add_argument("--word", help="--deployment: push this made-up word into the words use case's nightly "
                                       "discovered top-k instead of an emoji (default: off)")
    parser.add_argument("--force", action="store_true",
                        help="replace another poisoning experiment's results in --out (default: off)")
    options.add_workers(parser, "1; each deployment is sharded over the workers")
    options.add_out(parser, "runs/<name>")




def default_out(scenario="poisoning", deployment: bool = False, word: str | None = None):
    """The default folder: ``runs/<[poisoning] name>``, or ``runs/<deployment name>-fakes[-words]``."""
    from pathlib import Path

    from ldpsim.scenarios.studies.poisoning.sweep import load_poisoning
    from ldpsim.runtime.plain import plain_name
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    from ldpsim.runtime.errors import InputError
    from ldpsim.scenarios.catalog import resolve
    name = "keyboard" if str(scenario) == "poisoning" else scenario
    if not deployment:
        cfg = load_poisoning(resolve(scenario))
        if cfg["kind"] == "population":
            return Path("runs") / cfg["name"]
        name = cfg["scenario"]
        word = word if word is not None else (cfg["word"] if cfg["use_case"] == "word" else None)
    meta = load_deployment(resolve(name), None, None, None)[1]
    folder = f"{meta['name']}-fakes{'-words' if word else ''}"
    if plain_name(folder):
        raise InputError(f"{name}: the deployment's name {meta['name']!r} cannot name a folder under runs/ "
                         f"({plain_name(folder)}); pass --out")
    return Path("runs") / folder


def run(args) -> int:
    from ldpsim.runtime.errors import InputError
    from ldpsim.scenarios.api import poison
    if args.repeats is not None and args.repeats < 2:
        raise InputError(f"--repeats must be an integer >= 2; got {args.repeats}")
    out = args.out or default_out(args.scenario, args.deployment, args.word)
    progress = options.ProgressCallback("cells", options.show_progress(args))
    result = poison(args.scenario, seed=args.seed, repeats=args.repeats, deployment=args.deployment,
                    devices=args.devices, days=args.days, fakes=args.fakes, epsilons=args.epsilons,
                    target_rank=args.target_rank, word=args.word, workers=args.workers, scheduler=args.scheduler,
                    out=out, force=args.force, progress=progress, log=lambda msg: options.say(args, msg))
    progress.close()
    lines = result.lines()
    table = lines[:-1] if result.check else lines
    print("\n".join(table))
    if result.check:
        options.say(args, "\n" + result.check["message"])
    options.say(args, f"results in {out}")
    return 0
