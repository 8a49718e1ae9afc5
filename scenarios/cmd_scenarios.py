"""``ldpsim scenarios``: the shipped scenarios, each with its kind and one-line description."""

from __future__ import annotations


def add_arguments(parser):
    parser.add_argument("--paths", action="store_true", help="also print each scenario file's path (default: off)")


def run(args) -> int:
    from ldpsim.scenarios.catalog import listing, shipped
    rows = listing()
    width = max(len(name) for name, _, _ in rows)
    paths = shipped()
    for name, kind, text in rows:
        line = f"{name:<{width}}  {kind:<10}  {text}"
        print(line + (f"\n{'':<{width}}  {'':<10}  {paths[name]}" if args.paths else ""))
    print("\nrun a deployment scenario with `ldpsim run NAME`, a sweep with `ldpsim sweep NAME`")
    return 0
