"""``ldpsim accuracy``: each deployed design's measured MSE beside its own theory (a markdown table).

A thin layer over :func:`ldpsim.scenarios.studies.bench.accuracy.accuracy_table`.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    options.add_devices(parser, "10⁵", default=100_000)
    parser.add_argument("--repeats", type=int, default=10, help="independent repeats per mechanism, >= 2")
    options.add_seed(parser, "0")


def run(args) -> int:
    from ldpsim.scenarios.studies.bench.accuracy import accuracy_table
    print(f"| mechanism | MSE measured (n = {args.devices:,}, {args.repeats} runs) | MSE theory | ratio |")
    print("|---|---|---|---|")
    accuracy_table(args.devices, args.repeats, 0 if args.seed is None else args.seed,
                   report=lambda line: print(line, flush=True))
    return 0
