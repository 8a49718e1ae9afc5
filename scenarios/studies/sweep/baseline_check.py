"""A regression check as one library call: rerun a small sweep serially and compare it with a baseline.

:func:`check_against_baseline` is what ``ldpsim check`` and ``ldpsim.check(...)`` both call; the
statistics (a z-test per (cell, metric), Bonferroni over them) are in
:mod:`ldpsim.scenarios.studies.sweep.regression`.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ldpsim.scenarios.studies.scenario.grid import Scenario
from ldpsim.scenarios.studies.sweep.regression import (CheckResult, compare, format_check, make_baseline, read_baseline,
                                                       write_baseline)
from ldpsim.scenarios.studies.sweep.runner import run_sweep
from ldpsim.scenarios.studies.sweep.store import RunStore
from ldpsim.runtime.errors import InputError


@dataclass(frozen=True)
class CheckRun:
    """What :func:`check_against_baseline` returns.

    Attributes
    ----------
    name : str
        The scenario's name.
    baseline : Path
        The baseline file compared with (or written).
    n_cells, repeats, seed : int
        The rerun's size and root seed.
    seconds : float
        Wall time of the rerun.
    result : CheckResult or None
        The comparison (``None`` when the baseline was written instead).
    notes : list of str
        Differences of the baseline's fingerprint, version or root seed from this run.
    """

    name: str
    baseline: Path
    n_cells: int
    repeats: int
    seed: int
    seconds: float
    result: CheckResult | None
    notes: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every (cell, metric) within tolerance (a written baseline passes)."""
        return self.result is None or self.result.passed

    def describe(self) -> str:
        """The lines ``ldpsim check`` prints."""
        lines = [f"{self.name}: {self.n_cells} cells × {self.repeats} repeats, seed {self.seed}, "
                 f"run serially in {self.seconds:.1f} s"]
        if self.result is None:
            return "\n".join(lines + [f"wrote {self.baseline}"])
        return "\n".join(lines + self.notes + [f"baseline {self.baseline}", format_check(self.result)])


def _rerun(scenario: Scenario, text: str, out: Path) -> dict:
    run_sweep(scenario, text, out, serial=True)
    return make_baseline(scenario, RunStore(out).read("summary"))


def check_against_baseline(scenario: Scenario, scenario_text: str, baseline, *, update: bool = False,
                           alpha: float = 0.001, out=None) -> CheckRun:
    """Rerun ``scenario`` in this process and compare its metrics with ``baseline`` (or write it).

    Parameters
    ----------
    scenario : Scenario
        A small sweep scenario (it runs serially).
    scenario_text : str
        The scenario file's text, stored in the run folder.
    baseline : str or Path
        The baseline JSON file to compare with, or to write when ``update``.
    update : bool
        Write ``baseline`` from this run instead of comparing.
    alpha : float
        Family-wise false-alarm rate in (0, 1), Bonferroni over the compared metrics.
    out : str or Path, optional
        Keep the rerun in this folder (it must be new or empty); default a temporary folder.

    Returns
    -------
    CheckRun

    Raises
    ------
    InputError
        ``alpha`` outside (0, 1), a missing baseline, or a non-empty ``out``.
    """
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and 0 < alpha < 1):
        raise InputError(f"check: alpha (--alpha) must be a number strictly between 0 and 1; got {alpha!r}")
    baseline = Path(baseline)
    try:
        stored = None if update else read_baseline(baseline)
    except FileNotFoundError:
        raise InputError(f"check: no baseline {baseline} (create it with --update-baseline)") from None
    except OSError as exc:  # a folder, a link to one, no permission
        raise InputError(f"check: --baseline {baseline} cannot be read as a file ({exc.strerror})") from None
    from ldpsim.runtime.runfolder import make_out_folder
    if out is not None and any(make_out_folder(out).iterdir()):  # names --out when it cannot be a folder
        raise InputError(f"check: --out {out} is not empty (a check always runs afresh)")
    start = time.perf_counter()
    if out is not None:
        current = _rerun(scenario, scenario_text, Path(out))
    else:
        with tempfile.TemporaryDirectory(prefix="ldpsim-check-") as tmp:
            current = _rerun(scenario, scenario_text, Path(tmp))
    seconds = time.perf_counter() - start
    n_cells = len({e["cell_id"] for e in current["entries"]})
    if update:
        written = write_baseline(baseline, current)
        return CheckRun(scenario.name, written, n_cells, scenario.repeats, scenario.seed, seconds, None)
    notes = [f"note: {what} differs: baseline {stored.get(what)}, now {current[what]}"
             for what in ("fingerprint", "ldpsim_version", "root_entropy") if stored.get(what) != current[what]]
    return CheckRun(scenario.name, baseline, n_cells, scenario.repeats, scenario.seed, seconds,
                    compare(stored, current, alpha), notes)
