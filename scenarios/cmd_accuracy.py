"""``ldpsim accuracy``: each deployed design's measured MSE beside its own theory (a markdown table).

A thin layer over :func:`ldpsim.scenarios.studies.bench.accuracy.accuracy_table`, which refuses more than
:data:`~ldpsim.evaluation.cost.MAX_REPORT_USERS` users per mechanism (``--devices × --repeats``) before any row.
"""

from __future__ import annotations

from ldpsim.scenarios import options


def add_arguments(parser):
    options.add_devices(parser, "10⁵", default=100_000)
    parser.add_argument("--repeats", type=int, default=10, help="independent repeats per mechanism, >= 2")
    options.add_seed(parser, "0")


def run(args) -> int:
    from ldpsim.scenarios.studies.bench.accuracy import MARKDOWN_NOTE, accuracy_table, markdown_header
    header = markdown_header(args.devices, args.repeats)

    def report(line):  # the header with the first row: a refused size prints nothing on stdout
        while header:
            print(header.pop(0))
        print(line, flush=True)
    accuracy_table(args.devices, args.repeats, 0 if args.seed is None else args.seed, report=report)
    print(MARKDOWN_NOTE)
    return 0
