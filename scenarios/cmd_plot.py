"""``ldpsim plot RUN_DIR``: the figures of a stored run into ``RUN_DIR/plots`` and its report page rewritten.

A sweep's folder (``ldpsim sweep``) gets every applicable figure of its cells (PNG and SVG); a deployment run's
folder (``ldpsim run``, which draws its figures only when the run is large enough: ``--figures``) gets the
figures ``ldpsim run --figures all`` draws, from its stored tables
(:func:`ldpsim.scenarios.studies.deployment.replot.plot_deployment`).
"""

from __future__ import annotations

import sys



def add_arguments(parser):
    parser.add_argument("run_dir", help="output folder of `ldpsim sweep` or `ldpsim run`")
    parser.add_argument("--mark", nargs="+", metavar="KEY=VALUE",
                        help="a sweep's cell to highlight, e.g. --mark k=65535 m=32 (default: the scenario's "
                             "[plots] mark)")
    parser.add_argument("--replace", action="store_true",
                        help="a deployment run: draw again the figures that already exist (default: keep them)")


def _mark(pairs):
    if pairs is None:
        return None
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--mark takes KEY=VALUE pairs; got {pair!r}")
        try:
            out[key] = int(value)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                out[key] = value
    return out


def run(args) -> int:
    from ldpsim.runtime.runfolder import read_manifest
    manifest = read_manifest(args.run_dir)
    if manifest is not None and manifest.get("kind") == "run":
        return _deployment(args)
    if args.replace:
        print(f"error: --replace applies to a deployment run's folder (`ldpsim run`); {args.run_dir} is not one "
              "(a sweep's figures are always drawn again)", file=sys.stderr)
        return 2
    return _sweep(args, manifest)


def _deployment(args) -> int:
    from ldpsim.scenarios.studies.deployment.replot import plot_deployment
    if args.mark is not None:
        print(f"error: --mark applies to a sweep's folder (`ldpsim sweep`); {args.run_dir} is a deployment run's",
              file=sys.stderr)
        return 2
    plots = plot_deployment(args.run_dir, replace=args.replace)
    for path in plots.drawn:
        print(path)
    if plots.kept:
        print(f"kept {len(plots.kept)} figure(s) that existed already (--replace draws them again)")
    print(plots.report)
    return 0


def _sweep(args, manifest) -> int:
    from ldpsim.scenarios.studies.sweep.sweep_report import plot_run, report_sweep
    from ldpsim.runtime.runfolder import hold
    try:
        mark = _mark(args.mark)
        folder = hold(args.run_dir) if manifest is not None else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        written = plot_run(args.run_dir, mark)
        for path in written:
            print(path)
        print(report_sweep(args.run_dir))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if folder is not None:
            folder.release()
    return 0
