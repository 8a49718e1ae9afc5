"""Where a long job's time goes: the wall-clock and CPU seconds of each of its phases, in order.

A job opens one :class:`PhaseClock` and runs each phase inside ``with clock.phase("name"):``; the result
object carries ``clock.times`` and the command line prints :func:`describe_phases` after the result, so a
user sees which part of a run took the time (the simulation, or the work after it).

CPU seconds are this process's (all its threads; ``time.process_time``): work done in Dask worker
processes shows as wall-clock time only.

>>> clock = PhaseClock()
>>> with clock.phase("nothing"):
...     pass
>>> [t.name for t in clock.times]
['nothing']
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class PhaseTime:
    """One phase: its name, wall-clock seconds and CPU seconds of this process, and a note (why it did little)."""

    name: str
    wall_s: float
    cpu_s: float
    note: str = ""


class PhaseClock:
    """Times the phases of one job (``with clock.phase(name): ...``) into :attr:`times`."""

    def __init__(self) -> None:
        self._times: list[PhaseTime] = []

    @property
    def times(self) -> tuple[PhaseTime, ...]:
        """The phases timed so far, in the order they ran."""
        return tuple(self._times)

    @contextmanager
    def phase(self, name: str, note: str = ""):
        """Time the block as the phase ``name`` (recorded even when the block raises), with ``note`` printed
        beside its time."""
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self._times.append(PhaseTime(name, time.perf_counter() - wall, time.process_time() - cpu, note))


def describe_phases(times) -> str:
    """One line per phase, ``name  wall s  (CPU s)`` and its note, and the total: what ``ldpsim run`` prints."""
    if not times:
        return ""
    width = max(len(t.name) for t in times)
    lines = ["time per phase (wall clock; CPU of this process):"]
    lines += [f"  {t.name:<{width}}  {t.wall_s:7.1f} s  (CPU {t.cpu_s:.1f} s)" + (f"  {t.note}" if t.note else "")
              for t in times]
    lines.append(f"  {'total':<{width}}  {sum(t.wall_s for t in times):7.1f} s  "
                 f"(CPU {sum(t.cpu_s for t in times):.1f} s)")
    return "\n".join(lines)
