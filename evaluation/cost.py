"""Cost before spending it: the plan of a run or sweep, its memory and size estimates, and the limits.

A run or sweep is refused *before* anything starts (``CostError``, a ``ValueError``: exit 2) when its
estimate cannot fit this machine, with the estimate and the key to change. ``--dry-run`` prints the
same plan without running.

Memory of a deployment run (``ldpsim run``): :data:`RUN_BASE_BYTES` plus :data:`RUN_BYTES_PER_ITEM` per
item in every process, :data:`RUN_BYTES_PER_DEVICE_DAY` per device-day (bundles, ledger, truth and the
reports read back), and per simulated day :data:`RUN_BYTES_PER_DAY` plus :data:`RUN_BYTES_PER_DAY_ITEM` per
item and :data:`RUN_BYTES_PER_DAY_WORD` per word in every shard and the merged result. Each constant is a
slope of peak RSS measured by :mod:`ldpsim.scenarios.studies.bench.cost_calibration` (``ldpsim bench
--calibrate``: fresh processes, one worker, one dimension grown at a time, on
a 2-core Linux machine with Python 3.11 and numpy 2) times a margin of 1.5 (``MARGIN`` there).

A sweep cell holds its workload's counts, ``repeats × D`` estimates and the mechanism's state (a
``k × m`` sketch); the reports path perturbs users in batches, but beyond :data:`MAX_REPORT_USERS`
users per cell it is refused (numpy's hypergeometric sampler stops at 10⁹, and at ~10⁷ users/s it
would take minutes per repeat): use ``path = "direct"``. Grids beyond :data:`MAX_CELLS` cells are
refused before any cell is built (counting is a product of list lengths).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ldpsim.mechanisms._validation import machine_memory
from ldpsim.runtime.errors import InputError

#: per process: measured 356 MiB peak RSS of the keyboard scenario at 2 000 devices × 4 days (imports, plots,
#: report; 256 MiB for the one-use-case calibration scenario), ×1.5
RUN_BASE_BYTES = 534 * 2**20
#: per device-day: measured 142 B (keyboard, 4 000 → 16 000 devices × 12 + 2 days: 497 → 521 MB) and 127 B
#: (calibration scenario, 10 000 → 60 000 devices × 3 days; 171 B between its last two runs), ×1.5 of 171 B
RUN_BYTES_PER_DEVICE_DAY = 260
#: per item, in every process (the workload's items and weights, the mechanism's tables): measured 319 B
#: (slope over 1 000 → 100 000 items at 2 and 8 days, less the per-item-day part), ×1.5
RUN_BYTES_PER_ITEM = 480
#: per simulated day: measured 0.69 MB (slope over 2 → 16 days at 500 devices, less its items and
#: devices), ×1.5 ≈ 1 MiB
RUN_BYTES_PER_DAY = 2**20
#: per simulated day and item, in every shard and the merged result (the day's true counts, aggregates and
#: estimates): measured 456 B (the per-item slope grows from 1 686 B at 2 days to 4 419 B at 8), ×1.5
RUN_BYTES_PER_DAY_ITEM = 690
#: per simulated day and word of the words use case: measured at most 248 B (743 B per word over 2 000 →
#: 20 000 words at 2 + 1 days, all counted as per day), ×1.5
RUN_BYTES_PER_DAY_WORD = 375
#: bytes a categorical workload holds per item before any run or cell: measured 145 B (tracemalloc, reading a
#: deployment's workload of 10⁵ → 10⁶ items: items and weights as Python tuples), ×1.5
WORKLOAD_BYTES_PER_ITEM = 220
#: largest number of cells in a sweep grid
MAX_CELLS = 100_000
#: the most CPU time a study command (``discover``, ``trust --compare``) starts, in seconds: one hour
MAX_STUDY_SECONDS = 3600
#: CPU seconds of one seed of a ``[discovery_days]`` study per protocol and simulated day: measured 0.036 s
#: (the shipped ``discovery_days``, 8 protocols × 14 days: 12.2 s of CPU at 1 seed, 20.1 s at 3), ×1.5
DISCOVERY_SECONDS_PER_PROTOCOL_DAY = 0.054
#: CPU seconds of a trust comparison per ε: 12.4 s plus 0.072 s per day of the run, measured on the keyboard
#: fleet (3 000 devices, 2 001 words; 7 models with their discovery designs: 14.6 s at 30 days, 34.1 s at
#: 300), each ×1.5
TRUST_SECONDS_PER_EPSILON = 18.6
TRUST_SECONDS_PER_EPSILON_DAY = 0.11
#: bytes per day of the run and word of a trust comparison's discovery (the words' shares day by day):
#: measured 7.8 B (traced peak 74 → 78 MiB from 30 → 300 days over the keyboard's 2 002 words), ×1.5
TRUST_BYTES_PER_DAY_WORD = 12
#: largest n × repeats per cell on the reports path
MAX_REPORT_USERS = 10**8
#: CPU nanoseconds per device-day of the trend designs run device by device (``ldpsim trends --engine devices``),
#: measured at T = 90 over 4·10⁵ devices in batches of 2¹⁵ (one process, 2-core Linux, numpy 2): drawing the
#: histories 7.4 ns; fresh RR 3.3 ns; memoized RR ≤ 1 ns; a Gaussian counter 8 ns per noisy coordinate per device
#: (m = T coordinates: 8 ns per device-day); fresh daily Skellam 14 ns; a Skellam tree or square-root counter (m = T
#: coordinates, two Poisson draws each) as fresh daily Skellam (measured side by side: 20.5–20.9 ns against 20.8 on a
#: loaded machine); THRESH, which draws its own histories and runs in rounds, 10.6 ns in all
TREND_NS_PER_DEVICE_DAY = {"histories": 7.4, "fresh RR": 3.3, "memoized RR": 1.0, "counter": 8.0, "Skellam": 14.0,
                           "Skellam counter": 14.0, "THRESH": 10.6}
#: the whole command's CPU time (every process: this one, the Dask workers) over the sum of those parts: measured
#: 552 CPU-s for ``ldpsim trends --engine devices --workers 2 --devices 10000000 --replicates 1`` (1.8·10⁹
#: device-days, 307 ns each, against the parts' 84 ns: the server, Dask, the designs' calibration, and a machine
#: loaded 8–19 on its 2 cores), rounded up
TREND_CPU_MARGIN = 3.7
#: bytes per device-day of a batch of devices privatized together: measured 17 B (peak RSS over a 3·10⁵-device
#: block, batches of 2¹⁷ devices × 90 days, all nine designs), ×1.5
TREND_BATCH_BYTES_PER_DEVICE_DAY = 26
#: THRESH's devices keep their state between rounds: per device T bytes of history, J local counts of 2 bytes and
#: 4 bytes of votes and last count (≤ 1.4 B per device-day at 6-day epochs, from the arrays' sizes), ×1.5; and each
#: block's round holds its history twice while it is drawn, plus about 40 B per device of one round's draws
TREND_THRESH_BYTES_PER_DEVICE_DAY = 2.1


class CostError(InputError):
    """A run or sweep that cannot fit this machine (or the documented limits): says the estimate and the key."""


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**27 else f"{n / 2**20:.0f} MiB"


def memory_budget() -> int:
    """The memory a run may plan to use: 80 % of this machine's physical memory."""
    return int(0.8 * machine_memory())


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 5400 else f"{seconds / 60:,.0f} min" if seconds >= 90 else \
        f"{seconds:.0f} s"


@dataclass
class Plan:
    """What will run: lines for ``--dry-run``, the peak-memory estimate in bytes and, for a study command, the
    CPU-time estimate in seconds."""

    lines: list = field(default_factory=list)
    memory_bytes: int = 0
    seconds: float | None = None

    def describe(self) -> str:
        cpu = [] if self.seconds is None else \
            [f"estimated CPU time: {_duration(self.seconds)} (a study command starts at most {_duration(MAX_STUDY_SECONDS)})"]
        return "\n".join([*self.lines, *cpu, f"estimated peak memory: {_gib(self.memory_bytes)} "
                                              f"(this machine: {_gib(machine_memory())}, budget {_gib(memory_budget())})"])


def _check_study(plan: Plan, where: str, fits) -> Plan:
    """Raise :class:`CostError` when a study's ``plan`` exceeds :data:`MAX_STUDY_SECONDS` or the memory budget;
    ``fits(seconds, memory)`` says what would fit (the largest size, and the option to change)."""
    budget = memory_budget()
    if plan.seconds > MAX_STUDY_SECONDS or plan.memory_bytes > budget:
        over = f"about {_duration(plan.seconds)} of CPU time, more than the {_duration(MAX_STUDY_SECONDS)} a study " \
               "command starts" if plan.seconds > MAX_STUDY_SECONDS else \
               f"about {_gib(plan.memory_bytes)}, more than this machine's budget {_gib(budget)}"
        raise CostError(f"{where} needs {over} ({'; '.join(plan.lines)}); {fits(MAX_STUDY_SECONDS, budget)}")
    return plan


def discovery_plan(n_protocols: int, n_days: int, seeds: int, where="discovery_days") -> Plan:
    """Plan of a ``[discovery_days]`` study (``ldpsim discover``): its CPU time,
    :data:`DISCOVERY_SECONDS_PER_PROTOCOL_DAY` per seed, protocol and day, after the process's start
    (:data:`RUN_BASE_BYTES`); raise :class:`CostError` beyond :data:`MAX_STUDY_SECONDS`."""
    per_seed = DISCOVERY_SECONDS_PER_PROTOCOL_DAY * n_protocols * n_days
    plan = Plan([f"{seeds:,} seed(s) × {n_protocols} protocol(s) × {n_days:,} days"], RUN_BASE_BYTES, per_seed * seeds)
    return _check_study(plan, where, lambda s, _: f"at most about {int(s // per_seed):,} seeds fit (change --seeds "
                                                 "or the file's seeds, n_days or protocols)")


def trust_comparison_plan(fleet, epsilons: int, models: int, discovery: bool, where="the trust comparison") -> Plan:
    """Plan of a trust-model comparison (``ldpsim trust --compare``) on ``fleet``
    (:class:`~ldpsim.scenarios.studies.trust.trust_fleet.Fleet`) at ``epsilons`` targets of ``models`` models: per ε
    (measured with all seven models, and used for fewer) :data:`TRUST_SECONDS_PER_EPSILON` plus :data:`TRUST_SECONDS_PER_EPSILON_DAY` per day of the run; memory
    :data:`RUN_BASE_BYTES` plus, with discovery on a fleet with words, :data:`TRUST_BYTES_PER_DAY_WORD` per day
    and word. Raise :class:`CostError` beyond :data:`MAX_STUDY_SECONDS` or the memory budget."""
    words = len(fleet.words) + 1 if discovery and fleet.words is not None else 0
    per_day = TRUST_BYTES_PER_DAY_WORD * words
    plan = Plan([f"{epsilons} ε target(s) × {models} trust model(s) over {fleet.days:,} days on {fleet.name}: "
                 f"{fleet.devices:,} devices a day, {fleet.counts.size:,} items"
                 + (f", discovery over {words - 1:,} words" if words else "")],
                RUN_BASE_BYTES + per_day * fleet.days,
                epsilons * (TRUST_SECONDS_PER_EPSILON + TRUST_SECONDS_PER_EPSILON_DAY * fleet.days))

    def fits(seconds, memory):
        by_time = (seconds / epsilons - TRUST_SECONDS_PER_EPSILON) / TRUST_SECONDS_PER_EPSILON_DAY
        by_memory = (memory - RUN_BASE_BYTES) / per_day if per_day else by_time
        return f"at {epsilons} ε at most about {max(0, int(min(by_time, by_memory))):,} days fit (change --days or --epsilons)"
    return _check_study(plan, where, fits)


def _day_bytes(cfg) -> int:
    """Bytes per simulated day in one copy of the truth and estimates (:data:`RUN_BYTES_PER_DAY_ITEM`)."""
    return RUN_BYTES_PER_DAY_ITEM * len(cfg.items) + RUN_BYTES_PER_DAY_WORD * len(cfg.words or ()) + RUN_BYTES_PER_DAY


def deployment_plan(cfg, workers: int, where="scenario") -> Plan:
    """Plan of ``ldpsim run``; raise :class:`CostError` when it cannot fit this machine.

    The estimate: :data:`RUN_BASE_BYTES` per process, :data:`RUN_BYTES_PER_DEVICE_DAY` per device-day, and
    per simulated day the truth and estimates of every item and word (:func:`_day_bytes`) in every shard and
    the merged result.

    Parameters
    ----------
    cfg : DeploymentConfig
    workers : int
        Worker processes (shards).
    where : str or path
        The scenario's name in messages.
    """
    shards = max(1, min(int(workers), cfg.n_blocks))
    days = cfg.n_days + cfg.drain_days
    device_days = cfg.n_devices * days
    base = (RUN_BASE_BYTES + RUN_BYTES_PER_ITEM * len(cfg.items)) * (shards + (shards > 1))
    per_day = _day_bytes(cfg) * (shards + 1)
    memory = base + RUN_BYTES_PER_DEVICE_DAY * device_days + per_day * days
    plan = Plan([f"{cfg.n_devices:,} devices × {cfg.n_days} days (+{cfg.drain_days} drain days) = "
                 f"{device_days:,} device-days in {cfg.n_blocks} blocks, {shards} shard(s)/worker(s); "
                 f"use cases: {', '.join(uc.name for uc in cfg.use_cases)}"], memory)
    budget = memory_budget()
    _check_observer(cfg, budget, where)
    if memory > budget:
        fit_devices = max(0, (budget - base - per_day * days) // (RUN_BYTES_PER_DEVICE_DAY * days))
        fit_days = max(0, (budget - base) // (RUN_BYTES_PER_DEVICE_DAY * cfg.n_devices + per_day) - cfg.drain_days)
        raise CostError(f"{where}: [deployment] devices = {cfg.n_devices:,} × days = {cfg.n_days:,} needs about "
                        f"{_gib(memory)} ({RUN_BYTES_PER_DEVICE_DAY} B per device-day, {per_day:,} B per day for "
                        f"{len(cfg.items):,} items and {shards} shard(s)), more than this machine's budget "
                        f"{_gib(budget)}; at {cfg.n_days:,} days at most about {fit_devices:,} devices fit, and at "
                        f"{cfg.n_devices:,} devices at most about {fit_days:,} days (change --devices / "
                        "[deployment] devices or --days / [deployment] days)")
    return plan


def _check_observer(cfg, budget: int, where) -> None:
    """Refuse a run whose observer tap would build a d × d transition matrix that cannot fit (8 d² bytes; found
    by the cost calibration: a GRR run over 10⁵ items asked for 74.5 GiB and failed)."""
    from ldpsim.mechanisms import MECHANISMS
    if not cfg.adversary_devices:
        return
    d = len(cfg.items)
    for uc in cfg.use_cases:
        if uc.kind == "event" and hasattr(MECHANISMS.get(uc.mechanism), "transition_matrix") and 8 * d * d > budget:
            raise CostError(f"{where}: the observer of [deployment] adversary_devices = {cfg.adversary_devices:,} "
                            f"builds the {d:,} × {d:,} transition matrix of use_case.{uc.name} ({uc.mechanism}): "
                            f"about {_gib(8 * d * d)}, more than this machine's budget {_gib(budget)}; set "
                            f"adversary_devices = 0, or use at most about {math.isqrt(budget // 8):,} items")


def check_workload_size(params: dict, where, table: str = "workload") -> None:
    """Refuse a categorical workload whose items cannot fit, before it is built (:data:`WORKLOAD_BYTES_PER_ITEM`).

    Parameters
    ----------
    params : dict
        The workload's parameters (``domain_size`` or ``top`` counts its items).
    where : str or path
        The scenario file, in messages.
    table : str
        The table the parameters come from.
    """
    budget = memory_budget()
    for key in ("domain_size", "top"):
        d = params.get(key)
        if isinstance(d, int) and not isinstance(d, bool) and WORKLOAD_BYTES_PER_ITEM * d > budget:
            raise CostError(f"{where}: [{table}] {key} = {d:,} needs about {_gib(WORKLOAD_BYTES_PER_ITEM * d)} for "
                            f"its items alone ({WORKLOAD_BYTES_PER_ITEM} B per item), more than this machine's budget "
                            f"{_gib(budget)}; at most about {budget // WORKLOAD_BYTES_PER_ITEM:,} items fit")


def count_cells(scenario) -> int:
    """Number of cells of a sweep scenario, without building any: workload grid × shared grid × Σ own grids."""
    sizes = [len(v) for v in scenario.grid.values()]
    own = sum(math.prod(len(v) for v in m["grid"].values()) for m in scenario.mechanisms)
    return math.prod(sizes) * own


def check_grid_size(scenario) -> int:
    """The cell count; raise :class:`CostError` beyond :data:`MAX_CELLS`."""
    n = count_cells(scenario)
    if n > MAX_CELLS:
        dims = ", ".join(f"{k}: {len(v)}" for k, v in scenario.grid.items())
        raise CostError(f"{scenario.file}: [grid] expands to {n:,} cells (grid sizes {dims or '-'}; times "
                        f"the mechanisms' own grids), more than the {MAX_CELLS:,} a sweep accepts; "
                        "shorten the [grid] lists or split the scenario")
    return n


def cell_memory(cell, domain_size: int) -> int:
    """Estimated peak bytes of one cell: estimates, counts and the mechanism's own state."""
    params = cell.params
    sketch = 8 * int(params.get("k", 0)) * int(params.get("m", 0)) * 3
    return 8 * domain_size * (cell.repeats + 4) + sketch + 64 * 2**20


def check_report_users(n: int, repeats: int, where, n_key: str, repeats_key: str, hint: str = "") -> None:
    """Raise :class:`CostError` when ``n × repeats`` users perturbed one by one exceed :data:`MAX_REPORT_USERS`.

    Parameters
    ----------
    n, repeats : int
        Users per repeat and repeats.
    where : str or path
        The scenario file or function, in messages.
    n_key, repeats_key : str
        The option or key of each, in messages.
    hint : str
        Another way out, added to the message.
    """
    if n * repeats > MAX_REPORT_USERS:
        raise CostError(f"{where}: {n_key} = {n:,} × {repeats_key} = {repeats:,} users perturbed one by one exceeds "
                        f"{MAX_REPORT_USERS:,}; {hint}lower {n_key} or {repeats_key} (at {n:,} users at most "
                        f"{max(MAX_REPORT_USERS // n, 0):,} repeats)")


def sweep_plan(scenario, cells, workers: int) -> Plan:
    """Plan of ``ldpsim sweep``; raise :class:`CostError` for cells that cannot fit or run."""
    if scenario.path == "reports":
        n = max(int(dict(c.workload_items)["n"]) for c in cells) if cells else 0
        check_report_users(n, scenario.repeats, scenario.file, "[workload] n", "[scenario] repeats",
                           'on path = "reports" every user is perturbed one by one: use path = "direct" or ')
    domain = {c.workload_index: int(dict(c.workload_items).get("domain_size", 0) or 0) for c in cells}
    per_cell = max((cell_memory(c, domain.get(c.workload_index, 0) or 10_000) for c in cells), default=0)
    memory = per_cell * max(1, workers) + 300 * 2**20
    if memory > memory_budget():
        raise CostError(f"{scenario.file}: the largest cell needs about {_gib(per_cell)} × {workers} worker(s) = "
                        f"{_gib(memory)}, more than this machine's budget {_gib(memory_budget())}; "
                        "lower --workers, k × m, [workload] domain_size or [scenario] repeats")
    mechs = sorted({c.mechanism for c in cells})
    lines = [f"{len(cells):,} cells ({', '.join(mechs)}) × {scenario.repeats} repeats, path {scenario.path}, "
             f"seed {scenario.seed}, {workers} worker(s)", f"estimated per cell: {_gib(per_cell)}"]
    wl = scenario.workload
    if wl.get("name") == "vocabulary":  # read once already: the cache answers
        from ldpsim.evaluation.workloads.vocabulary import load_vocabulary
        options = {k: wl[k] for k in ("format", "lowercase", "top") if k in wl}
        lines.append(load_vocabulary(wl["vocabulary"], **options).describe(6))
    return Plan(lines, memory)


def trend_devices_plan(devices: int, days: int, replicates: int, costs, workers: int, batch: int, block: int,
                       fleets: int = 1, where="the devices engine") -> Plan:
    """Plan of the trend designs run device by device (:mod:`ldpsim.scenarios.studies.trends.device_fleet`).

    CPU: ``fleets`` × ``replicates`` fleets of ``devices`` × ``days``, each drawing its histories and
    privatizing them by every design of ``costs`` (keys of :data:`TREND_NS_PER_DEVICE_DAY`), times
    :data:`TREND_CPU_MARGIN`. Memory: :data:`RUN_BASE_BYTES` per process (the workers and this one), a batch
    of :data:`TREND_BATCH_BYTES_PER_DEVICE_DAY` per device-day in each worker, and with THRESH its devices'
    state (:data:`TREND_THRESH_BYTES_PER_DEVICE_DAY`) and a ``block``'s round in each worker. Raise
    :class:`CostError` beyond :data:`MAX_STUDY_SECONDS` of CPU or the memory budget.
    """
    ns = TREND_NS_PER_DEVICE_DAY["histories"] + sum(TREND_NS_PER_DEVICE_DAY[c] for c in costs)
    per_run = devices * days * TREND_CPU_MARGIN * ns * 1e-9 * fleets
    runs = fleets * replicates
    processes = max(1, workers) + (workers > 1)
    each = max(1, workers)
    memory = RUN_BASE_BYTES * processes + each * TREND_BATCH_BYTES_PER_DEVICE_DAY * min(batch, devices) * days
    if "THRESH" in costs:
        memory += int(TREND_THRESH_BYTES_PER_DEVICE_DAY * devices * days) + each * min(block, devices) * (2 * days + 40)
    plan = Plan([f"{runs:,} fleet run(s) of {devices:,} devices × {days:,} days = {runs * devices * days:,} "
                 f"device-days, {len(costs)} design path(s), {each} worker(s), batches of {min(batch, devices):,} "
                 "devices"],
                memory, per_run * replicates)
    return _check_study(plan, where, lambda s, _: f"at most about {int(s // per_run):,} replicate(s) of "
                                                  f"{devices:,} devices fit (change --replicates or --devices)")
