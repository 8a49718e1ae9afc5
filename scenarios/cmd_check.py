"""``ldpsim check SCENARIO --baseline FILE``: rerun a small scenario and compare it with a stored baseline.

Exit codes: 0 every (cell, metric) within its statistical tolerance (see :mod:`ldpsim.evaluation.sweep.regression`),
1 a regression (a metric moved beyond tolerance, or a cell or metric missing or new), 2 a usage or
scenario error. ``--update-baseline`` (re)writes the baseline from this run instead and exits 0.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError
from ldpsim.scenarios import options


def add_arguments(parser):
    parser.add_argument("scenario", help="a sweep scenario: a TOML file or a shipped name; keep it small: "
                                         "it runs in this process")
    parser.add_argument("--baseline", required=True, metavar="FILE",
                        help="baseline JSON to compare with (or write); a shipped name such as `check` means "
                             "the shipped scenarios/baselines/check.json")
    parser.add_argument("--update-baseline", action="store_true",
                        help="write FILE from this run instead of comparing (default: compare)")
    parser.add_argument("--alpha", type=options.fraction, default=0.001,
                        help="family-wise false-alarm rate, Bonferroni over the compared metrics (default: 0.001)")
    options.add_seed(parser, "[scenario] seed; a changed random stream must still pass, and sketches then "
                             "draw another hash family")
    options.add_out(parser, "a temporary folder; an --out folder must be empty or new")


def _baseline_path(arg: str, writing: bool) -> Path:
    """``arg`` as a path, or (when no such file exists and it is a plain name) the shipped baseline of that name."""
    from ldpsim.scenarios.catalog import SHIPPED
    path = Path(arg)
    shipped = SHIPPED / "baselines" / (path.name if path.suffix == ".json" else f"{path.name}.json")
    if not writing and not path.exists() and path.parent == Path(".") and shipped.is_file():
        return shipped
    return path


def _run(scenario, text: str, out: Path):
    from ldpsim.evaluation.sweep.regression import make_baseline
    from ldpsim.evaluation.sweep.runner import run_sweep
    from ldpsim.evaluation.sweep.store import RunStore
    run_sweep(scenario, text, out, serial=True, progress=False)
    return make_baseline(scenario, RunStore(out).read("summary"))


def run(args) -> int:
    from ldpsim.evaluation.scenario.grid import load_scenario
    from ldpsim.evaluation.sweep.regression import compare, format_check, read_baseline, write_baseline
    from ldpsim.runtime.runfolder import make_out_folder
    from ldpsim.scenarios.catalog import resolve
    args.baseline = _baseline_path(args.baseline, args.update_baseline)
    try:
        path = resolve(args.scenario)
        scenario = load_scenario(path)
        if args.seed is not None:
            scenario = dataclasses.replace(scenario, seed=args.seed)
        baseline = None if args.update_baseline else read_baseline(args.baseline)
    except (ScenarioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError:
        print(f"error: no baseline {args.baseline} (create it with --update-baseline)", file=sys.stderr)
        return 2
    if args.out and any(make_out_folder(args.out).iterdir()):
        print(f"error: --out {args.out} is not empty (a check always runs afresh)", file=sys.stderr)
        return 2
    text = path.read_text(encoding="utf-8")
    start = time.perf_counter()
    if args.out:
        current = _run(scenario, text, Path(args.out))
    else:
        with tempfile.TemporaryDirectory(prefix="ldpsim-check-") as tmp:
            current = _run(scenario, text, Path(tmp))
    elapsed = time.perf_counter() - start
    n_cells = len({e["cell_id"] for e in current["entries"]})
    print(f"{scenario.name}: {n_cells} cells × {scenario.repeats} repeats, seed {scenario.seed}, "
          f"run serially in {elapsed:.1f} s")
    if args.update_baseline:
        print(f"wrote {write_baseline(args.baseline, current)} ({len(current['entries'])} rows)")
        return 0
    for what in ("fingerprint", "ldpsim_version", "root_entropy"):
        if baseline.get(what) != current[what]:
            print(f"note: {what} differs: baseline {baseline.get(what)}, now {current[what]}")
    result = compare(baseline, current, args.alpha)
    print(f"baseline {args.baseline}")
    print(format_check(result))
    return 0 if result.passed else 1
