"""``ldpsim scenarios``: the shipped scenarios, each with its name, kind and description (wrapped, whole).

A thin layer over :func:`ldpsim.scenarios.api.scenarios_table` (``ldpsim.scenarios_table()``).
"""

from __future__ import annotations


def add_arguments(parser):
    parser.add_argument("--paths", action="store_true", help="also print each scenario file's path (default: off)")


def run(args) -> int:
    import shutil
    import textwrap

    from ldpsim.scenarios.api import scenarios_table
    table = scenarios_table()
    name_w = max(table["name"].str.len())
    kind_w = max(table["kind"].str.len())
    indent = " " * (name_w + kind_w + 4)
    width = max(shutil.get_terminal_size((100, 24)).columns, len(indent) + 40)
    for row in table.itertuples():
        text = row.description + (f" [{row.path}]" if args.paths else "")
        lines = textwrap.wrap(text, width - len(indent)) or [""]
        print(f"{row.name:<{name_w}}  {row.kind:<{kind_w}}  {lines[0]}")
        for line in lines[1:]:
            print(indent + line)
    print("\n" + textwrap.fill(footer(), width))
    return 0


def footer() -> str:
    """The line under the table: the command of every kind of scenario (:data:`KIND_COMMANDS`)."""
    from ldpsim.scenarios.studies.scenario.schema import KIND_COMMANDS
    return "run a scenario with the command of its kind: " + ", ".join(
        f"`{command} NAME` ({kind})" for kind, command in KIND_COMMANDS.items()) + \
        "; a deployment also runs with `ldpsim compare NAME` and `ldpsim scale NAME`"
